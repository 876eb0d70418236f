#include "models/scenario/resolved.hpp"

#include <fmt/format.h>

namespace myriad::models::scenario {
namespace {

bool needs_quotes(const std::string& s) {
  // Words YAML reads as null: quoted, a text that says "null" reloads as text.
  if (s.empty() || s == "null" || s == "Null" || s == "NULL" || s == "~") return true;
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
    if (c == ':' || c == '#' || c == '\'' || c == '"' || c == '{' || c == '}' || c == '[' ||
        c == ']' || c == ',' || c == '&' || c == '*' || c == '!' || c == '|' || c == '>' ||
        c == '%' || c == '@' || c == '`' || c == '\n') {
      return true;
    }
  }
  return s.front() == ' ' || s.back() == ' ' || s.front() == '-';
}

std::string quoted(const std::string& s) {
  if (!needs_quotes(s)) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));  // YAML's escape
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string comment(const Resolved& r, bool origins) {
  std::string c;
  if (!r.human.empty()) c = r.human;
  if (origins) {
    if (!c.empty()) c += "; ";
    c += "from " + r.origin.str();
  }
  return c.empty() ? "" : "  # " + c;
}

void emit(const Resolved& r, int indent, bool list_item, bool origins, std::string& out) {
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  const std::string lead = list_item ? pad + "- " : pad;
  const std::string label = r.key.empty() ? "" : r.key + ":";
  switch (r.kind) {
    case Resolved::Kind::scalar:
      out += fmt::format("{}{}{}{}\n", lead, label.empty() ? "" : label + " ", quoted(r.text),
                         comment(r, origins));
      return;
    case Resolved::Kind::map: {
      int child_indent = indent + 2;
      bool first = true;
      if (!label.empty()) {
        out += lead + label + (r.children.empty() ? " {}" : "") + "\n";
      } else if (list_item) {
        // First child goes on the "- " line.
        for (const auto& c : r.children) {
          std::string line;
          emit(c, 0, false, origins, line);
          if (first) {
            out += lead + line.substr(0, line.size());
            first = false;
          } else {
            std::string indented;
            std::size_t pos = 0;
            while (pos < line.size()) {
              const std::size_t nl = line.find('\n', pos);
              indented += pad + "  " + line.substr(pos, nl - pos + 1);
              pos = nl + 1;
            }
            out += indented;
          }
        }
        return;
      } else {
        child_indent = indent;
      }
      for (const auto& c : r.children) emit(c, child_indent, false, origins, out);
      return;
    }
    case Resolved::Kind::list:
      out += lead + label + (r.children.empty() ? " []" : "") + "\n";
      for (const auto& c : r.children) emit(c, indent + 2, true, origins, out);
      return;
  }
}

}  // namespace

std::string to_yaml(const Resolved& root, bool origins) {
  std::string out;
  emit(root, 0, false, origins, out);
  return out;
}

nlohmann::json to_json(const Resolved& root) {
  switch (root.kind) {
    case Resolved::Kind::scalar:
      return root.json;
    case Resolved::Kind::map: {
      nlohmann::json j = nlohmann::json::object();
      for (const auto& c : root.children) j[c.key] = to_json(c);
      return j;
    }
    case Resolved::Kind::list: {
      nlohmann::json j = nlohmann::json::array();
      for (const auto& c : root.children) j.push_back(to_json(c));
      return j;
    }
  }
  return nullptr;
}

}  // namespace myriad::models::scenario
