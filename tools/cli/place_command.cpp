// `myriad place SCENARIO`: which layers each pipeline stage holds, placed by
// Baechi's m-TOPO, m-ETF and m-SCT on the scenario's pipeline unrolled over
// micro-batches (sim/stage_split/pipeline_split.hpp), beside the scenario's own
// split and the time-balanced one; every placement priced by the analytic engine
// and played by the step engine, and the chosen one written back as
// parallelism.stage_layers.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <ostream>

#include "models/place/sct_lp.hpp"
#include "models/plan/memory.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/loader.hpp"
#include "models/scenario/resolved.hpp"
#include "models/scenario/run_title.hpp"
#include "models/scenario/text_file.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/stage_split/op_grain.hpp"
#include "sim/stage_split/pipeline_split.hpp"
#include "sim/step/step_in_child.hpp"
#include "tools/cli/place_op_grain.hpp"
#include "tools/cli/place_options.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

// One placement, priced.
struct Priced {
  sim::StagePlacement placement;
  double placed_ms = 0;  // wall time of the algorithm on this machine
  std::optional<sim::StepReport> analytic;
  std::vector<models::MemoryBreakdown> stage_memory;
  std::optional<double> simulated_s;
  std::string simulate_error;
};

std::string bandwidth_text(double Bps) {
  return std::isfinite(Bps) ? fmt::format("{:.4g} GB/s", Bps / 1e9) : "unlimited";
}

Priced price(const models::scenario::Scenario& s, const sim::DeviceProfile& profile,
             const sim::PipelineGraph& g, sim::StageSplit a, bool simulate,
             std::map<std::vector<int>, Priced>& by_split, std::ostream& out_stream) {
  const auto start = std::chrono::steady_clock::now();  // the algorithm's wall time, for the user
  sim::StagePlacement placement = sim::place_stages(s, g, a);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  Priced out;
  const auto same = by_split.find(placement.stage_layers);
  if (!placement.stage_layers.empty() && same != by_split.end()) {
    out = same->second;  // the same split: the engines' figures are the same
  } else if (!placement.stage_layers.empty()) {
    const models::scenario::Scenario placed = sim::with_stage_layers(s, placement.stage_layers);
    out.analytic = sim::estimate(placed, profile, sim::Detail::summary);
    const models::StepPlan plan = models::plan_step(placed);
    for (int k = 0; k < s.parallelism.pp; ++k) {
      out.stage_memory.push_back(models::stage_memory(placed, plan, k));
    }
    if (simulate) {
      out_stream.flush();  // the child inherits what is buffered
      const sim::ChildStep step = sim::simulate_step_in_child(placed, profile);
      if (step.ok) {
        out.simulated_s = step.step_time_s;
      } else {
        out.simulate_error = step.error;
      }
    }
    by_split.emplace(placement.stage_layers, out);
  }
  out.placement = std::move(placement);
  out.placed_ms = ms;
  return out;
}

nlohmann::json placement_json(const Priced& p, const sim::DeviceProfile& profile) {
  const sim::StagePlacement& sp = p.placement;
  nlohmann::json j = {{"algorithm", sim::stage_split_name(sp.algorithm)},
                      {"placed_ms", p.placed_ms},
                      {"graph_makespan_s", sp.graph.makespan_s},
                      {"graph_feasible", sp.graph.feasible},
                      {"stages_used", sp.stages_used},
                      {"contiguous", sp.contiguous},
                      {"layers_moved", sp.layers_moved},
                      {"rounded", sp.rounded},
                      {"note", sp.note},
                      {"stage_layers", sp.stage_layers}};
  if (p.analytic) {
    j["analytic"] = {{"step_time_s", p.analytic->step_time_s},
                     {"mfu", p.analytic->mfu},
                     {"fits", p.analytic->fits},
                     {"memory_needed_bytes", p.analytic->memory_needed()},
                     {"memory_usable_bytes", p.analytic->memory_usable()}};
    nlohmann::json stages = nlohmann::json::array();
    for (std::size_t k = 0; k < p.stage_memory.size(); ++k) {
      const double bytes = p.stage_memory[k].total() * (1 + profile.memory_fragmentation);
      stages.push_back({{"stage", k},
                        {"layers", sp.stage_layers[k]},
                        {"memory_bytes", bytes},
                        {"memory_dominant", p.stage_memory[k].dominant()}});
    }
    j["stages"] = stages;
  }
  j["simulated_step_time_s"] = p.simulated_s ? nlohmann::json(*p.simulated_s) : nullptr;
  if (!p.simulate_error.empty()) j["simulate_error"] = p.simulate_error;
  return j;
}

