// A section of the scenario described once, as data: each key with its type,
// unit, default and meaning, bound to a member of the section's struct. The
// same description parses YAML (reporting every problem with its location),
// applies defaults, prints the resolved values and feeds `myriad explain`.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "models/scenario/config_tree.hpp"
#include "models/scenario/diagnostics.hpp"
#include "models/scenario/origins.hpp"
#include "models/scenario/resolved.hpp"
#include "models/scenario/units.hpp"

namespace myriad::models::scenario {

// What `explain` prints for a key.
struct FieldDoc {
  std::string key;
  std::string type;  // "integer >= 1", "bandwidth", "one of: gelu, swiglu"
  std::string unit;  // canonical unit inside Myriad, or ""
  std::string default_text;
  std::string help;
};

struct SectionDoc {
  std::string path;  // "cluster.network"
  std::string help;
  bool is_list = false;  // a list of such sections
  std::vector<FieldDoc> fields;
  std::vector<SectionDoc> sections;
};

// How a missing key is filled in.
struct Default {
  enum class Kind { required, value, derived, empty };
  Kind kind = Kind::required;
  std::string text;  // the default value, or how it is derived

  static Default required() { return {Kind::required, "required"}; }
  static Default value(std::string text) { return {Kind::value, std::move(text)}; }
  // Filled in after parsing from other keys; `how` is shown by `explain`.
  static Default derived(std::string how) { return {Kind::derived, std::move(how)}; }
  static Default none() { return {Kind::empty, "none"}; }
};

struct ParseContext {
  Diagnostics& diagnostics;
  Origins& origins;
  // Errors for missing required keys are left out when checking a preset.
  bool partial = false;
};

namespace schema_detail {

struct IntRange {
  std::int64_t min = std::numeric_limits<std::int64_t>::min();
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
};

std::string join_path(const std::string& path, const std::string& key);
std::string range_text(IntRange r);
// Each returns false (after reporting) when `node` is not acceptable.
bool read_int(const ConfigNode& node, IntRange r, const std::string& path, ParseContext& ctx,
              std::int64_t& out);
bool read_bool(const ConfigNode& node, const std::string& path, ParseContext& ctx, bool& out);
bool read_quantity(const ConfigNode& node, Dimension d, const std::string& path, ParseContext& ctx,
                   double& out);
bool read_text(const ConfigNode& node, const std::string& path, ParseContext& ctx,
               std::string& out);
bool read_numbers(const ConfigNode& node, const std::string& path, ParseContext& ctx,
                  std::vector<double>& out);
bool read_ints(const ConfigNode& node, IntRange r, const std::string& path, ParseContext& ctx,
               std::vector<int>& out);
bool read_choice(const ConfigNode& node, const std::vector<std::string>& names,
                 const std::string& path, ParseContext& ctx, std::size_t& index);
// A list of names, each one of `names` and none twice: their indexes in order.
bool read_choices(const ConfigNode& node, const std::vector<std::string>& names,
                  const std::string& path, ParseContext& ctx, std::vector<std::size_t>& out);

Resolved scalar(const std::string& key, std::string text, std::string human, nlohmann::json json,
                const Origins& origins, const std::string& path);

}  // namespace schema_detail

template <class T>
class Schema {
 public:
  using IntRange = schema_detail::IntRange;

  explicit Schema(std::string help) : help_(std::move(help)) {}

  Schema& integer(std::string key, int T::*member, IntRange range, Default def, std::string help) {
    FieldDoc doc{std::move(key), "integer " + schema_detail::range_text(range), "", def.text,
                 std::move(help)};
    add_scalar(
        doc, def,
        [member, range](T& t, const ConfigNode& n, const std::string& p, ParseContext& c) {
          std::int64_t v = 0;
          if (!schema_detail::read_int(n, range, p, c, v)) return false;
          t.*member = static_cast<int>(v);
          return true;
        },
        [member](const T& t) {
          return std::tuple{std::to_string(t.*member), std::string{}, nlohmann::json(t.*member)};
        });
    return *this;
  }

  Schema& integer64(std::string key, std::uint64_t T::*member, Default def, std::string help) {
    const IntRange range{0, std::numeric_limits<std::int64_t>::max()};
    FieldDoc doc{std::move(key), "integer " + schema_detail::range_text(range), "", def.text,
                 std::move(help)};
    add_scalar(
        doc, def,
        [member, range](T& t, const ConfigNode& n, const std::string& p, ParseContext& c) {
          std::int64_t v = 0;
          if (!schema_detail::read_int(n, range, p, c, v)) return false;
          t.*member = static_cast<std::uint64_t>(v);
          return true;
        },
        [member](const T& t) {
          return std::tuple{std::to_string(t.*member), std::string{}, nlohmann::json(t.*member)};
        });
    return *this;
  }

