#include "models/scenario/schema.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace myriad::models::scenario::schema_detail {

std::string join_path(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

std::string range_text(IntRange r) {
  const bool has_min = r.min != std::numeric_limits<std::int64_t>::min();
  // Limits at the storage type's end are not worth printing.
  const bool has_max = r.max < std::numeric_limits<int>::max();
  if (has_min && has_max) return fmt::format("in [{}, {}]", r.min, r.max);
  if (has_min) return fmt::format(">= {}", r.min);
  if (has_max) return fmt::format("<= {}", r.max);
  return "";
}

namespace {

bool expect_scalar(const ConfigNode& node, const std::string& what, const std::string& path,
                   ParseContext& ctx) {
  if (node.is_scalar()) return true;
  ctx.diagnostics.error(node.where(), path,
                        fmt::format("expected {}, found {}", what, node.describe()));
  return false;
}

}  // namespace

bool read_int(const ConfigNode& node, IntRange r, const std::string& path, ParseContext& ctx,
              std::int64_t& out) {
  const std::string what = fmt::format("an integer {}", range_text(r));
  if (!expect_scalar(node, what, path, ctx)) return false;
  const std::string& s = node.text();
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  // Out of range: both bounds named, the storage type's too.
  const std::string bounds = fmt::format("an integer in [{}, {}]", r.min, r.max);
  if (ec == std::errc::result_out_of_range) {
    ctx.diagnostics.error(node.where(), path, fmt::format("expected {}, found '{}'", bounds, s));
    return false;
  }
  if (ec != std::errc{} || ptr != s.data() + s.size() || s.empty()) {
    ctx.diagnostics.error(node.where(), path, fmt::format("expected {}, found '{}'", what, s));
    return false;
  }
  if (v < r.min || v > r.max) {
    ctx.diagnostics.error(node.where(), path,
                          fmt::format("expected {}, found {}", v > r.max ? bounds : what, v));
    return false;
  }
  out = v;
  return true;
}

bool read_bool(const ConfigNode& node, const std::string& path, ParseContext& ctx, bool& out) {
  if (!expect_scalar(node, "true or false", path, ctx)) return false;
  const std::string& s = node.text();
  if (s == "true" || s == "True" || s == "TRUE") {
    out = true;
    return true;
  }
  if (s == "false" || s == "False" || s == "FALSE") {
    out = false;
    return true;
  }
  ctx.diagnostics.error(node.where(), path, fmt::format("expected true or false, found '{}'", s));
  return false;
}

bool read_quantity(const ConfigNode& node, Dimension d, const std::string& path, ParseContext& ctx,
                   double& out) {
  if (!expect_scalar(node, std::string(dimension_name(d)), path, ctx)) return false;
  auto result = parse_quantity(node.text(), d);
  if (const auto* failure = std::get_if<ParseFailure>(&result)) {
    ctx.diagnostics.error(node.where(), path, failure->message);
    return false;
  }
  out = std::get<double>(result);
  return true;
}

bool read_numbers(const ConfigNode& node, const std::string& path, ParseContext& ctx,
                  std::vector<double>& out) {
  if (!node.is_list()) {
    ctx.diagnostics.error(
        node.where(), path,
        "expected a list of numbers, such as [0.4, 0.3, 0.3], found " + node.describe());
    return false;
  }
  out.clear();
  bool ok = true;
  for (std::size_t i = 0; i < node.items().size(); ++i) {
    double v = 0;
    const bool read = read_quantity(node.items()[i], Dimension::count,
                                    path + "[" + std::to_string(i) + "]", ctx, v);
    ok = read && ok;
    out.push_back(v);
  }
  return ok;
}

bool read_ints(const ConfigNode& node, IntRange r, const std::string& path, ParseContext& ctx,
               std::vector<int>& out) {
  if (!node.is_list()) {
    ctx.diagnostics.error(
        node.where(), path,
        "expected a list of integers, such as [7, 8, 8, 7], found " + node.describe());
    return false;
  }
  out.clear();
  bool ok = true;
  for (std::size_t i = 0; i < node.items().size(); ++i) {
    std::int64_t v = 0;
    const bool read = read_int(node.items()[i], r, path + "[" + std::to_string(i) + "]", ctx, v);
    ok = read && ok;
    out.push_back(static_cast<int>(v));
  }
  return ok;
}

bool read_text(const ConfigNode& node, const std::string& path, ParseContext& ctx,
               std::string& out) {
  // YAML reads `a: b` as a mapping and `a, b` in brackets as a list: a text holding
  // them must be quoted, in a file as on the command line.
  if (!expect_scalar(node, "text (quote one that holds ': ' or starts with '[' or '{')", path,
                     ctx)) {
    return false;
  }
  out = node.text();
  return true;
}

bool read_choice(const ConfigNode& node, const std::vector<std::string>& names,
                 const std::string& path, ParseContext& ctx, std::size_t& index) {
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  if (!expect_scalar(node, "one of " + list, path, ctx)) return false;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == node.text()) {
      index = i;
      return true;
    }
  }
  ctx.diagnostics.error(node.where(), path,
                        fmt::format("expected one of {}, found '{}'{}", list, node.text(),
                                    did_you_mean(node.text(), names)));
  return false;
}

bool read_choices(const ConfigNode& node, const std::vector<std::string>& names,
                  const std::string& path, ParseContext& ctx, std::vector<std::size_t>& out) {
  if (!node.is_list()) {
    ctx.diagnostics.error(
        node.where(), path,
        fmt::format("expected a list such as [{}], found {}", names.front(), node.describe()));
    return false;
  }
  out.clear();
  bool ok = true;
  for (std::size_t i = 0; i < node.items().size(); ++i) {
    const std::string item = path + "[" + std::to_string(i) + "]";
    std::size_t index = 0;
    if (!read_choice(node.items()[i], names, item, ctx, index)) {
      ok = false;
      continue;
    }
    if (std::find(out.begin(), out.end(), index) != out.end()) {
      ctx.diagnostics.error(node.items()[i].where(), item,
                            fmt::format("'{}' is listed twice", names[index]));
      ok = false;
      continue;
    }
    out.push_back(index);
  }
  return ok;
}

Resolved scalar(const std::string& key, std::string text, std::string human, nlohmann::json json,
                const Origins& origins, const std::string& path) {
  Resolved r;
  r.key = key;
  if (human != text) r.human = std::move(human);
  r.text = std::move(text);
  r.json = std::move(json);
  const auto it = origins.find(path);
  r.origin = it == origins.end() ? derived_location() : it->second;
  return r;
}

}  // namespace myriad::models::scenario::schema_detail
