// The shipped presets and device profiles, as the sim tests load them.
#pragma once

#include <map>
#include <string>

#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim::testing {

inline const models::scenario::LoadOptions kShipped{{MYRIAD_SCENARIO_DIR}};

// A shipped device profile by name, loaded once.
inline const DeviceProfile& shipped_profile(const std::string& name) {
  static std::map<std::string, DeviceProfile> loaded;
  const auto it = loaded.find(name);
  if (it != loaded.end()) return it->second;
  return loaded.emplace(name, load_profile(std::string(MYRIAD_PROFILE_DIR) + "/" + name + ".json"))
      .first->second;
}

inline const DeviceProfile& a100() { return shipped_profile("A100-80GB"); }
inline const DeviceProfile& h100() { return shipped_profile("H100"); }

}  // namespace myriad::sim::testing
