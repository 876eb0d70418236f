// `myriad simulate SCENARIO --workload TRACE`: a measured workload (Chakra
// execution traces, one file a pipeline stage) played by the step engine on the
// scenario's cluster, every data-parallel replica running it, beside the same
// program played without contention (the evaluator).
#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <ostream>
#include <stdexcept>
#include <string>

#include "models/plan/rank_layout.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/program/evaluator.hpp"
#include "sim/step/step_engine.hpp"
#include "tools/cli/simulate_options.hpp"
#include "tools/cli/simulation_report.hpp"
#include "tools/cli/trace_options.hpp"

namespace myriad::cli {
namespace {

std::size_t nodes_of(const sim::chakra::EtSet& set) {
  std::size_t n = 0;
  for (const auto& f : set.files) n += f.graph.nodes.size();
  return n;
}

nlohmann::json workload_json(const SimulateOptions& o, const std::string& scenario,
                             const sim::StepSimulation& simulated, double uncontended) {
  nlohmann::json stages = nlohmann::json::array();
  for (std::size_t k = 0; k < simulated.wait_s.size(); ++k) {
    stages.push_back({{"stage", k},
                      {"finish_s", simulated.groups[k].finish_s},
                      {"wait_s", simulated.wait_s[k]}});
  }
  nlohmann::json breakdown = nlohmann::json::array();
  for (const auto& part : simulated.breakdown) {
    breakdown.push_back({{"part", part.name}, {"seconds", part.seconds}});
  }
  return {{"workload", o.workload},
          {"scenario", scenario},
          {"workload_group", o.workload_group},
          {"step_time_s", simulated.step_time_s},
          {"uncontended_step_time_s", uncontended},
          {"stages", stages},
          {"breakdown", breakdown},
          {"hosts", simulated.hosts},
          {"actors", simulated.actors},
          {"flows", simulated.flows}};
}

// The simulated step beside the uncontended one, each stage's end and waiting,
// the breakdown of the rank group that ends last.
void print_workload_step(std::ostream& out, const sim::StepSimulation& simulated,
                         double uncontended) {
  out << fmt::format(
      "  step time, simulated          {:.6f} s (the scenario's network, with contention)\n"
      "  step time, without contention {:.6f} s (the program's evaluator)   {:+.2f} %\n\n",
      simulated.step_time_s, uncontended,
      uncontended > 0 ? 100 * (simulated.step_time_s / uncontended - 1) : 0.0);
  out << "  stage  ends at      waiting (replica 0)\n";
  for (std::size_t k = 0; k < simulated.wait_s.size(); ++k) {
    out << fmt::format("  {:>5}  {:>9.6f} s  {:>9.6f} s\n", k, simulated.groups[k].finish_s,
                       simulated.wait_s[k]);
  }
  out << "\n  step time breakdown (the rank group that ends last)\n";
  for (const auto& part : simulated.breakdown) {
    if (part.seconds > 0) out << fmt::format("    {:<10} {:>10.6f} s\n", part.name, part.seconds);
  }
}

}  // namespace

int run_simulate_workload(const SimulateOptions& o, Streams io, const Environment& env) {
  if (!o.report_file.empty()) {
    io.err << "error: simulate: --report is for a scenario's own step, not a --workload "
              "(--json and --trace are)\n";
    return kExitBadInput;
  }
  const VerbOutputs outputs{"simulate", {{"--json", o.json_file}, {"--trace", o.trace_file}}};
  if (!outputs_ok(outputs.verb, outputs.outputs, {o.scenario.scenario, o.profile, o.workload},
                  io)) {
    return kExitBadInput;
  }
  const auto s = load_for_cli(o.scenario, io, env, nullptr, &outputs);
  if (!s) return kExitBadInput;
  const auto measured = profile_for(*s, o.profile, io, env);
  if (!measured) return kExitBadInput;
  const sim::DeviceProfile profile = sim::on_hardware(*measured, s->cluster.gpu);
  const sim::chakra::TracePricing pricing{&*s, &profile, trace_group(o.workload_group)};
  const auto read = read_trace_program(o.workload, o.ignore_ctrl_deps, &pricing, io);
  if (!read) return kExitBadInput;
  const sim::StepProgram& program = read->program;
  const double uncontended = sim::evaluate_program(program).step_time_s;
  sim::StepSimulation simulated;
  const auto start = std::chrono::steady_clock::now();  // wall time of the run, for the user
  try {
    sim::StepOptions options = step_options(o);
    options.workload = &program;
    simulated = sim::simulate_step(*s, profile, options);
  } catch (const std::invalid_argument& e) {
    io.err << fmt::format("{}: error: {} ({})\n", s->file, e.what(), o.workload);
    return kExitBadInput;
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const models::GroupSpan span = models::group_span(pricing.group, *s);
  io.out << fmt::format(
      "Workload {}: {} file{} ({} node{}), played on {}: {} data-parallel replica{} running it; "
      "traced compute, collectives over the {} group ({} ranks on {} node{}), sends between the "
      "stages' hosts\n\n",
      o.workload, read->set.files.size(), read->set.files.size() == 1 ? "" : "s",
      nodes_of(read->set), nodes_of(read->set) == 1 ? "" : "s", s->name.empty() ? s->file : s->name,
      s->parallelism.dp, s->parallelism.dp == 1 ? "" : "s", o.workload_group, span.size, span.nodes,
      span.nodes == 1 ? "" : "s");
  print_workload_step(io.out, simulated, uncontended);
  io.out << fmt::format("\nstep engine (SimGrid): {} hosts, {} actors, {} flows, {:.2f} s wall\n",
                        simulated.hosts, simulated.actors, simulated.flows, wall);
  if (!o.trace_file.empty() && !write_json(o.trace_file, chrome_trace(simulated), "simulate", io)) {
    return kExitFailure;
  }
  if (!o.json_file.empty() &&
      !write_json(o.json_file, workload_json(o, s->name, simulated, uncontended), "simulate", io)) {
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace myriad::cli
