#include "models/scenario/loader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "models/scenario/config_tree.hpp"
#include "models/scenario/overrides.hpp"
#include "models/scenario/reliability_checks.hpp"
#include "models/scenario/scenario_checks.hpp"
#include "models/scenario/scenario_schema.hpp"

namespace myriad::models::scenario {
namespace {

std::string display_path(const std::filesystem::path& p) {
  std::error_code ec;
  const auto rel = std::filesystem::proximate(p, ec);
  return ec ? p.string() : rel.string();
}

class PresetResolver {
 public:
  PresetResolver(const PresetLibrary& library, Diagnostics& diagnostics,
                 const PresetSwitches* switches = nullptr)
      : library_(library), diagnostics_(diagnostics), switches_(switches) {}

  // True when a preset could not be resolved: the section then lacks what the
  // preset would have given, and errors about missing keys would be noise.
  [[nodiscard]] bool failed() const { return failed_; }

  // The preset named by the scalar `name` (the key `key_path` in messages), resolved.
  ConfigNode named(PresetKind kind, const ConfigNode& name, const std::string& key_path) {
    ConfigNode section = load(kind, name.text(), name, key_path);
    resolve_children(section, kind, key_path, false);
    return section;
  }

  // Replaces `section` by its preset (recursively) with the section's own keys laid over it.
  // `path` is the section's dotted key, for messages; `in_scenario`: the section is
  // the scenario's (not a preset file's), so an override's preset switch applies to it.
  void resolve(ConfigNode& section, PresetKind kind, const std::string& path,
               bool in_scenario = false) {
    normalize(section, kind);
    const ConfigNode* preset = section.is_map() ? section.find("preset") : nullptr;
    if (preset == nullptr) {
      resolve_children(section, kind, path, in_scenario);
      return;
    }
    if (!preset->is_scalar()) {  // the schema reports it
      failed_ = true;
      return;
    }
    const std::string name = preset->text();
    ConfigNode base = load(kind, name, *preset, path + ".preset");
    ConfigNode own = section;
    own.erase("preset");
    if (in_scenario) give_way(own, base, path);
    const ConfigNode::Entry* preset_entry = section.find_entry("preset");
    const Location key_where = preset_entry->key_where;
    const ConfigNode name_node = preset_entry->value;
    section = merge(base, own);
    section.set("preset", key_where, name_node);
    resolve_children(section, kind, path, in_scenario);
  }

 private:
  // `gpu: H100` is short for `gpu: {preset: H100}`.
  static void normalize(ConfigNode& section, PresetKind kind) {
    if (kind == PresetKind::hardware && section.is_scalar()) {
      ConfigNode map = ConfigNode::map(section.where());
      map.set("preset", section.where(), section);
      section = map;
    }
    if (kind == PresetKind::clusters && section.is_map()) {
      if (const auto* entry = section.find_entry("gpu"); entry != nullptr) {
        ConfigNode gpu = entry->value;
        normalize(gpu, PresetKind::hardware);
        section.set("gpu", entry->key_where, gpu);
      }
    }
  }

  void resolve_children(ConfigNode& section, PresetKind kind, const std::string& path,
                        bool in_scenario) {
    if (kind != PresetKind::clusters || !section.is_map()) return;
    if (const auto* entry = section.find_entry("gpu"); entry != nullptr) {
      ConfigNode gpu = entry->value;
      resolve(gpu, PresetKind::hardware, path + ".gpu", in_scenario);
      section.set("gpu", entry->key_where, gpu);
    }
  }

  // An override switched the section at `path` to the preset `base`: every key of
  // `own` (the scenario's keys there) that the preset defines gives way to the
  // preset's, a mapping such as `gpu` or `network` whole, unless an override set
  // it; each one a warning, so that nothing the file said is dropped unseen.
  void give_way(ConfigNode& own, const ConfigNode& base, const std::string& path) {
    const PresetSwitch* to = switches_ != nullptr ? switches_->of(path) : nullptr;
    if (to == nullptr || !own.is_map() || !base.is_map()) return;
    std::vector<std::string> dropped;
    for (const auto& e : own.entries()) {
      const std::string key = path + "." + e.key;
      if (base.find(e.key) == nullptr || switches_->sets(key)) continue;
      diagnostics_.warning(
          e.key_where, key,
          fmt::format("{} in the scenario gives way to {} of preset '{}': --set {}={} "
                      "switched the preset{}, and the file's value went with the old one; give "
                      "--set {}=VALUE to choose another",
                      e.value.describe(), base.find(e.key)->describe(), to->to, to->by, to->to,
                      to->from.empty() ? std::string{} : fmt::format(" from '{}'", to->from), key));
      dropped.push_back(e.key);
    }
    for (const auto& key : dropped) own.erase(key);
  }