// The placement to write: the one asked for, else the fastest that fits, by the
// step engine where it ran.
const Priced* chosen(const std::vector<Priced>& all) {
  const Priced* best = nullptr;
  const auto time = [](const Priced& p) {
    return p.simulated_s ? *p.simulated_s : p.analytic->step_time_s;
  };
  for (const Priced& p : all) {
    if (!p.analytic || !p.analytic->fits) continue;
    if (!best || time(p) < time(*best)) best = &p;
  }
  return best;
}

void print_stages(const Priced& p, const sim::PipelineGraph& g, const sim::DeviceProfile& profile,
                  std::ostream& out) {
  const int stages = static_cast<int>(p.placement.stage_layers.size());
  Table t({"stage", "layers", "holds", "time a micro-batch", "memory", "of usable"}, "rrlrrr");
  const int v = g.virtual_stages;
  for (int k = 0, before = 0; k < stages; before += p.placement.stage_layers[k++]) {
    const int layers = p.placement.stage_layers[k];
    const double seconds = g.stage_seconds(before, layers, v, k == 0, k == stages - 1);
    std::string holds = k == 0 ? "embedding" : "";
    if (k == stages - 1) holds += holds.empty() ? "head, loss" : ", head, loss";
    const double bytes = p.stage_memory[k].total() * (1 + profile.memory_fragmentation);
    t.add({std::to_string(k), std::to_string(layers), holds, cli::seconds(seconds),
           gibibytes(bytes), percent(bytes / p.analytic->memory_usable())});
  }
  out << t.str();
}

// The algorithms --algo names (all of them by default); nothing, said, on a bad name.
std::optional<std::vector<sim::StageSplit>> place_algorithms(const PlaceOptions& o, Streams io) {
  std::vector<sim::StageSplit> algorithms;
  for (const auto& name : o.algorithms) {
    if (name == "all") {
      algorithms.assign(std::begin(sim::kStageAlgorithms), std::end(sim::kStageAlgorithms));
      continue;
    }
    const auto a = sim::parse_stage_algorithm(name);
    if (!a) {
      io.err << fmt::format(
          "place: error: --algo {}: expected uniform, m-topo, m-etf, m-sct, balanced or all\n",
          models::scenario::printable(name));
      return std::nullopt;
    }
    if (std::find(algorithms.begin(), algorithms.end(), *a) == algorithms.end()) {
      algorithms.push_back(*a);
    }
  }
  if (algorithms.empty()) {
    algorithms.assign(std::begin(sim::kStageAlgorithms), std::end(sim::kStageAlgorithms));
  }
  return algorithms;
}

// The scenario's pipeline as a graph; nothing, said, when it is too large to
// place (refused before it is built: its size is the layers' times the ops a
// layer at op grain, and placing it costs time and memory with it) or cannot be built.
std::optional<sim::PipelineGraph> place_graph(const PlaceOptions& o,
                                              const models::scenario::Scenario& s,
                                              const sim::DeviceProfile& profile, Streams io) {
  const bool by_op = o.grain == "op";
  const sim::OpGrainSize op_size = by_op ? sim::op_grain_size(s) : sim::OpGrainSize{};
  const std::size_t least_ops = by_op ? op_size.least_ops : sim::pipeline_graph_least_ops(s);
  if (least_ops > sim::kPlaceMostOps) {
    io.err << fmt::format(
        "place: error: model.layers {}: the graph at --grain {} has at least {} ops ({} a "
        "layer, each a forward and a backward node, one micro-batch), more than the {} place "
        "handles (about 5 s and 250 MB at that size); fewer layers{}\n",
        s.model.layers, o.grain, least_ops,
        by_op ? fmt::format("{} pieces", op_size.pieces_a_layer) : std::string("one piece"),
        sim::kPlaceMostOps, by_op ? ", or --grain layer" : "");
    return std::nullopt;
  }
  try {
    return sim::pipeline_graph(s, profile);
  } catch (const std::invalid_argument& e) {
    io.err << fmt::format("{}: error: {}\n", s.file, e.what());
    return std::nullopt;
  }
}