  Schema& quantity(std::string key, double T::*member, Dimension dim, Default def,
                   std::string help) {
    FieldDoc doc{std::move(key), std::string(dimension_name(dim)).substr(2),
                 std::string(canonical_unit(dim)), def.text, std::move(help)};
    add_scalar(
        doc, def,
        [member, dim](T& t, const ConfigNode& n, const std::string& p, ParseContext& c) {
          return schema_detail::read_quantity(n, dim, p, c, t.*member);
        },
        [member, dim](const T& t) {
          return std::tuple{format_exact(t.*member, dim), format_human(t.*member, dim),
                            nlohmann::json(t.*member)};
        });
    return *this;
  }

  Schema& boolean(std::string key, bool T::*member, Default def, std::string help) {
    FieldDoc doc{std::move(key), "true or false", "", def.text, std::move(help)};
    add_scalar(
        doc, def,
        [member](T& t, const ConfigNode& n, const std::string& p, ParseContext& c) {
          return schema_detail::read_bool(n, p, c, t.*member);
        },
        [member](const T& t) {
          return std::tuple{std::string(t.*member ? "true" : "false"), std::string{},
                            nlohmann::json(t.*member)};
        });
    return *this;
  }

  Schema& text(std::string key, std::string T::*member, Default def, std::string help) {
    FieldDoc doc{std::move(key), "text", "", def.text, std::move(help)};
    add_scalar(
        doc, def,
        [member](T& t, const ConfigNode& n, const std::string& p, ParseContext& c) {
          return schema_detail::read_text(n, p, c, t.*member);
        },
        [member](const T& t) {
          return std::tuple{t.*member, std::string{}, nlohmann::json(t.*member)};
        });
    return *this;
  }