  ConfigNode load(PresetKind kind, const std::string& name, const ConfigNode& at,
                  const std::string& key_path) {
    const auto file = library_.find(kind, name);
    if (!file) {
      failed_ = true;
      const auto available = library_.names(kind);
      std::string list;
      for (const auto& n : available) list += (list.empty() ? "" : ", ") + n;
      diagnostics_.error(at.where(), key_path,
                         fmt::format("no {} preset named '{}'{}; available: {}",
                                     preset_kind_name(kind), name, did_you_mean(name, available),
                                     list.empty() ? "none (check --preset-path)" : list));
      return ConfigNode::map(at.where());
    }
    const std::string key = std::string(preset_kind_name(kind)) + "/" + name;
    if (std::find(chain_.begin(), chain_.end(), key) != chain_.end()) {
      std::string cycle;
      for (const auto& c : chain_) cycle += c + " -> ";
      failed_ = true;
      diagnostics_.error(at.where(), key_path,
                         fmt::format("presets form a cycle: {}{}", cycle, key));
      return ConfigNode::map(at.where());
    }
    ConfigNode tree = load_yaml_file(display_path(*file), diagnostics_);
    if (!tree.is_map()) {
      failed_ = true;
      diagnostics_.error(tree.where(), "",
                         fmt::format("a {} preset must be a mapping of keys, found {}",
                                     preset_kind_name(kind), tree.describe()));
      return ConfigNode::map(at.where());
    }
    chain_.push_back(key);
    resolve(tree, kind, key_path.substr(0, key_path.size() - std::string(".preset").size()));
    chain_.pop_back();
    return tree;
  }

