#include "models/scenario/config_tree.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "models/scenario/text_file.hpp"

namespace myriad::models::scenario {

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

void ConfigNode::append(const std::string& key, Location key_where, ConfigNode value) {
  entries_.push_back(Entry{key, std::move(key_where), std::move(value)});
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

void ConfigNode::relocate(const Location& where) {
  where_ = where;
  for (auto& e : entries_) {
    e.key_where = where;
    e.value.relocate(where);
  }
  for (auto& item : items_) item.relocate(where);
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

// One document's conversion, with the limits that keep hostile input finite.
class Converter {
 public:
  Converter(const std::string& file, Diagnostics& diagnostics)
      : file_(file), diagnostics_(diagnostics) {}

  ConfigNode convert(const YAML::Node& node, const std::string& path) {
    const Location where = location_of(node.Mark(), file_);
    if (stopped_) return ConfigNode::null(where);
    if (++values_ > kMaxYamlValues) {
      stop(where, path,
           fmt::format("more than {} values (counting what aliases repeat): a scenario has a few "
                       "hundred; an alias repeated into a bomb?",
                       kMaxYamlValues));
      return ConfigNode::null(where);
    }
    if (ancestors_.size() >= kMaxYamlDepth) {
      stop(where, path, fmt::format("nested deeper than {} levels", kMaxYamlDepth));
      return ConfigNode::null(where);
    }
    for (const YAML::Node& a : ancestors_) {
      if (a.is(node)) {
        stop(where, path, "an alias that contains itself (recursive)");
        return ConfigNode::null(where);
      }
    }
    const std::string& tag = node.Tag();
    if (!tag.empty() && tag != "?" && tag != "!") {
      diagnostics_.error(
          where, path,
          fmt::format("YAML tags are not read (found '{}'): write the value plainly", tag));
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return ConfigNode::null(where);
      case YAML::NodeType::Scalar:
        return ConfigNode::scalar(node.Scalar(), where);
      case YAML::NodeType::Sequence:
        return sequence(node, path, where);
      case YAML::NodeType::Map:
        return mapping(node, path, where);
    }
    return ConfigNode::null(where);
  }

 private:
  void stop(const Location& where, const std::string& path, std::string message) {
    diagnostics_.error(where, path, std::move(message));
    stopped_ = true;
  }

  ConfigNode sequence(const YAML::Node& node, const std::string& path, const Location& where) {
    ConfigNode list = ConfigNode::list(where);
    ancestors_.push_back(node);
    std::size_t index = 0;
    for (const auto& item : node) {
      list.push_back(convert(item, fmt::format("{}[{}]", path, index++)));
    }
    ancestors_.pop_back();
    return list;
  }

  ConfigNode mapping(const YAML::Node& node, const std::string& path, const Location& where) {
    ConfigNode map = ConfigNode::map(where);
    ancestors_.push_back(node);
    std::unordered_map<std::string, int> first_line;  // a linear duplicate check
    for (const auto& kv : node) {
      const Location key_where = location_of(kv.first.Mark(), file_);
      if (!kv.first.IsScalar()) {
        diagnostics_.error(key_where, "", "keys must be plain words, found a mapping or list");
        continue;
      }
      const std::string key = kv.first.Scalar();
      const std::string key_path = path.empty() ? key : fmt::format("{}.{}", path, key);
      const auto [previous, added] = first_line.emplace(key, key_where.line);
      if (!added) {
        diagnostics_.error(key_where, key_path,
                           fmt::format("duplicate key; first given at line {}", previous->second));
        continue;
      }
      map.append(key, key_where, convert(kv.second, key_path));
    }
    ancestors_.pop_back();
    return map;
  }

  const std::string& file_;
  Diagnostics& diagnostics_;
  std::vector<YAML::Node> ancestors_;
  std::size_t values_ = 0;
  bool stopped_ = false;
};

// Where a document's first node is, from the parser's events.
struct FirstMark : YAML::EventHandler {
  bool seen = false;
  YAML::Mark mark;
  void note(const YAML::Mark& m) {
    if (!seen) mark = m;
    seen = true;
  }
  void OnDocumentStart(const YAML::Mark& /*mark*/) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t /*anchor*/) override { note(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t /*anchor*/) override { note(m); }
  void OnScalar(const YAML::Mark& m, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                const std::string& /*value*/) override {
    note(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                       YAML::EmitterStyle::value /*style*/) override {
    note(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value /*style*/) override {
    note(m);
  }
  void OnMapEnd() override {}
};

// The limits on values and nesting, checked on the parser's events before
// YAML::Load builds the tree: a flow list of millions of values ([0,0,...] in
// 16 MiB) took 3.9 GB and 21 s to load, a block list 2.7 GB and 18 s, before the
// conversion could count them. Counted as the Converter counts (every node but
// the keys, an alias as one: the Converter counts what aliases repeat, on a tree
// they do not grow), in the same order, so the same node is refused with the same
// message and path.
class ValueCounter : public YAML::EventHandler {
 public:
  struct Stop {};  // thrown to end the parse at the first node past a limit

  explicit ValueCounter(const std::string& file) : file_(file) {}
  [[nodiscard]] bool stopped() const { return !message_.empty(); }
  void report(Diagnostics& diagnostics) const { diagnostics.error(where_, path_, message_); }

  void OnDocumentStart(const YAML::Mark& /*mark*/) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t /*anchor*/) override { node(m, false, false); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t /*anchor*/) override { node(m, false, false); }
  void OnScalar(const YAML::Mark& m, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                const std::string& value) override {
    node(m, false, false, &value);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                       YAML::EmitterStyle::value /*style*/) override {
    node(m, true, false);
  }
  void OnSequenceEnd() override { end(); }
  void OnMapStart(const YAML::Mark& m, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value /*style*/) override {
    node(m, true, true);
  }
  void OnMapEnd() override { end(); }

 private:
  struct Frame {
    bool map = false;
    bool in_key = false;  // a mapping or list written as a key: not counted
    std::string path;
    bool want_key = true;
    std::string key;
    std::size_t index = 0;
  };

  void node(const YAML::Mark& m, bool opens, bool map, const std::string* scalar = nullptr) {
    std::string path;
    bool counted = stack_.empty() || !stack_.back().in_key;
    if (!stack_.empty()) {
      Frame& top = stack_.back();
      if (top.map && top.want_key) {  // a key: not a value
        top.want_key = false;
        top.key = scalar != nullptr ? *scalar : std::string();
        counted = false;
      } else if (top.map) {
        top.want_key = true;
        path = top.path.empty() ? top.key : fmt::format("{}.{}", top.path, top.key);
      } else {
        path = fmt::format("{}[{}]", top.path, top.index++);
      }
    }
    const bool key = !stack_.empty() && !counted && !stack_.back().in_key;
    if (counted && ++values_ > kMaxYamlValues) {
      stop(m, path,
           fmt::format("more than {} values (counting what aliases repeat): a scenario has a few "
                       "hundred; an alias repeated into a bomb?",
                       kMaxYamlValues));
    }
    if (counted && stack_.size() >= kMaxYamlDepth) {
      stop(m, path, fmt::format("nested deeper than {} levels", kMaxYamlDepth));
    }
    if (opens) {
      const bool in_key = key || (!stack_.empty() && stack_.back().in_key);
      Frame frame;
      frame.map = map;
      frame.in_key = in_key;
      frame.path = std::move(path);
      stack_.push_back(std::move(frame));
    }
  }
  void end() {
    if (!stack_.empty()) stack_.pop_back();
  }
  void stop(const YAML::Mark& m, std::string path, std::string message) {
    where_ = location_of(m, file_);
    path_ = std::move(path);
    message_ = std::move(message);
    throw Stop{};
  }

  const std::string& file_;
  std::vector<Frame> stack_;
  std::size_t values_ = 0;
  Location where_;
  std::string path_;
  std::string message_;
};

// The text up to the first flow bracket ('[' or '{') nested deeper than
// kMaxYamlDepth, with the brackets still open closed after it; empty when none
// is (quotes and comments skipped, as well as a character scan can).
std::string cut_past_flow_depth(const std::string& text) {
  std::string open;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\n')) {
      i = std::min(text.find('\n', i), text.size());
    } else if (c == '[' || c == '{') {
      open += c;
      if (open.size() <= kMaxYamlDepth) continue;
      std::string cut = text.substr(0, i + 1);
      std::reverse(open.begin(), open.end());
      for (const char b : open) cut += b == '[' ? ']' : '}';
      return cut + "\n";
    } else if ((c == ']' || c == '}') && !open.empty()) {
      open.pop_back();
    }
  }
  return {};
}

// Whether the parser's events over `text` stop at a limit (with its diagnostic).
bool stops_at_a_limit(const std::string& text, const std::string& name, Diagnostics& diagnostics) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  ValueCounter counter(name);
  try {
    parser.HandleNextDocument(counter);
  } catch (const ValueCounter::Stop&) {
    counter.report(diagnostics);
    return true;
  }
  return false;
}

// False, with the diagnostic, when the document's first node past a limit stops
// it. yaml-cpp's scanner reads a run of flow brackets to its end before the parser
// sees the first (8 million '[' took 2.4 GB and 6 s): the text up to the first
// bracket past the depth limit, closed, is parsed first, and where its events do
// stop there (the scan may miscount, and a cut text may not parse), the rest is
// not.
bool within_limits(const std::string& text, const std::string& name, Diagnostics& diagnostics) {
  if (const std::string cut = cut_past_flow_depth(text); !cut.empty()) {
    try {
      if (stops_at_a_limit(cut, name, diagnostics)) return false;
    } catch (const YAML::Exception&) {
      // Cut where no parse could end: the whole text decides.
    }
  }
  return !stops_at_a_limit(text, name, diagnostics);
}

// A scenario is one document. The parser is asked for two at most: yaml-cpp's
// LoadAll loops forever on a stray ',' (the parser hands out the same empty
// document again and again), which is reported as the syntax error it is.
void check_one_document(const std::string& text, const std::string& name,
                        Diagnostics& diagnostics) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  FirstMark first;
  if (!parser.HandleNextDocument(first)) return;
  FirstMark second;
  if (!parser.HandleNextDocument(second) || !second.seen) return;
  if (second.mark.pos <= first.mark.pos) {
    diagnostics.error(location_of(second.mark, name), "",
                      "YAML syntax error: the parser cannot go past this point (a stray ','?)");
    return;
  }
  diagnostics.error(location_of(second.mark, name), "",
                    "a second YAML document (after '---'): a scenario is one document");
}

}  // namespace

