#include "tools/cli/place_op_grain.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "sim/stage_split/op_grain.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

struct Row {
  sim::OpGrainPlacement placement;
  double placed_ms = -1;  // -1: a layer split, placed at layer grain
};

double fullest(const models::place::Assignment& p) {
  double most = 0;
  for (const double bytes : p.memory_bytes) most = std::max(most, bytes);
  return most;
}

// The layer splits, as found at layer grain, then each placer's own at op grain (timed).
std::vector<Row> op_grain_rows(
    const sim::OpGrainGraph& g,
    const std::vector<std::pair<sim::StageSplit, std::vector<int>>>& layer_splits,
    const std::vector<sim::StageSplit>& algorithms) {
  std::vector<Row> rows;
  for (const auto& [a, split] : layer_splits) {
    if (split.empty()) continue;
    rows.push_back({sim::split_on_ops(g, split, a), -1});
  }
  for (const sim::StageSplit a : algorithms) {
    if (a == sim::StageSplit::uniform || a == sim::StageSplit::balanced) continue;
    const auto start = std::chrono::steady_clock::now();
    sim::OpGrainPlacement p = sim::place_ops(g, a);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    rows.push_back({std::move(p), ms});
  }
  return rows;
}

// The notes under the table, and the fastest feasible op-grain placement stage by stage.
void print_op_grain_notes(const sim::OpGrainGraph& g, const std::vector<Row>& rows, const Row* best,
                          std::ostream& out) {
  out << "Graph makespan: the list schedule of the unrolled op graph. Layer splits (grain "
         "\"layers\") are placed as found at layer grain, each layer's ops on its stage. A split "
         "inside a layer has no scenario keys: op-grain placements are priced on the graph only, "
         "not by the engines. Fullest stage: the graph's memory, where a layer carries the mean "
         "micro-batches in flight (approximate; the layer table above checks each split with the "
         "memory model).\n";
  for (const Row& r : rows) {
    if (r.placed_ms >= 0) {
      out << fmt::format("{} (ops): {}\n", sim::stage_split_name(r.placement.algorithm),
                         r.placement.note);
    }
  }
  if (best) {
    out << fmt::format("\n{} at op grain, each stage's ops:\n",
                       sim::stage_split_name(best->placement.algorithm));
    const std::vector<std::string> ranges = sim::stage_ranges(g, best->placement);
    for (std::size_t k = 0; k < ranges.size(); ++k) {
      out << fmt::format("  stage {}: {}\n", k, ranges[k]);
    }
  }
}

}  // namespace

nlohmann::json print_op_grain(
    const models::scenario::Scenario& s, const sim::DeviceProfile& profile,
    const sim::PipelineGraph& units,
    const std::vector<std::pair<sim::StageSplit, std::vector<int>>>& layer_splits,
    const std::vector<sim::StageSplit>& algorithms, std::ostream& out) {
  const sim::OpGrainGraph g = sim::op_grain_graph(s, profile, units);
  out << fmt::format(
      "\nOp grain: {} ops a pass ({} a layer), {} of {} micro-batches unrolled, {} ops, {} "
      "edges; the critical path {}\n",
      g.pieces(), std::count(g.piece_unit.begin(), g.piece_unit.end(), 1), g.micro_batches,
      g.micro_batches_in_step, g.graph.nodes.size(), g.graph.edges.size(),
      cli::seconds(models::place::single_device_lower_bound_s(g.graph)));
  const std::vector<Row> rows = op_grain_rows(g, layer_splits, algorithms);
  const Row* uniform = nullptr;
  for (const Row& r : rows) {
    if (r.placed_ms < 0 && r.placement.algorithm == sim::StageSplit::uniform) uniform = &r;
  }
  Table t({"placement", "grain", "placed in", "graph makespan", "vs uniform", "stages used",
           "layers cut", "fullest stage", "fits"},
          "llrrrrrrl");
  nlohmann::json j = {{"ops_a_pass", g.pieces()},
                      {"micro_batches", g.micro_batches},
                      {"ops", g.graph.nodes.size()},
                      {"edges", g.graph.edges.size()},
                      {"placements", nlohmann::json::array()}};
  const Row* best = nullptr;
  for (const Row& r : rows) {
    const sim::OpGrainPlacement& p = r.placement;
    const bool layer = r.placed_ms < 0;
    t.add({sim::stage_split_name(p.algorithm), layer ? "layers" : "ops",
           layer ? "-" : fmt::format("{:.1f} ms", r.placed_ms), cli::seconds(p.graph.makespan_s),
           uniform
               ? fmt::format("{:+.1f} %",
                             100 * (p.graph.makespan_s / uniform->placement.graph.makespan_s - 1))
               : "-",
           fmt::format("{} of {}", p.stages_used, g.devices.count), std::to_string(p.layers_cut),
           percent(fullest(p.graph) / g.devices.memory_bytes), p.graph.feasible ? "yes" : "no"});
    nlohmann::json stages = nlohmann::json::array();
    for (const std::string& range : sim::stage_ranges(g, p)) stages.push_back(range);
    j["placements"].push_back(
        {{"algorithm", sim::stage_split_name(p.algorithm)},
         {"grain", layer ? "layers" : "ops"},
         {"placed_ms", layer ? nlohmann::json(nullptr) : nlohmann::json(r.placed_ms)},
         {"graph_makespan_s", p.graph.makespan_s},
         {"graph_feasible", p.graph.feasible},
         {"stages_used", p.stages_used},
         {"layers_cut", p.layers_cut},
         {"contiguous", p.contiguous},
         {"stage_ops", stages},
         {"note", p.note}});
    if (!layer && p.graph.feasible &&
        (!best || p.graph.makespan_s < best->placement.graph.makespan_s)) {
      best = &r;
    }
  }
  out << t.str();
  print_op_grain_notes(g, rows, best, out);
  return j;
}

}  // namespace myriad::cli
