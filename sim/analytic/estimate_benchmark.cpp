// Google Benchmark of the analytic engine: estimates per second on the GPT-3
// 175B / 12,288-GPU example and the MegaScale-MoE example, as full reports and
// as the summaries a layout search asks for (target: >= 100,000 on one core of
// the dev machine). The step program's is sim/program/program_benchmark.cpp.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/pipeline_makespan.hpp"

namespace {

void run(benchmark::State& state, const std::string& example, const std::string& profile_name,
         myriad::sim::Detail detail) {
  const myriad::models::scenario::LoadOptions options{{MYRIAD_SCENARIO_DIR}};
  const auto scenario = myriad::models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/" + example + ".yaml", options);
  // Put on the scenario's GPU once, as a search does.
  const auto profile = myriad::sim::on_hardware(
      myriad::sim::load_profile(std::string(MYRIAD_PROFILE_DIR) + "/" + profile_name + ".json"),
      scenario.cluster.gpu);
  for (auto _ : state) {
    auto report = myriad::sim::estimate(scenario, profile, detail);
    benchmark::DoNotOptimize(report.step_time_s);
  }
  state.counters["estimates_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_Estimate175B12288(benchmark::State& state) {
  run(state, "examples/gpt3-175b-megascale-12288", "A100-80GB", myriad::sim::Detail::full);
}
void BM_EstimateSummary175B12288(benchmark::State& state) {
  run(state, "examples/gpt3-175b-megascale-12288", "A100-80GB", myriad::sim::Detail::summary);
}
void BM_EstimateMoE352B240(benchmark::State& state) {
  run(state, "examples/megascale-moe-352b-h800-240", "H800", myriad::sim::Detail::full);
}
void BM_EstimateSummaryMoE352B240(benchmark::State& state) {
  run(state, "examples/megascale-moe-352b-h800-240", "H800", myriad::sim::Detail::summary);
}
// Issue 39's presets (target: >= 50,000 estimates/s): DeepSeek-V3 as its
// example (MLA, 3 dense then MoE layers, MTP, node-limited routing, 120
// micro-batches on 16 stages); Kimi K2, Qwen3-235B-A22B and Llama 4 Maverick
// (dense and MoE layers alternating) as scenarios/bench/ has them.
void BM_EstimateDeepSeekV3(benchmark::State& state) {
  run(state, "examples/deepseek-v3-h800-2048", "H800", myriad::sim::Detail::full);
}
void BM_EstimateSummaryDeepSeekV3(benchmark::State& state) {
  run(state, "examples/deepseek-v3-h800-2048", "H800", myriad::sim::Detail::summary);
}
void BM_EstimateSummaryKimiK2(benchmark::State& state) {
  run(state, "bench/kimi-k2-h800-2048", "H800", myriad::sim::Detail::summary);
}
void BM_EstimateSummaryQwen3(benchmark::State& state) {
  run(state, "bench/qwen3-235b-h100-256", "H100", myriad::sim::Detail::summary);
}
void BM_EstimateSummaryMaverick(benchmark::State& state) {
  run(state, "bench/llama4-maverick-h100-512", "H100", myriad::sim::Detail::summary);
}

// The interleaved pipeline's sweep alone, at the 175B example's schedule (8
// stages of 6 chunks, 32 micro-batches: 3,072 passes).
void BM_PipelineMakespan8x6x32(benchmark::State& state) {
  const auto& graph = myriad::sim::cached_schedule_graph(8, 6, 32);
  std::vector<double> durations(static_cast<std::size_t>(graph.slots()));
  for (std::size_t k = 0; k < durations.size(); ++k)
    durations[k] = 1.0 + 0.01 * static_cast<double>(k);
  for (auto _ : state) {
    benchmark::DoNotOptimize(myriad::sim::pipeline_makespan(graph, durations, {0.05, true}));
  }
  state.counters["passes_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * graph.nodes.size()), benchmark::Counter::kIsRate);
}

// The same with each stage's data-parallel stream beside it (overlap.dp): chunk
// gathers as long as 6 forwards at the start, reductions as long as 5 backwards
// a chunk at the end, taking none (/0) or 20 % (/2) of the compute rate.
void BM_PipelineWithDp8x6x32(benchmark::State& state) {
  const auto& graph = myriad::sim::cached_schedule_graph(8, 6, 32);
  std::vector<double> durations(static_cast<std::size_t>(graph.slots()));
  for (std::size_t k = 0; k < durations.size(); ++k)
    durations[k] = 1.0 + 0.01 * static_cast<double>(k);
  myriad::sim::DpStream dp;
  dp.buckets = 4;
  dp.first_gather = {0.25 / 6, 1.5};
  dp.first_rest = {0.75 / 6, 4.5};
  dp.chunk_gather = {1.0 / 6, 6};
  dp.early_reduce = {0.75 / 6, 7.5};
  dp.last_reduce = {0.25 / 6, 2.5};
  for (auto _ : state) {
    benchmark::DoNotOptimize(myriad::sim::pipeline_with_dp(graph, durations, {0.05, true}, dp,
                                                           static_cast<double>(state.range(0)) / 10)
                                 .end);
  }
  state.counters["passes_per_s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * graph.nodes.size()), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_Estimate175B12288);
BENCHMARK(BM_EstimateSummary175B12288);
BENCHMARK(BM_EstimateMoE352B240);
BENCHMARK(BM_EstimateSummaryMoE352B240);
BENCHMARK(BM_EstimateDeepSeekV3);
BENCHMARK(BM_EstimateSummaryDeepSeekV3);
BENCHMARK(BM_EstimateSummaryKimiK2);
BENCHMARK(BM_EstimateSummaryQwen3);
BENCHMARK(BM_EstimateSummaryMaverick);
BENCHMARK(BM_PipelineMakespan8x6x32);
BENCHMARK(BM_PipelineWithDp8x6x32)->Arg(0)->Arg(2);

}  // namespace

BENCHMARK_MAIN();
