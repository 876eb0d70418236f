#include "models/scenario/config_tree.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <sstream>

namespace myriad::scenario {

ConfigNode::ConfigNode() = default;
ConfigNode::~ConfigNode() = default;
ConfigNode::ConfigNode(const ConfigNode&) = default;
ConfigNode::ConfigNode(ConfigNode&&) noexcept = default;
ConfigNode& ConfigNode::operator=(const ConfigNode&) = default;
ConfigNode& ConfigNode::operator=(ConfigNode&&) noexcept = default;

ConfigNode ConfigNode::scalar(std::string text, Location where) {
  ConfigNode n;
  n.kind_ = Kind::scalar;
  n.text_ = std::move(text);
  n.where_ = std::move(where);
  return n;
}

ConfigNode ConfigNode::map(Location where) {
  ConfigNode n;
  n.kind_ = Kind::map;
  n.where_ = std::move(where);
  return n;
}

ConfigNode ConfigNode::list(Location where) {
  ConfigNode n;
  n.kind_ = Kind::list;
  n.where_ = std::move(where);
  return n;
}

ConfigNode ConfigNode::null(Location where) {
  ConfigNode n;
  n.where_ = std::move(where);
  return n;
}

std::string ConfigNode::describe() const {
  switch (kind_) {
    case Kind::null:
      return "nothing";
    case Kind::scalar:
      return fmt::format("'{}'", text_);
    case Kind::map:
      return "a mapping";
    case Kind::list:
      return "a list";
  }
  return "";
}

const ConfigNode::Entry* ConfigNode::find_entry(const std::string& key) const {
  for (const auto& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

const ConfigNode* ConfigNode::find(const std::string& key) const {
  const Entry* e = find_entry(key);
  return e == nullptr ? nullptr : &e->value;
}

void ConfigNode::set(const std::string& key, Location key_where, ConfigNode value) {
  for (auto& e : entries_) {
    if (e.key == key) {
      e.key_where = std::move(key_where);
      e.value = std::move(value);
      return;
    }
  }
  entries_.push_back(Entry{key, std::move(key_where), std::move(value)});
}

bool ConfigNode::erase(const std::string& key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key == key) {
      entries_.erase(it);
      return true;
    }
  }
  return false;
}

namespace {

Location location_of(const YAML::Mark& mark, const std::string& file) {
  if (mark.is_null()) return Location{file, 0, 0};
  return Location{file, mark.line + 1, mark.column + 1};
}

ConfigNode convert(const YAML::Node& node, const std::string& file, const std::string& path,
                   Diagnostics& diagnostics) {
  const Location where = location_of(node.Mark(), file);
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return ConfigNode::null(where);
    case YAML::NodeType::Scalar:
      return ConfigNode::scalar(node.Scalar(), where);
    case YAML::NodeType::Sequence: {
      ConfigNode list = ConfigNode::list(where);
      std::size_t index = 0;
      for (const auto& item : node) {
        list.push_back(convert(item, file, fmt::format("{}[{}]", path, index++), diagnostics));
      }
      return list;
    }
    case YAML::NodeType::Map: {
      ConfigNode map = ConfigNode::map(where);
      for (const auto& kv : node) {
        const Location key_where = location_of(kv.first.Mark(), file);
        if (!kv.first.IsScalar()) {
          diagnostics.error(key_where, "", "keys must be plain words, found a mapping or list");
          continue;
        }
        const std::string key = kv.first.Scalar();
        const std::string key_path = path.empty() ? key : fmt::format("{}.{}", path, key);
        if (const auto* previous = map.find_entry(key)) {
          diagnostics.error(
              key_where, key_path,
              fmt::format("duplicate key; first given at line {}", previous->key_where.line));
          continue;
        }
        map.set(key, key_where, convert(kv.second, file, key_path, diagnostics));
      }
      return map;
    }
  }
  return ConfigNode::null(where);
}

}  // namespace

ConfigNode load_yaml_text(const std::string& text, const std::string& name,
                          Diagnostics& diagnostics) {
  try {
    const YAML::Node root = YAML::Load(text);
    return convert(root, name, "", diagnostics);
  } catch (const YAML::Exception& e) {
    diagnostics.error(location_of(e.mark, name), "", fmt::format("YAML syntax error: {}", e.msg));
    return ConfigNode::null(Location{name, 0, 0});
  }
}

ConfigNode load_yaml_file(const std::string& path, Diagnostics& diagnostics) {
  std::ifstream in(path);
  if (!in) {
    diagnostics.error(Location{path, 0, 0}, "", "cannot open file for reading");
    return ConfigNode::null(Location{path, 0, 0});
  }
  std::ostringstream text;
  text << in.rdbuf();
  return load_yaml_text(text.str(), path, diagnostics);
}

ConfigNode merge(const ConfigNode& base, const ConfigNode& over) {
  if (!base.is_map() || !over.is_map()) return over;
  ConfigNode result = base;
  for (const auto& e : over.entries()) {
    const ConfigNode* existing = result.find(e.key);
    // A mapping that names its own preset starts from that preset, not from what it lies on.
    const bool restarts = e.value.is_map() && e.value.find("preset") != nullptr;
    if (existing != nullptr && existing->is_map() && e.value.is_map() && !restarts) {
      result.set(e.key, e.key_where, merge(*existing, e.value));
    } else {
      result.set(e.key, e.key_where, e.value);
    }
  }
  return result;
}

}  // namespace myriad::scenario
