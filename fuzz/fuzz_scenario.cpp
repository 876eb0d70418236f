// Fuzzes the scenario loader: YAML text in, a checked Scenario or a
// ScenarioError listing the problems out. Presets resolve against the shipped
// scenarios/ and the test presets (a preset cycle, a preset with a bad key), as
// the malformed corpus test loads them.
//
// Property: what the loader accepts, `myriad check` prints as YAML that loads again.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include "fuzz/property.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolved.hpp"
#include "myriad_source_paths.hpp"

namespace {

using myriad::models::scenario::LoadOptions;

const LoadOptions& presets() {
  static const LoadOptions options{{MYRIAD_TEST_PRESET_DIR, MYRIAD_SCENARIO_DIR}};
  return options;
}

void check_reloads(const std::string& printed) {
  try {
    (void)myriad::models::scenario::load_scenario_text(printed, "resolved.yaml", presets());
  } catch (const std::exception& e) {
    myriad::fuzz::require(false, "the resolved scenario does not load again",
                          std::string(e.what()) + "\n--- resolved:\n" + printed);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string printed;
  try {
    const auto scenario =
        myriad::models::scenario::load_scenario_text(text, "fuzz.yaml", presets());
    const auto resolved = myriad::models::scenario::resolve_for_output(scenario);
    (void)myriad::models::scenario::to_json(resolved).dump();
    (void)myriad::models::scenario::to_yaml(resolved, true);
    printed = myriad::models::scenario::to_yaml(resolved, false);
  } catch (const std::exception&) {
    return 0;  // rejected, with a message: what the loader is for
  }
  check_reloads(printed);
  return 0;
}
