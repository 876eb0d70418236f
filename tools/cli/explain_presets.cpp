// `myriad explain presets` and `myriad explain profiles`: what hardware, cluster
// and model presets exist, and which device profiles, with where each profile's
// rates come from (measured, published, assumed) and which GPUs borrow them.
#include "tools/cli/explain_presets.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "models/scenario/config_tree.hpp"
#include "models/scenario/preset_library.hpp"
#include "sim/cost/device_profile.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

using models::scenario::ConfigNode;
using models::scenario::PresetKind;

std::string scalar(const ConfigNode& root, const std::string& key) {
  const ConfigNode* n = root.find(key);
  return n != nullptr && n->is_scalar() ? n->text() : std::string{};
}

ConfigNode read_preset(const models::scenario::PresetLibrary& lib, PresetKind kind,
                       const std::string& name) {
  models::scenario::Diagnostics ignored;  // `myriad check` reports a bad preset; a listing lists
  const auto file = lib.find(kind, name);
  return file ? models::scenario::load_yaml_file(file->string(), ignored) : ConfigNode{};
}

// The GPU of a cluster preset: `gpu: NAME` or `gpu: {preset: NAME, ...}`.
std::string cluster_gpu(const ConfigNode& root) {
  const ConfigNode* gpu = root.find("gpu");
  if (gpu == nullptr) return scalar(root, "preset").empty() ? "" : "(from its preset)";
  return gpu->is_scalar() ? gpu->text() : scalar(*gpu, "preset");
}

std::vector<std::string> profile_names(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return out;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") out.push_back(entry.path().stem().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// "3 measured, 4 published, 6 assumed" over the rates (not the reference hardware).
std::string origin_counts(const sim::DeviceProfile& p) {
  std::map<std::string, int> counts;
  for (const auto& [key, param] : p.parameters) {
    if (param.origin != "datasheet") ++counts[param.origin];
  }
  std::string out;
  for (const char* origin : sim::profile_origins()) {
    if (counts[origin] == 0) continue;
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", counts[origin],
                       std::string_view(origin) == "assumption" ? "assumed" : origin);
  }
  return out;
}

}  // namespace

std::string presets_text(const std::vector<std::filesystem::path>& preset_path,
                         const std::filesystem::path& profile_dir) {
  const models::scenario::PresetLibrary lib(preset_path);
  const std::vector<std::string> profiles = profile_names(profile_dir);
  std::string out;
  Table gpus({"hardware preset", "GPU", "bf16 peak", "HBM", "device profile"}, "lllll");
  for (const auto& name : lib.names(PresetKind::hardware)) {
    const ConfigNode root = read_preset(lib, PresetKind::hardware, name);
    std::string profile = scalar(root, "profile");
    if (profile.empty()) profile = name;
    const bool exists = std::find(profiles.begin(), profiles.end(), profile) != profiles.end();
    std::string note = profile == name ? profile : profile + " (borrowed)";
    if (!exists) note = profile + " (missing)";
    gpus.add({name, scalar(root, "name"), scalar(root, "bf16_peak"), scalar(root, "hbm_capacity"),
              note});
  }
  out += gpus.str() + "\n";
  Table clusters({"cluster preset", "name", "GPU", "GPUs", "per node"}, "lllrr");
  for (const auto& name : lib.names(PresetKind::clusters)) {
    const ConfigNode root = read_preset(lib, PresetKind::clusters, name);
    clusters.add({name, scalar(root, "name"), cluster_gpu(root), scalar(root, "gpus"),
                  scalar(root, "gpus_per_node")});
  }
  out += clusters.str() + "\n";
  Table models({"model preset", "name", "layers", "hidden"}, "llrr");
  for (const auto& name : lib.names(PresetKind::models)) {
    const ConfigNode root = read_preset(lib, PresetKind::models, name);
    // A preset built on another names only what it changes.
    const std::string base = scalar(root, "preset");
    const auto or_base = [&](const std::string& key) {
      const std::string v = scalar(root, key);
      return v.empty() && !base.empty() ? "as " + base : v;
    };
    models.add({name, scalar(root, "name"), or_base("layers"), or_base("hidden")});
  }
  out += models.str();
  out += fmt::format(
      "\nPresets are searched in --preset-path folders, MYRIAD_PRESET_PATH, then {}.\n"
      "A GPU takes the device profile its preset names (`profile:`, else its own name);\n"
      "`myriad explain profiles` says where each profile's rates come from.\n",
      preset_path.empty() ? std::string("(none)") : preset_path.back().string());
  return out;
}

std::string profiles_text(const std::filesystem::path& profile_dir) {
  std::string out;
  Table t({"device profile", "rates achieved on", "rates", "how it was made"}, "llll");
  std::string problems;
  for (const auto& name : profile_names(profile_dir)) {
    const auto file = (profile_dir / (name + ".json")).string();
    try {
      const sim::DeviceProfile p = sim::load_profile(file);
      t.add({name, p.device, origin_counts(p), p.kind});
    } catch (const std::runtime_error& e) {
      problems += fmt::format("  {}: {}\n", name, e.what());
    }
  }
  out += t.str();
  if (!problems.empty()) out += "unreadable:\n" + problems;
  out += fmt::format(
      "\nProfiles in {}. A profile's rates are relative to the hardware it names (peaks, HBM\n"
      "and NVLink bandwidth): the engines put them on the scenario's GPU, so a GPU without a\n"
      "profile borrows one with `cluster.gpu.profile: NAME`. Each parameter's origin and note:\n"
      "the JSON file; `myriad estimate --json` names the profile a report used.\n",
      profile_dir.string());
  return out;
}

}  // namespace myriad::cli
