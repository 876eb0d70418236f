// `myriad explain [SECTION]`: every scenario key with its type, unit, default
// and meaning, straight from the schema the loader uses.
#include <fmt/format.h>

#include <memory>
#include <ostream>

#include "models/scenario/scenario_schema.hpp"
#include "tools/cli/explain_options.hpp"
#include "tools/cli/explain_presets.hpp"

namespace myriad::cli {
namespace {

using models::scenario::FieldDoc;
using models::scenario::SectionDoc;

// Words of `text` folded into lines of at most `width` characters.
std::vector<std::string> wrap(const std::string& text, std::size_t width) {
  std::vector<std::string> lines;
  std::string line;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(line);
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string type_text(const FieldDoc& f) {
  return f.unit.empty() ? f.type : fmt::format("{} [{}]", f.type, f.unit);
}

void print_section(const SectionDoc& d, std::ostream& out) {
  out << fmt::format("{}{}\n", d.path.empty() ? "(top level)" : d.path,
                     d.is_list ? "  (a list; each item has these keys)" : "");
  for (const auto& l : wrap(d.help, 96)) out << "  " << l << '\n';
  if (!d.fields.empty()) {
    std::size_t key_w = 3;
    for (const auto& f : d.fields) key_w = std::max(key_w, f.key.size());
    out << '\n';
    for (const auto& f : d.fields) {
      out << fmt::format("  {:<{}}  {}\n", f.key, key_w, type_text(f));
      const std::string pad(key_w + 4, ' ');
      out << pad << "default: " << f.default_text << '\n';
      for (const auto& l : wrap(f.help, 92 - key_w)) out << pad << l << '\n';
    }
  }
  out << '\n';
  for (const auto& s : d.sections) print_section(s, out);
}

const SectionDoc* find_section(const SectionDoc& d, const std::string& path) {
  if (d.path == path || (d.is_list && d.path == path + "[]")) return &d;
  for (const auto& s : d.sections) {
    if (const auto* found = find_section(s, path)) return found;
  }
  return nullptr;
}

void collect_paths(const SectionDoc& d, std::vector<std::string>& out) {
  const std::string base = d.is_list ? d.path.substr(0, d.path.size() - 2) : d.path;
  if (!base.empty()) out.push_back(base);
  for (const auto& f : d.fields) out.push_back(base.empty() ? f.key : base + "." + f.key);
  for (const auto& s : d.sections) collect_paths(s, out);
}

// Every section's path, comma-separated, lists without their "[]".
void collect_sections(const SectionDoc& d, std::string& out) {
  const std::string base = d.is_list ? d.path.substr(0, d.path.size() - 2) : d.path;
  if (!base.empty()) out += (out.empty() ? "" : ", ") + base;
  for (const auto& s : d.sections) collect_sections(s, out);
}

// "faults.processes[0].rate" names the same key as "faults.processes.rate".
std::string without_indices(const std::string& path) {
  std::string out;
  bool in_index = false;
  for (char c : path) {
    if (c == '[') in_index = true;
    if (!in_index) out += c;
    if (c == ']') in_index = false;
  }
  return out;
}

}  // namespace

int run_explain(const std::string& requested, Streams io, const Environment& env) {
  if (requested == "presets") {
    io.out << presets_text(env.preset_path, env.profile_dir);
    return kExitOk;
  }
  if (requested == "profiles") {
    io.out << profiles_text(env.profile_dir);
    return kExitOk;
  }
  const std::string section = without_indices(requested);
  const SectionDoc root = models::scenario::scenario_doc();
  if (section.empty()) {
    io.out << "Scenario keys. Values with units take strings such as \"400Gbps\", \"50GB/s\", "
              "\"80GiB\", \"2us\", \"312TFLOPS\";\ninside Myriad they are SI (s, B, B/s, "
              "FLOP/s). Sections cluster and model, and cluster.gpu, accept\n`preset: NAME` "
              "(a file under scenarios/clusters/, models/, hardware/) with keys that override "
              "it.\n\n";
    print_section(root, io.out);
    return kExitOk;
  }
  if (const auto* d = find_section(root, section)) {
    print_section(*d, io.out);
    return kExitOk;
  }
  // A single key: "parallelism.tp".
  const auto dot = section.rfind('.');
  if (dot != std::string::npos) {
    if (const auto* d = find_section(root, section.substr(0, dot))) {
      for (const auto& f : d->fields) {
        if (f.key == section.substr(dot + 1)) {
          io.out << fmt::format("{}  {}\n  default: {}\n", section, type_text(f), f.default_text);
          for (const auto& l : wrap(f.help, 96)) io.out << "  " << l << '\n';
          return kExitOk;
        }
      }
    }
  }
  std::vector<std::string> paths;
  collect_paths(root, paths);
  std::string sections;
  collect_sections(root, sections);
  io.err << fmt::format(
      "myriad explain: error: no section or key '{}'{}; sections: {} (and the listings presets, "
      "profiles)\n",
      section, models::scenario::did_you_mean(section, paths), sections);
  return kExitBadInput;
}

}  // namespace myriad::cli
