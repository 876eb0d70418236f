// Google Benchmark of the layout search behind `myriad plan`: one search over a
// million candidate layouts (Llama 3 405B on 16,384 H100, the default space over
// 18 global batches), with candidates, pruned and estimated per second (target:
// a million candidates in under a minute on the dev machine's 2 cores; this is
// one process: `mpirun -n 2` splits it, docs/planning.md).
#include <benchmark/benchmark.h>

#include <string>

#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/planning/layout_search.hpp"

namespace {

void BM_PlanSearchMillion405B(benchmark::State& state) {
  const myriad::models::scenario::LoadOptions options{{MYRIAD_SCENARIO_DIR}};
  const auto scenario = myriad::models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-405b-h100-16384-campaign.yaml", options);
  const auto profile = myriad::sim::load_profile(std::string(MYRIAD_PROFILE_DIR) + "/H100.json");
  myriad::sim::SearchSpace space = myriad::sim::default_space(scenario);
  space.global_batch.clear();
  for (int b = 512; space.global_batch.size() < 18; b += 256) space.global_batch.push_back(b);
  myriad::sim::PlanOptions plan;
  plan.top = 10;
  myriad::sim::PlanResult r;
  for (auto _ : state) {
    r = myriad::sim::search_layouts(scenario, profile, space, plan);
    benchmark::DoNotOptimize(r.top.data());
  }
  const auto rate = [&](std::size_t n) {
    return benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                              benchmark::Counter::kIsRate);
  };
  state.counters["candidates"] = static_cast<double>(r.candidates);
  state.counters["candidates_per_s"] = rate(r.candidates);
  state.counters["pruned_per_s"] = rate(r.pruned);
  state.counters["evaluated_per_s"] = rate(r.evaluated);
}
BENCHMARK(BM_PlanSearchMillion405B)->Iterations(1)->Unit(benchmark::kSecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