  const PresetLibrary& library_;
  Diagnostics& diagnostics_;
  const PresetSwitches* switches_;
  std::vector<std::string> chain_;
  bool failed_ = false;
};

// Returns false when a preset could not be resolved.
bool resolve_scenario_presets(ConfigNode& root, const PresetLibrary& library,
                              const PresetSwitches& switches, Diagnostics& diagnostics) {
  PresetResolver resolver(library, diagnostics, &switches);
  for (const auto& [key, kind] :
       {std::pair{"cluster", PresetKind::clusters}, std::pair{"model", PresetKind::models}}) {
    if (const auto* entry = root.find_entry(key); entry != nullptr) {
      ConfigNode section = entry->value;
      resolver.resolve(section, kind, key, true);
      root.set(key, entry->key_where, section);
    }
  }
  return !resolver.failed();
}

// training.growth.from names a model preset: read it, as `model:` would be, into
// the growth spec. Returns false when it could not be.
bool resolve_growth_model(const ConfigNode& root, Scenario& scenario, const PresetLibrary& library,
                          Diagnostics& diagnostics) {
  const ConfigNode* training = root.find("training");
  const ConfigNode* growth = training != nullptr ? training->find("growth") : nullptr;
  const ConfigNode* from = growth != nullptr ? growth->find("from") : nullptr;
  if (from == nullptr || !from->is_scalar()) return true;
  const std::string path = "training.growth.from";
  PresetResolver resolver(library, diagnostics);
  const ConfigNode section = resolver.named(PresetKind::models, *from, path);
  if (resolver.failed()) return false;
  Origins origins;
  ParseContext ctx{diagnostics, origins};
  ModelSpec& model = scenario.training.growth.model;
  if (!model_schema().parse(section, path, model, ctx)) return false;
  derive_model(model, path, origins);
  return true;
}

Scenario build(ConfigNode root, const std::string& name, const LoadOptions& options,
               Diagnostics& diagnostics) {
  Scenario scenario;
  scenario.file = name;
  // A syntax error leaves nothing worth checking further.
  if (diagnostics.has_errors() && root.is_null()) throw ScenarioError(diagnostics);
  const PresetSwitches switches =
      apply_overrides(root, options.overrides, OverridePhase::presets, diagnostics);
  if (!root.is_map()) {
    diagnostics.error(root.where(), "",
                      fmt::format("a scenario must be a mapping of sections (cluster, model, "
                                  "parallelism, ...), found {}",
                                  root.describe()));
    throw ScenarioError(diagnostics);
  }
  const PresetLibrary library(options.preset_path);
  const bool presets_ok = resolve_scenario_presets(root, library, switches, diagnostics);
  apply_overrides(root, options.overrides, OverridePhase::values, diagnostics);
  // Without its preset a section lacks most keys: say so once, not once per key.
  ParseContext ctx{diagnostics, scenario.origins, !presets_ok};
  scenario_schema().parse(root, "", scenario, ctx);
  if (presets_ok && !diagnostics.has_errors()) {
    resolve_growth_model(root, scenario, library, diagnostics);
  }
  // Derivations and cross-checks need well-formed values: only run them on those.
  if (!diagnostics.has_errors()) load_fault_replay(scenario, diagnostics);
  if (!diagnostics.has_errors()) {
    derive(scenario);
    if (options.layout_searched) {
      Diagnostics checked;
      check(scenario, root.where(), checked);
      for (const Diagnostic& d : checked.all()) {
        if (d.severity == Severity::error && d.key.starts_with("parallelism.")) {
          diagnostics.warning(d.where, d.key,
                              d.message + " (the scenario's own layout; the search tries others)");
        } else if (d.severity == Severity::error) {
          diagnostics.error(d.where, d.key, d.message);
        } else {
          diagnostics.warning(d.where, d.key, d.message);
        }
      }
    } else {
      check(scenario, root.where(), diagnostics);
    }
  }
  if (diagnostics.has_errors()) throw ScenarioError(diagnostics);
  for (const auto& d : diagnostics.all()) scenario.warnings.push_back(d);
  return scenario;
}

}  // namespace

Scenario load_scenario(const std::string& path, const LoadOptions& options) {
  Diagnostics diagnostics;
  ConfigNode root = load_yaml_file(path, diagnostics);
  return build(std::move(root), path, options, diagnostics);
}

Scenario load_scenario_text(const std::string& text, const std::string& name,
                            const LoadOptions& options) {
  Diagnostics diagnostics;
  ConfigNode root = load_yaml_text(text, name, diagnostics);
  return build(std::move(root), name, options, diagnostics);
}

Scenario load_scenario_tree(ConfigNode root, const std::string& name, const LoadOptions& options) {
  Diagnostics diagnostics;
  return build(std::move(root), name, options, diagnostics);
}

std::vector<std::string> scenario_inputs(const Scenario& s) {
  std::vector<std::string> files{s.file};
  for (const auto& [key, where] : s.origins) {
    if (std::find(files.begin(), files.end(), where.file) == files.end()) {
      files.push_back(where.file);
    }
  }
  if (!s.faults.replay.empty()) {
    std::filesystem::path replay(s.faults.replay);
    if (replay.is_relative()) replay = std::filesystem::path(s.file).parent_path() / replay;
    files.push_back(replay.string());
  }
  return files;
}

Diagnostics check_preset(PresetKind kind, const std::string& name, const LoadOptions& options) {
  Diagnostics diagnostics;
  const PresetLibrary library(options.preset_path);
  ConfigNode section = ConfigNode::map(Location{"<check>", 0, 0});
  section.set("preset", Location{"<check>", 0, 0},
              ConfigNode::scalar(name, Location{"<check>", 0, 0}));
  PresetResolver(library, diagnostics).resolve(section, kind, std::string(preset_kind_name(kind)));
  if (diagnostics.has_errors()) return diagnostics;
  Origins origins;
  ParseContext ctx{diagnostics, origins, true};
  switch (kind) {
    case PresetKind::hardware: {
      GpuSpec gpu;
      gpu_schema().parse(section, "gpu", gpu, ctx);
      break;
    }
    case PresetKind::clusters: {
      ClusterSpec cluster;
      cluster_schema().parse(section, "cluster", cluster, ctx);
      break;
    }
    case PresetKind::models: {
      ModelSpec model;
      model_schema().parse(section, "model", model, ctx);
      break;
    }
  }
  return diagnostics;
}

Resolved resolve_for_output(const Scenario& scenario) {
  // The processes written out include the Llama 3 mix: read back, they are the
  // whole list, so the mix must not be added to them again.
  if (scenario.faults.llama3_mix_added) {
    Scenario written = scenario;
    written.faults.llama3_mix = false;
    return scenario_schema().emit(written, "", written.origins);
  }
  return scenario_schema().emit(scenario, "", scenario.origins);
}

}  // namespace myriad::models::scenario
