// Google Benchmark of the analytic engine: estimates per second on the GPT-3
// 175B / 12,288-GPU example and the MegaScale-MoE example, full reports and the
// summaries a layout search asks for (target: >= 100,000 on one core of the
// dev machine).
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

// What a layout search asks: the summary (no op or collective tables), the
// profile already on the scenario's GPU.
void BM_EstimateSummary175B12288(benchmark::State& state) {
  const myriad::scenario::LoadOptions options{{MYRIAD_SCENARIO_DIR}};
  const auto scenario = myriad::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/gpt3-175b-megascale-12288.yaml", options);
  const auto profile = myriad::sim::on_hardware(
      myriad::sim::load_profile(std::string(MYRIAD_PROFILE_DIR) + "/A100-80GB.json"),
      scenario.cluster.gpu);
  for (auto _ : state) {
    auto report = myriad::sim::estimate(scenario, profile, myriad::sim::Detail::summary);
    benchmark::DoNotOptimize(report.step_time_s);
  }
  state.counters["estimates_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EstimateSummary175B12288);

// A mixture of experts: the MegaScale-MoE example (expert all-to-alls priced).
void BM_EstimateMoE352B240(benchmark::State& state) {
  const myriad::scenario::LoadOptions options{{MYRIAD_SCENARIO_DIR}};
  const auto scenario = myriad::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/megascale-moe-352b-h800-240.yaml", options);
  const auto profile = myriad::sim::load_profile(std::string(MYRIAD_PROFILE_DIR) + "/H800.json");
  for (auto _ : state) {
    auto report = myriad::sim::estimate(scenario, profile);
    benchmark::DoNotOptimize(report.step_time_s);
  }
  state.counters["estimates_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EstimateMoE352B240);

}  // namespace

BENCHMARK_MAIN();