ConfigNode load_yaml_text(const std::string& text, const std::string& name,
                          Diagnostics& diagnostics) {
  const Location whole{name, 0, 0};
  if (text.size() > kMaxScenarioBytes) {
    diagnostics.error(whole, "",
                      fmt::format("{} bytes, more than the {} MiB a scenario may have", text.size(),
                                  kMaxScenarioBytes >> 20));
    return ConfigNode::null(whole);
  }
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(nul), '\n');
    const auto line_start = text.rfind('\n', nul);
    const auto column = nul - (line_start == std::string::npos ? 0 : line_start + 1) + 1;
    diagnostics.error(Location{name, static_cast<int>(line), static_cast<int>(column)}, "",
                      "a NUL byte: not a text file");
    return ConfigNode::null(whole);
  }
  try {
    if (!within_limits(text, name, diagnostics)) return ConfigNode::null(whole);
    const YAML::Node root = YAML::Load(text);
    check_one_document(text, name, diagnostics);
    return Converter(name, diagnostics).convert(root, "");
  } catch (const YAML::Exception& e) {
    diagnostics.error(location_of(e.mark, name), "", fmt::format("YAML syntax error: {}", e.msg));
    return ConfigNode::null(whole);
  }
}

ConfigNode load_yaml_file(const std::string& path, Diagnostics& diagnostics) {
  std::string text;
  try {
    text = read_text_file(path, "scenario", kMaxScenarioBytes);
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    const std::string prefix = printable(path) + ": ";
    diagnostics.error(Location{path, 0, 0}, "",
                      message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message);
    return ConfigNode::null(Location{path, 0, 0});
  }
  return load_yaml_text(text, path, diagnostics);
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

}  // namespace myriad::models::scenario