// The lines above the table: the pipeline, its graph, its passes and its bound.
std::string place_header(const PlaceOptions& o, const models::scenario::Scenario& s,
                         const sim::PipelineGraph& g, double bound) {
  const auto& par = s.parallelism;
  const std::string title = models::scenario::run_title(s);
  std::string out = fmt::format("myriad place {}{}\n", scenario_name(o.scenario),
                                title == s.file ? "" : ": " + title);
  out += fmt::format(
      "pipeline: {} stages of {} GPUs (tp {}, cp {}), {} layers, {} micro-batches a step{}\n",
      par.pp, par.tp * par.cp, par.tp, par.cp, g.layers, g.micro_batches_in_step,
      par.virtual_stages > 1 ? fmt::format(", {} virtual stages", par.virtual_stages) : "");
  out += fmt::format(
      "graph: {} micro-batches unrolled, {} ops, {} edges; a transfer {} + bytes / {} "
      "({:.4g} MB a micro-batch); {} usable a GPU\n",
      g.micro_batches, g.graph.nodes.size(), g.graph.edges.size(),
      cli::seconds(g.devices.latency_s), bandwidth_text(g.devices.bandwidth_Bps),
      g.transfer_bytes / 1e6, gibibytes(g.usable_bytes));
  out += fmt::format("a micro-batch's pass: embedding {}, a layer {}, head and loss {}\n",
                     cli::seconds(g.forward_s.front() + g.backward_s.front()),
                     cli::seconds(g.forward_s[1] + g.backward_s[1]),
                     cli::seconds(g.forward_s.back() + g.backward_s.back()));
  out +=
      fmt::format("the graph's critical path (no placement runs the unrolled graph sooner): {}\n",
                  cli::seconds(bound));
  out += fmt::format(
      "m-SCT's linear program: {}\n\n",
      !models::place::sct_lp_available()
          ? "GLPK absent from this build (MYRIAD_GLPK=OFF or no libglpk-dev): greedy favourites"
      : g.graph.edges.size() > static_cast<std::size_t>(models::place::kSctLpMaxEdges)
          ? fmt::format("skipped, {} edges > {}: greedy favourites", g.graph.edges.size(),
                        models::place::kSctLpMaxEdges)
          : std::string("solved by GLPK"));
  return out;
}

// Every placement side by side, then each one's note.
std::string placements_text(const std::vector<Priced>& all, bool no_simulate) {
  const Priced* uniform = nullptr;
  for (const Priced& p : all) {
    if (p.placement.algorithm == sim::StageSplit::uniform && p.analytic) uniform = &p;
  }
  Table t({"algorithm", "placed in", "graph makespan", "stage layers", "analytic step",
           "vs uniform", "simulated step", "fullest stage", "fits"},
          "lrrlrrrrl");
  for (const Priced& p : all) {
    const sim::StagePlacement& sp = p.placement;
    const bool priced = p.analytic.has_value();
    t.add({sim::stage_split_name(sp.algorithm), fmt::format("{:.1f} ms", p.placed_ms),
           cli::seconds(sp.graph.makespan_s),
           sp.stage_layers.empty() ? "-" : stage_layers_text(sp.stage_layers),
           priced ? cli::seconds(p.analytic->step_time_s) : "-",
           priced && uniform
               ? fmt::format("{:+.1f} %",
                             100 * (p.analytic->step_time_s / uniform->analytic->step_time_s - 1))
               : "-",
           p.simulated_s              ? cli::seconds(*p.simulated_s)
           : (no_simulate || !priced) ? "-"
                                      : "failed",
           priced ? percent(p.analytic->memory_needed() / p.analytic->memory_usable()) : "-",
           priced ? (p.analytic->fits ? "yes" : "no") : "-"});
  }
  std::string out = t.str() + "\n";
  for (const Priced& p : all) {
    const std::string name = sim::stage_split_name(p.placement.algorithm);
    const bool named = p.placement.note.rfind(name + ":", 0) == 0;
    out += (named ? "" : name + ": ") + p.placement.note + "\n";
    if (!p.simulate_error.empty()) out += "  the step engine failed: " + p.simulate_error + "\n";
  }
  return out +
         "\nGraph makespan: the list schedule of the unrolled graph under each placement "
         "(Baechi's objective). Steps: the whole training step with that split, as "
         "parallelism.stage_layers. Fullest stage: memory needed over usable.\n";
}

// The placement chosen, stage by stage, and how to use it.
void print_pick(const Priced* pick, const models::scenario::Scenario& s,
                const sim::PipelineGraph& g, const sim::DeviceProfile& profile, std::ostream& out) {
  if (!pick) {
    out << "\nNo placement here can run as a pipeline of these stages within memory.\n";
    return;
  }
  out << fmt::format("\n{} stages:\n", sim::stage_split_name(pick->placement.algorithm));
  print_stages(*pick, g, profile, out);
  if (pick->placement.stage_layers == sim::own_stage_layers(s)) {
    out << "use it: the scenario as it is (these are its own stages)\n";
  } else {
    out << fmt::format("use it: --set 'parallelism.stage_layers=[{}]'\n",
                       fmt::join(pick->placement.stage_layers, ","));
  }
  if (!pick->analytic->fits) {
    out << fmt::format("warning: with this split the fullest stage needs {} of usable memory\n",
                       percent(pick->analytic->memory_needed() / pick->analytic->memory_usable()));
  }
}

