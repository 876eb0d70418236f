// How long Baechi's placers take on a 10,000-op random layered graph over 8
// devices, and GLPK on m-SCT's linear program at its size cap (kSctLpMaxEdges).
// Each row's label holds every argument needed to rebuild its input; counters
// give the placement's makespan and feasibility beside the time it took.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include <string>

#include "models/place/op_graph.hpp"
#include "models/place/placer.hpp"
#include "models/place/sct_lp.hpp"

namespace myriad::models::place {
namespace {

constexpr int kDevices = 8;
constexpr double kLatencyS = 1e-5;
constexpr double kBandwidthBps = 1e10;
constexpr double kMemoryHeadroom = 1.5;  // device memory = headroom x graph memory / devices

Devices devices_for(const OpGraph& g) {
  double memory = 0;
  for (const OpNode& op : g.nodes) memory += op.memory_bytes;
  return {kDevices, kMemoryHeadroom * memory / kDevices, kLatencyS, kBandwidthBps};
}

std::string label(const LayeredGraphSpec& spec) {
  return "nodes=" + std::to_string(spec.nodes) + " width=" + std::to_string(spec.width) +
         " max_parents=" + std::to_string(spec.max_parents) + " seed=" + std::to_string(spec.seed) +
         " devices=" + std::to_string(kDevices) + " latency_s=1e-5 bandwidth_Bps=1e10 headroom=1.5";
}

// state.range(0): the Placer, as its underlying value.
void BM_Place(benchmark::State& state) {
  const LayeredGraphSpec spec{10000, 100, 3, 2020};
  const OpGraph g = random_layered_graph(spec);
  const Devices d = devices_for(g);
  const auto algorithm = static_cast<Placer>(state.range(0));
  Assignment p;
  for (auto _ : state) {
    p = place(g, d, algorithm);
    // The whole struct: benchmark 1.7.1's DoNotOptimize(p.makespan_s) garbles the double
    // under GCC 12 (its "+m,r" constraint; the counter below then reads noise).
    benchmark::DoNotOptimize(p);
  }
  state.SetLabel(std::string(placer_name(algorithm)) + " " + label(spec) +
                 " edges=" + std::to_string(g.edges.size()));
  state.counters["makespan_s"] = p.makespan_s;
  state.counters["feasible"] = p.feasible ? 1 : 0;
  // Against the bound no placement beats (the critical path, or all compute
  // shared evenly) and against the uniform split (the topological order cut
  // into equal runs of ops, as stages split layers).
  double compute = 0;
  for (const OpNode& op : g.nodes) compute += op.compute_s;
  const double bound = std::max(single_device_lower_bound_s(g), compute / d.count);
  state.counters["over_bound"] = p.makespan_s / bound;
  const std::vector<int> order = g.topo_order();
  std::vector<int> uniform(g.nodes.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    uniform[order[i]] = static_cast<int>(i * d.count / order.size());
  }
  const Assignment even = evaluate(g, d, uniform);
  state.counters["over_uniform"] = p.makespan_s / even.makespan_s;
  state.counters["uniform_feasible"] = even.feasible ? 1 : 0;
  state.counters["ops_per_s"] = benchmark::Counter(static_cast<double>(g.nodes.size()),
                                                   benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Place)
    ->ArgName("algorithm")
    ->Arg(static_cast<int>(Placer::m_topo))
    ->Arg(static_cast<int>(Placer::m_etf))
    ->Arg(static_cast<int>(Placer::m_sct))
    ->Unit(benchmark::kMillisecond);

// The LP alone on the largest graph m-SCT still solves it for (984 edges).
void BM_SctLpAtTheCap(benchmark::State& state) {
  const LayeredGraphSpec spec{600, 100, 3, 2020};
  const OpGraph g = random_layered_graph(spec);
  const Devices d = devices_for(g);
  if (!sct_lp_available()) {
    state.SkipWithError("built without GLPK (MYRIAD_HAVE_GLPK undefined)");
    return;
  }
  int favourites = 0;
  for (auto _ : state) {
    const auto f = sct_favourite_children(g, d);
    favourites = 0;
    for (int child : f->child) favourites += child >= 0 ? 1 : 0;
  }
  state.SetLabel(label(spec) + " edges=" + std::to_string(g.edges.size()) +
                 " cap=" + std::to_string(kSctLpMaxEdges));
  state.counters["favourites"] = favourites;
}
BENCHMARK(BM_SctLpAtTheCap)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace myriad::models::place

BENCHMARK_MAIN();
