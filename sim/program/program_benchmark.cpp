// Google Benchmark of the step program (sim/program): building it and playing it
// with the evaluator, the closed form's oracle, on the GPT-3 175B / 12,288-GPU
// example and the MegaScale-MoE one (target: milliseconds for the first).
#include <benchmark/benchmark.h>

#include <string>
#include <utility>

#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/program/evaluator.hpp"
#include "sim/program/step_program.hpp"

namespace {

struct Loaded {
  myriad::models::scenario::Scenario scenario;
  myriad::sim::DeviceProfile profile;
};

Loaded load(const std::string& example, const std::string& profile_name) {
  const myriad::models::scenario::LoadOptions options{{MYRIAD_SCENARIO_DIR}};
  auto scenario = myriad::models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/" + example + ".yaml", options);
  auto profile = myriad::sim::on_hardware(
      myriad::sim::load_profile(std::string(MYRIAD_PROFILE_DIR) + "/" + profile_name + ".json"),
      scenario.cluster.gpu);
  return {std::move(scenario), std::move(profile)};
}

// Built and played: what checking one layout against the oracle costs.
void program(benchmark::State& state, const std::string& example, const std::string& profile_name) {
  const Loaded l = load(example, profile_name);
  std::size_t tasks = 0;
  for (auto _ : state) {
    const auto p = myriad::sim::build_step_program(l.scenario, l.profile);
    tasks = p.tasks();
    benchmark::DoNotOptimize(myriad::sim::evaluate_program(p).step_time_s);
  }
  state.counters["tasks"] = static_cast<double>(tasks);
}

void BM_Program175B12288(benchmark::State& state) {
  program(state, "gpt3-175b-megascale-12288", "A100-80GB");
}
void BM_ProgramMoE352B240(benchmark::State& state) {
  program(state, "megascale-moe-352b-h800-240", "H800");
}
BENCHMARK(BM_Program175B12288)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ProgramMoE352B240)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
