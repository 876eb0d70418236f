#include "models/scenario/overrides.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <stdexcept>

#include "models/scenario/text_file.hpp"

namespace myriad::models::scenario {
namespace {

// A problem with the override itself, reported where it was given.
struct OverrideError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    parts.push_back(path.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  for (const auto& part : parts) {
    const bool ok = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
    });
    if (!ok) {
      throw OverrideError(
          fmt::format("expected key.path=value with keys of letters, digits, _ and - "
                      "joined by dots, found key path '{}'",
                      printable(path)));
    }
  }
  return parts;
}

std::string joined(const std::vector<std::string>& parts, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += (i == 0 ? "" : ".") + parts[i];
  return out;
}

// Sets parts[i..] below `node` to `value`.
void set_below(ConfigNode& node, const std::vector<std::string>& parts, std::size_t i,
               const ConfigNode& value, const Location& where) {
  const std::string& part = parts[i];
  const bool last = i + 1 == parts.size();
  if (node.is_list()) {
    std::size_t index = 0;
    const char* end = part.data() + part.size();
    const auto [ptr, ec] = std::from_chars(part.data(), end, index);
    if (ec != std::errc{} || ptr != end || index >= node.items().size()) {
      throw OverrideError(
          fmt::format("'{}' is a list of {} item{}: expected an index from 0 to "
                      "{}, found '{}'",
                      joined(parts, i), node.items().size(), node.items().size() == 1 ? "" : "s",
                      node.items().empty() ? 0 : node.items().size() - 1, part));
    }
    if (last) {
      node.replace_item(index, value);
      return;
    }
    ConfigNode child = node.items()[index];
    set_below(child, parts, i + 1, value, where);
    node.replace_item(index, std::move(child));
    return;
  }
  if (node.is_null()) node = ConfigNode::map(where);
  if (!node.is_map()) {
    throw OverrideError(fmt::format("'{}' is {}, not a mapping of keys, so it has no '{}'",
                                    joined(parts, i), node.describe(), part));
  }
  const ConfigNode::Entry* entry = node.find_entry(part);
  if (last) {
    node.set(part, where, value);
    return;
  }
  ConfigNode child = entry != nullptr ? entry->value : ConfigNode::map(where);
  // `gpu: H100` is short for `gpu: {preset: H100}`: setting one of its keys opens it.
  if (part == "gpu" && child.is_scalar()) {
    ConfigNode opened = ConfigNode::map(child.where());
    opened.set("preset", child.where(), child);
    child = std::move(opened);
  }
  set_below(child, parts, i + 1, value, where);
  node.set(part, entry != nullptr ? entry->key_where : where, std::move(child));
}

// The preset the section at `parts[0..n)` names in `root` ("" for none): a
// mapping's `preset`, or the scalar short form of a GPU (`gpu: H100`).
std::string preset_named(const ConfigNode& root, const std::vector<std::string>& parts,
                         std::size_t n) {
  const ConfigNode* node = &root;
  for (std::size_t i = 0; i < n; ++i) {
    node = node->is_map() ? node->find(parts[i]) : nullptr;
    if (node == nullptr) return "";
  }
  if (node->is_scalar()) return node->text();
  const ConfigNode* preset = node->is_map() ? node->find("preset") : nullptr;
  return preset != nullptr && preset->is_scalar() ? preset->text() : "";
}

}  // namespace

const PresetSwitch* PresetSwitches::of(const std::string& section) const {
  const auto it = std::find_if(switched.begin(), switched.end(),
                               [&](const PresetSwitch& s) { return s.section == section; });
  return it == switched.end() ? nullptr : &*it;
}

bool PresetSwitches::sets(const std::string& path) const {
  return std::any_of(set.begin(), set.end(), [&](const std::string& p) {
    return p == path || (p.size() > path.size() && p.starts_with(path) && p[path.size()] == '.');
  });
}

PresetSwitches apply_overrides(ConfigNode& root, const std::vector<std::string>& overrides,
                               OverridePhase phase, Diagnostics& diagnostics) {
  PresetSwitches switches;
  for (const std::string& text : overrides) {
    const std::size_t eq = text.find('=');
    const std::string path = text.substr(0, eq);
    const bool chooses_preset =
        eq != std::string::npos && (path == "cluster.gpu" || path == "preset" ||
                                    (path.size() > 7 && path.ends_with(".preset")));
    // Every path the command sets, so that a preset switch leaves them to it.
    if (phase == OverridePhase::presets && eq != std::string::npos) switches.set.push_back(path);
    if (chooses_preset != (phase == OverridePhase::presets)) continue;
    const Location where{fmt::format("--set {}", printable(path)), 0, 0};
    try {
      if (eq == std::string::npos) {
        throw OverrideError(
            fmt::format("expected key.path=value, found '{}' (no '=')", printable(text)));
      }
      const std::vector<std::string> parts = split_path(path);
      Diagnostics value_problems;
      ConfigNode value = load_yaml_text(text.substr(eq + 1), where.file, value_problems);
      if (value_problems.has_errors()) {
        throw OverrideError(fmt::format("the value '{}' is not YAML: {}",
                                        printable(text.substr(eq + 1)),
                                        value_problems.all().front().message));
      }
      value.relocate(where);
      if (!root.is_map()) root = ConfigNode::map(root.where());
      if (phase == OverridePhase::presets && value.is_scalar()) {
        // The section whose preset this chooses: `cluster.gpu` itself, or the path less `.preset`.
        const std::size_t n = parts.back() == "preset" ? parts.size() - 1 : parts.size();
        std::string section = joined(parts, n);
        // A second override of the same section switches from what the scenario named.
        const PresetSwitch* prior = switches.of(section);
        const std::string from = prior != nullptr ? prior->from : preset_named(root, parts, n);
        std::erase_if(switches.switched,
                      [&](const PresetSwitch& s) { return s.section == section; });
        if (n > 0 && from != value.text()) {
          switches.switched.push_back({std::move(section), from, value.text(), path});
        }
      }
      set_below(root, parts, 0, value, where);
    } catch (const OverrideError& e) {
      diagnostics.error(where, "", e.what());
    }
  }
  return switches;
}

}  // namespace myriad::models::scenario