  // A list of integers in `range`, such as layers per stage: `[7, 8, 8, 7]`.
  Schema& integer_list(std::string key, std::vector<int> T::*member, IntRange range,
                       const Default& def, std::string help) {
    Field f;
    f.key = key;
    f.def = def;
    f.field_doc = FieldDoc{std::move(key), "list of integers " + schema_detail::range_text(range),
                           "", def.text, std::move(help)};
    f.parse = [member, range](T& t, const ConfigNode& n, const std::string& p, ParseContext& c) {
      return schema_detail::read_ints(n, range, p, c, t.*member);
    };
    f.emit = [member, key = f.key](const T& t, const std::string& p, const Origins& o) {
      Resolved r;
      r.kind = Resolved::Kind::list;
      r.key = key;
      for (const int v : t.*member) {
        const std::string text = std::to_string(v);
        r.children.push_back(schema_detail::scalar("", text, text, nlohmann::json(v), o, p));
      }
      return r;
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  // A list of plain numbers, such as a histogram: `[0.3, 0.2, 0.5]`; resolved as a
  // YAML list, one number an item.
  Schema& number_list(std::string key, std::vector<double> T::*member, const Default& def,
                      std::string help) {
    Field f;
    f.key = key;
    f.def = def;
    f.field_doc = FieldDoc{std::move(key), "list of numbers", "", def.text, std::move(help)};
    f.parse = [member](T& t, const ConfigNode& n, const std::string& p, ParseContext& c) {
      return schema_detail::read_numbers(n, p, c, t.*member);
    };
    f.emit = [member, key = f.key](const T& t, const std::string& p, const Origins& o) {
      Resolved r;
      r.kind = Resolved::Kind::list;
      r.key = key;
      for (const double v : t.*member) {
        const std::string text = format_exact(v, Dimension::count);
        r.children.push_back(schema_detail::scalar("", text, text, nlohmann::json(v), o, p));
      }
      return r;
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  template <class E>
  Schema& choice(std::string key, E T::*member, std::vector<std::pair<std::string, E>> options,
                 Default def, std::string help) {
    std::vector<std::string> names;
    names.reserve(options.size());
    for (const auto& o : options) names.push_back(o.first);
    std::string type = "one of:";
    for (const auto& n : names) type += " " + n;
    FieldDoc doc{std::move(key), type, "", def.text, std::move(help)};
    add_scalar(
        doc, def,
        [member, options, names](T& t, const ConfigNode& n, const std::string& p, ParseContext& c) {
          std::size_t i = 0;
          if (!schema_detail::read_choice(n, names, p, c, i)) return false;
          t.*member = options[i].second;
          return true;
        },
        [member, options](const T& t) {
          for (const auto& o : options) {
            if (o.second == t.*member) {
              return std::tuple{o.first, std::string{}, nlohmann::json(o.first)};
            }
          }
          return std::tuple{std::string("?"), std::string{}, nlohmann::json(nullptr)};
        });
    return *this;
  }

  // A list of choices, each at most once, such as modules: `[core_attn, expert_fc1]`.
  template <class E>
  Schema& choice_list(std::string key, std::vector<E> T::*member,
                      std::vector<std::pair<std::string, E>> options, const Default& def,
                      std::string help) {
    std::vector<std::string> names;
    names.reserve(options.size());
    for (const auto& o : options) names.push_back(o.first);
    std::string type = "list of:";
    for (const auto& n : names) type += " " + n;
    Field f;
    f.key = key;
    f.def = def;
    f.field_doc = FieldDoc{std::move(key), type, "", def.text, std::move(help)};
    f.parse = [member, options, names](T& t, const ConfigNode& n, const std::string& p,
                                       ParseContext& c) {
      std::vector<std::size_t> picked;
      if (!schema_detail::read_choices(n, names, p, c, picked)) return false;
      (t.*member).clear();
      for (const std::size_t i : picked) (t.*member).push_back(options[i].second);
      return true;
    };
    f.emit = [member, options, key = f.key](const T& t, const std::string& p, const Origins& o) {
      Resolved r;
      r.kind = Resolved::Kind::list;
      r.key = key;
      for (const E v : t.*member) {
        for (const auto& option : options) {
          if (option.second != v) continue;
          r.children.push_back(schema_detail::scalar("", option.first, option.first,
                                                     nlohmann::json(option.first), o, p));
        }
      }
      return r;
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  // A nested section; unless required, absent means all of its defaults.
  template <class S>
  Schema& section(const std::string& key, S T::*member, const Schema<S>& sub,
                  const Default& def = Default::none()) {
    auto shared = std::make_shared<Schema<S>>(sub);
    Field f;
    f.key = key;
    f.is_section = true;
    f.def = def;
    f.parse = [member, shared](T& t, const ConfigNode& n, const std::string& p, ParseContext& c) {
      return shared->parse(n, p, t.*member, c);
    };
    f.apply_default = [member, shared](T& t, const std::string& p, ParseContext& c,
                                       const Location& where) {
      return shared->parse(ConfigNode::map(where), p, t.*member, c);
    };
    f.emit = [member, shared, key](const T& t, const std::string& p, const Origins& o) {
      Resolved r = shared->emit(t.*member, p, o);
      r.key = key;
      return r;
    };
    f.doc = [shared](const std::string& p) { return shared->doc(p); };
    fields_.push_back(std::move(f));
    return *this;
  }

  // A list of sections, such as the tiers of a network.
  template <class S>
  Schema& section_list(const std::string& key, std::vector<S> T::*member, const Schema<S>& sub,
                       const Default& def) {
    auto shared = std::make_shared<Schema<S>>(sub);
    Field f;
    f.key = key;
    f.is_section = true;
    f.def = def;
    f.parse = [member, shared](T& t, const ConfigNode& n, const std::string& p, ParseContext& c) {
      if (!n.is_list()) {
        c.diagnostics.error(n.where(), p,
                            "expected a list of mappings (one per item), found " + n.describe());
        return false;
      }
      bool ok = true;
      (t.*member).clear();
      for (std::size_t i = 0; i < n.items().size(); ++i) {
        S item{};
        ok = shared->parse(n.items()[i], p + "[" + std::to_string(i) + "]", item, c) && ok;
        (t.*member).push_back(std::move(item));
      }
      return ok;
    };
    f.apply_default = [](T&, const std::string&, ParseContext&, const Location&) { return true; };
    f.emit = [member, shared, key](const T& t, const std::string& p, const Origins& o) {
      Resolved r;
      r.kind = Resolved::Kind::list;
      r.key = key;
      for (std::size_t i = 0; i < (t.*member).size(); ++i) {
        r.children.push_back(shared->emit((t.*member)[i], p + "[" + std::to_string(i) + "]", o));
      }
      return r;
    };
    f.doc = [shared](const std::string& p) {
      SectionDoc d = shared->doc(p + "[]");
      d.is_list = true;
      return d;
    };
    fields_.push_back(std::move(f));
    return *this;
  }

  [[nodiscard]] std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& f : fields_) out.push_back(f.key);
    return out;
  }

  // Reads `node` (a mapping) into `out`, applying defaults for missing keys.
  // Returns false when a problem was reported.
  bool parse(const ConfigNode& node, const std::string& path, T& out, ParseContext& ctx) const {
    if (!node.is_map() && !node.is_null()) {
      ctx.diagnostics.error(node.where(), path,
                            "expected a mapping of keys (a section), found " + node.describe());
      return false;
    }
    bool ok = true;
    const auto names = keys();
    for (const auto& e : node.entries()) {
      if (find_field(e.key) == nullptr) {
        ctx.diagnostics.error(e.key_where, schema_detail::join_path(path, e.key),
                              "unknown key" + did_you_mean(e.key, names) + "; see `myriad explain" +
                                  (path.empty() ? "" : " " + path) + "`");
        ok = false;
      }
    }
    for (const auto& f : fields_) {
      const std::string p = schema_detail::join_path(path, f.key);
      const ConfigNode* value = node.find(f.key);
      if (value != nullptr) {
        ok = f.parse(out, *value, p, ctx) && ok;
        ctx.origins[p] = value->where();
        continue;
      }
      ok = apply_default(f, out, p, node, ctx) && ok;
    }
    return ok;
  }

  [[nodiscard]] Resolved emit(const T& value, const std::string& path,
                              const Origins& origins) const {
    Resolved r;
    r.kind = Resolved::Kind::map;
    for (const auto& f : fields_) {
      const std::string p = schema_detail::join_path(path, f.key);
      if (!f.is_section && origins.find(p) == origins.end()) continue;  // unset "none"
      r.children.push_back(f.emit(value, p, origins));
    }
    return r;
  }

  [[nodiscard]] SectionDoc doc(const std::string& path) const {
    SectionDoc d{path, help_, false, {}, {}};
    for (const auto& f : fields_) {
      if (f.is_section) {
        d.sections.push_back(f.doc(schema_detail::join_path(path, f.key)));
      } else {
        d.fields.push_back(f.field_doc);
      }
    }
    return d;
  }

 private:
  struct Field {
    std::string key;
    bool is_section = false;
    Default def;
    FieldDoc field_doc;
    std::function<bool(T&, const ConfigNode&, const std::string&, ParseContext&)> parse;
    std::function<bool(T&, const std::string&, ParseContext&, const Location&)> apply_default;
    std::function<Resolved(const T&, const std::string&, const Origins&)> emit;
    std::function<SectionDoc(const std::string&)> doc;
  };

  template <class Parse, class Show>
  void add_scalar(const FieldDoc& doc, const Default& def, Parse parse, Show show) {
    Field f;
    f.key = doc.key;
    f.def = def;
    f.field_doc = doc;
    f.parse = parse;
    f.emit = [show, key = f.key](const T& t, const std::string& p, const Origins& o) {
      auto [text, human, json] = show(t);
      return schema_detail::scalar(key, std::move(text), std::move(human), std::move(json), o, p);
    };
    fields_.push_back(std::move(f));
  }

  [[nodiscard]] const Field* find_field(const std::string& key) const {
    for (const auto& f : fields_) {
      if (f.key == key) return &f;
    }
    return nullptr;
  }

  bool apply_default(const Field& f, T& out, const std::string& p, const ConfigNode& node,
                     ParseContext& ctx) const {
    if (f.is_section) {
      if (f.def.kind == Default::Kind::required && !ctx.partial) {
        ctx.diagnostics.error(node.where(), p, "missing required section");
        return false;
      }
      return f.apply_default(out, p, ctx, node.where());
    }
    switch (f.def.kind) {
      case Default::Kind::required:
        if (ctx.partial) return true;
        ctx.diagnostics.error(
            node.where(), p,
            "missing required key (" + f.field_doc.type + ": " + f.field_doc.help + ")");
        return false;
      case Default::Kind::value: {
        // A default that does not parse is a bug in the schema; its tests catch it.
        const bool ok = f.parse(out, ConfigNode::scalar(f.def.text, default_location()), p, ctx);
        ctx.origins[p] = default_location();
        return ok;
      }
      case Default::Kind::derived:
      case Default::Kind::empty:
        return true;
    }
    return true;
  }

  std::string help_;
  std::vector<Field> fields_;
};

}  // namespace myriad::models::scenario
