// `myriad simulate SCENARIO`: one training step played on SimGrid. Prints the
// report `estimate` prints, for the simulated step, then the simulated step
// beside the estimate and what only the simulation knows.
#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <ostream>

#include "models/scenario/run_title.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/step/step_engine.hpp"
#include "tools/cli/simulate_options.hpp"
#include "tools/cli/simulation_report.hpp"
#include "tools/cli/step_report.hpp"

namespace myriad::cli {
namespace {

std::string replicas_text(const sim::StepSimulation& r) {
  const std::string per_actor =
      r.replicas_per_actor == 1
          ? ""
          : fmt::format(" ({} replicas per actor: their rank groups share a node)",
                        r.replicas_per_actor);
  if (r.classes) {
    int replicas = 0;
    for (const int size : r.class_sizes) replicas += size;
    if (r.replicas.size() == 1) {
      return fmt::format(
          "every replica, as one class of replicas that share the network alike (one played, its "
          "traffic weighted) for {}{}",
          replicas, per_actor);
    }
    return fmt::format(
        "every replica, as {} classes of replicas that share the network alike (one played for "
        "each, its traffic weighted) for {}{}",
        r.replicas.size(), replicas, per_actor);
  }
  if (r.all_replicas) return "every replica" + per_actor;
  if (r.replicas.size() == 1) return "one replica per stage, ring neighbours mirrored" + per_actor;
  std::string list;
  for (const int replica : r.replicas) list += (list.empty() ? "" : ", ") + std::to_string(replica);
  return fmt::format("replicas {} (0 and those holding stragglers), ring neighbours mirrored{}",
                     list, per_actor);
}

// The step report's data (tools/report/html_report.hpp): the breakdown by engine
// and each stage's waiting.
nlohmann::json report_data(const models::scenario::Scenario& s, const sim::StepReport& analytic,
                           const sim::StepReport& simulated_report,
                           const sim::StepSimulation& simulated, const std::string& name) {
  nlohmann::json parts = nlohmann::json::array();
  for (const auto& [engine, r] :
       {std::pair<const char*, const sim::StepReport*>{"estimate", &analytic},
        {"simulate", &simulated_report}}) {
    for (const auto& part : r->breakdown) {
      parts.push_back({{"engine", engine}, {"part", part.name}, {"seconds", part.seconds}});
    }
  }
  nlohmann::json wait = nlohmann::json::array();
  for (std::size_t i = 0; i < simulated.wait_s.size(); ++i) {
    wait.push_back({{"stage", i}, {"seconds", simulated.wait_s[i]}});
  }
  return {{"kind", "step"},
          {"title", fmt::format("myriad simulate {}", name)},
          {"subtitle",
           fmt::format("{}: step {:.4g} s simulated, {:.4g} s estimated ({:+.2f} %)",
                       models::scenario::run_title(s), simulated.step_time_s, analytic.step_time_s,
                       100 * (simulated.step_time_s / analytic.step_time_s - 1))},
          {"breakdown", parts},
          {"wait", wait},
          {"notes",
           {"The simulated breakdown is the timeline of the rank group that computes the most; "
            "the estimate's, the analytic engine's critical stage."}}};
}

}  // namespace

sim::StepOptions step_options(const SimulateOptions& o) {
  sim::StepOptions options;
  options.all_replicas = o.all_replicas;
  options.log = o.log;
  return options;
}

int run_simulate(const SimulateOptions& o, Streams io, const Environment& env) {
  if (!o.workload.empty()) return run_simulate_workload(o, io, env);
  const VerbOutputs outputs{
      "simulate",
      {{"--json", o.json_file}, {"--trace", o.trace_file}, {"--report", o.report_file}}};
  if (!outputs_ok(outputs.verb, outputs.outputs, {o.scenario.scenario, o.profile}, io)) {
    return kExitBadInput;
  }
  const auto s = load_for_cli(o.scenario, io, env, nullptr, &outputs);
  if (!s) return kExitBadInput;
  const auto profile = profile_for(*s, o.profile, io, env);
  if (!profile) return kExitBadInput;
  const sim::StepReport analytic = sim::estimate(*s, *profile);
  sim::StepSimulation simulated;
  const auto start = std::chrono::steady_clock::now();  // wall time of the run, for the user
  try {
    simulated = sim::simulate_step(*s, *profile, step_options(o));
  } catch (const std::invalid_argument& e) {
    io.err << fmt::format("{}: error: {}\n", s->file, e.what());
    return kExitBadInput;
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const sim::StepReport report = simulated_step_report(*s, analytic, simulated);
  io.out << step_report_text(*s, *profile, report) << "\n";
  io.out << fmt::format(
      "step engine (SimGrid): {} hosts, {} actors, {} flows, {}, {:.2f} s wall\n\n",
      simulated.hosts, simulated.actors, simulated.flows, replicas_text(simulated), wall);
  io.out << simulation_text(*s, analytic, simulated);
  if (!o.trace_file.empty() && !write_json(o.trace_file, chrome_trace(simulated), "simulate", io)) {
    return kExitFailure;
  }
  if (!o.json_file.empty()) {
    nlohmann::json j = step_report_json(*s, *profile, report);
    j.update(simulation_json(*s, analytic, simulated));
    if (!write_json(o.json_file, j, "simulate", io)) return kExitFailure;
  }
  if (!o.report_file.empty() &&
      !write_html_report(o.report_file,
                         report_data(*s, analytic, report, simulated, scenario_name(o.scenario)),
                         "simulate", io, env)) {
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace myriad::cli
