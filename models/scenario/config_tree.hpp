// A YAML document as a tree that remembers where every key and value came
// from, so that presets can be merged into scenarios and every later problem
// can still be reported at the right file, line and column.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "models/scenario/diagnostics.hpp"
#include "models/scenario/location.hpp"

namespace myriad::models::scenario {

class ConfigNode {
 public:
  enum class Kind { null, scalar, map, list };

  struct Entry;  // a key of a map, with where the key was written

  // Defined where Entry is complete (a vector of an incomplete type cannot be
  // destroyed or copied inline).
  ConfigNode();
  ~ConfigNode();
  ConfigNode(const ConfigNode&);
  ConfigNode(ConfigNode&&) noexcept;
  ConfigNode& operator=(const ConfigNode&);
  ConfigNode& operator=(ConfigNode&&) noexcept;

  static ConfigNode scalar(std::string text, Location where);
  static ConfigNode map(Location where);
  static ConfigNode list(Location where);
  static ConfigNode null(Location where);

  [[nodiscard]] Kind kind() const { return kind_; }
  [[nodiscard]] bool is_null() const { return kind_ == Kind::null; }
  [[nodiscard]] bool is_scalar() const { return kind_ == Kind::scalar; }
  [[nodiscard]] bool is_map() const { return kind_ == Kind::map; }
  [[nodiscard]] bool is_list() const { return kind_ == Kind::list; }
  [[nodiscard]] const Location& where() const { return where_; }
  [[nodiscard]] const std::string& text() const { return text_; }
  // "a mapping", "a list", "'text'", "nothing": for messages.
  [[nodiscard]] std::string describe() const;

  // Maps: keys in document order.
  [[nodiscard]] const std::vector<Entry>& entries() const { return entries_; }
  [[nodiscard]] const ConfigNode* find(const std::string& key) const;
  [[nodiscard]] const Entry* find_entry(const std::string& key) const;
  // Sets or replaces a key, keeping its position when it exists.
  void set(const std::string& key, Location key_where, ConfigNode value);
  // Adds a key known to be new (the reader's duplicate check has run).
  void append(const std::string& key, Location key_where, ConfigNode value);
  bool erase(const std::string& key);

  // Lists.
  [[nodiscard]] const std::vector<ConfigNode>& items() const { return items_; }
  void push_back(ConfigNode item) { items_.push_back(std::move(item)); }
  void replace_item(std::size_t i, ConfigNode item) { items_.at(i) = std::move(item); }

  // Every value and key of the tree said to come from `where` (a value given
  // on the command line rather than in a file).
  void relocate(const Location& where);

 private:
  Kind kind_ = Kind::null;
  Location where_;
  std::string text_;
  std::vector<Entry> entries_;
  std::vector<ConfigNode> items_;
};

struct ConfigNode::Entry {
  std::string key;
  Location key_where;
  ConfigNode value;
};

// Limits on a YAML document, so that no input can exhaust the stack, memory or
// time: values after alias expansion (a bomb of nested aliases), and nesting.
// File size: kMaxScenarioBytes (text_file.hpp).
constexpr std::size_t kMaxYamlValues = 200000;
constexpr std::size_t kMaxYamlDepth = 64;

// Reads a YAML file. Syntax errors, duplicate keys, non-scalar keys, recursive
// aliases, YAML tags, a second document, NUL bytes and inputs over the limits
// are reported to `diagnostics`; the returned tree holds what could be read.
ConfigNode load_yaml_file(const std::string& path, Diagnostics& diagnostics);
// Same, from text; `name` stands for the file in locations.
ConfigNode load_yaml_text(const std::string& text, const std::string& name,
                          Diagnostics& diagnostics);

// `over` laid on `base`: maps merge key by key (recursively), anything else
// in `over` replaces what `base` had; so does a nested map that names its own
// `preset` (it starts afresh from that preset). Locations stay with the values.
ConfigNode merge(const ConfigNode& base, const ConfigNode& over);

}  // namespace myriad::models::scenario