// --write: the scenario, resolved, with the chosen stages.
int write_placed(const PlaceOptions& o, const models::scenario::Scenario& s, const Priced* pick,
                 Streams io) {
  if (!pick) {
    io.err << "place: error: --write: no placement to write (none fits)\n";
    return kExitFailure;
  }
  const models::scenario::Scenario placed = sim::with_stage_layers(s, pick->placement.stage_layers);
  try {
    models::scenario::write_file_atomically(
        o.write_file,
        models::scenario::to_yaml(models::scenario::resolve_for_output(placed), false),
        "the placed scenario");
  } catch (const std::runtime_error& e) {
    io.err << "place: error: " << e.what() << "\n";
    return kExitFailure;
  }
  io.out << fmt::format("wrote {} (the scenario, resolved, with the {} stages)\n", o.write_file,
                        sim::stage_split_name(pick->placement.algorithm));
  return kExitOk;
}

nlohmann::json place_json(const models::scenario::Scenario& s, const sim::PipelineGraph& g,
                          double bound, const std::vector<Priced>& all, const Priced* pick,
                          const nlohmann::json& op_grain, const sim::DeviceProfile& profile) {
  nlohmann::json j = {{"scenario", s.name},
                      {"graph",
                       {{"micro_batches", g.micro_batches},
                        {"ops", g.graph.nodes.size()},
                        {"edges", g.graph.edges.size()},
                        {"transfer_latency_s", g.devices.latency_s},
                        {"transfer_bandwidth_Bps", std::isfinite(g.devices.bandwidth_Bps)
                                                       ? nlohmann::json(g.devices.bandwidth_Bps)
                                                       : nullptr},
                        {"usable_bytes", g.usable_bytes},
                        {"critical_path_s", bound}}},
                      {"placements", nlohmann::json::array()}};
  for (const Priced& p : all) j["placements"].push_back(placement_json(p, profile));
  if (pick) j["chosen"] = sim::stage_split_name(pick->placement.algorithm);
  if (!op_grain.is_null()) j["op_grain"] = op_grain;
  return j;
}

}  // namespace

int run_place(const PlaceOptions& o, Streams io, const Environment& env) {
  const auto algorithms = place_algorithms(o, io);
  if (!algorithms) return kExitBadInput;
  const VerbOutputs outputs{"place", {{"--write", o.write_file}, {"--json", o.json_file}}};
  if (!outputs_ok(outputs.verb, outputs.outputs, {o.scenario.scenario, o.profile}, io)) {
    return kExitBadInput;
  }
  const auto s = load_for_cli(o.scenario, io, env, nullptr, &outputs);
  if (!s) return kExitBadInput;
  const auto profile = profile_for(*s, o.profile, io, env);
  if (!profile) return kExitBadInput;
  const auto graph = place_graph(o, *s, *profile, io);
  if (!graph) return kExitBadInput;
  const sim::PipelineGraph& g = *graph;
  const double bound = models::place::single_device_lower_bound_s(g.graph);
  io.out << place_header(o, *s, g, bound);
  std::vector<Priced> all;
  all.reserve(algorithms->size());
  std::map<std::vector<int>, Priced> by_split;
  for (const auto a : *algorithms) {
    all.push_back(price(*s, *profile, g, a, !o.no_simulate, by_split, io.out));
  }
  io.out << placements_text(all, o.no_simulate);
  const Priced* pick =
      algorithms->size() == 1 ? (all.front().analytic ? &all.front() : nullptr) : chosen(all);
  print_pick(pick, *s, g, *profile, io.out);
  nlohmann::json op_grain;
  if (o.grain == "op") {
    std::vector<std::pair<sim::StageSplit, std::vector<int>>> splits;
    splits.reserve(all.size());
    for (const Priced& p : all) {
      splits.emplace_back(p.placement.algorithm, p.placement.stage_layers);
    }
    op_grain = print_op_grain(*s, *profile, g, splits, *algorithms, io.out);
  }
  if (!o.write_file.empty()) {
    if (const int code = write_placed(o, *s, pick, io); code != kExitOk) return code;
  }
  if (!o.json_file.empty() &&
      !write_json(o.json_file, place_json(*s, g, bound, all, pick, op_grain, *profile), "place",
                  io)) {
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace myriad::cli
