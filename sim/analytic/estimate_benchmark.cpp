// Google Benchmark of the analytic engine: estimates per second on the GPT-3
// 175B / 12,288-GPU example (target: >= 100,000 on one core of the dev machine).
#include <benchmark/benchmark.h>

#include "models/scenario/loader.hpp"
#include "sim/analytic/estimator.hpp"

namespace {

void BM_Estimate175B12288(benchmark::State& state) {
  const myriad::scenario::LoadOptions options{{MYRIAD_SCENARIO_DIR}};
  const auto scenario = myriad::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/gpt3-175b-megascale-12288.yaml", options);
  const auto profile =
      myriad::sim::load_profile(std::string(MYRIAD_PROFILE_DIR) + "/A100-80GB.json");
  for (auto _ : state) {
    auto report = myriad::sim::estimate(scenario, profile);
    benchmark::DoNotOptimize(report.step_time_s);
  }
  state.counters["estimates_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Estimate175B12288);

}  // namespace

BENCHMARK_MAIN();
