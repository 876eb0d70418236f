// `myriad simulate SCENARIO`: one training step played on SimGrid, beside the
// analytic engine's estimate of it.
#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <ostream>

#include "sim/analytic/estimator.hpp"
#include "sim/step/step_engine.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

struct SimulateOptions {
  ScenarioOptions scenario;
  std::string profile;
  std::string json_file;
  std::string trace_file;
  bool all_replicas = false;
};

// Chrome trace-event format (Perfetto opens it): one track per pipeline stage of
// data-parallel replica 0, its tasks, waits, transfers and data-parallel phase as slices.
nlohmann::json chrome_trace(const sim::StepSimulation& sim) {
  nlohmann::json events = nlohmann::json::array();
  for (std::size_t stage = 0; stage < sim.wait_s.size(); ++stage) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", stage},
                      {"args", {{"name", fmt::format("stage {} (replica 0)", stage)}}}});
  }
  for (const auto& e : sim.events) {
    events.push_back({{"name", e.name},
                      {"cat", e.category},
                      {"ph", "X"},
                      {"pid", 0},
                      {"tid", e.stage},
                      {"ts", e.start_s * 1e6},
                      {"dur", e.duration_s * 1e6}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

int run_simulate(const SimulateOptions& o, Streams io, const Environment& env) {
  const auto s = load_for_cli(o.scenario, io, env);
  if (!s) return kExitBadInput;
  const auto profile = profile_for(*s, o.profile, io, env);
  if (!profile) return kExitBadInput;
  const sim::StepReport analytic = sim::estimate(*s, *profile);
  sim::StepSimulation sim;
  const auto start = std::chrono::steady_clock::now();  // wall time of the run, for the user
  try {
    sim::StepOptions options;
    options.all_replicas = o.all_replicas;
    sim = sim::simulate_step(*s, *profile, options);
  } catch (const std::invalid_argument& e) {
    io.err << fmt::format("{}: error: {}\n", s->file, e.what());
    return kExitBadInput;
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double tokens = static_cast<double>(s->parallelism.global_batch) * s->model.seq_length;
  const double mfu =
      analytic.model_flops / (sim.step_time_s * s->cluster.gpus * profile->bf16_flops);
  const double gap = (sim.step_time_s - analytic.step_time_s) / analytic.step_time_s;
  io.out << fmt::format(
      "{}\n  step engine (SimGrid): {} hosts, {} actors, {} flows, {:.2f} s wall\n\n",
      s->name.empty() ? s->file : s->name, sim.hosts, sim.actors, sim.flows, wall);
  Table t({"", "simulated", "estimated"}, "lrr");
  t.add({"step time", seconds(sim.step_time_s), seconds(analytic.step_time_s)});
  t.add({"MFU", percent(mfu), percent(analytic.mfu)});
  t.add({"tokens/s", si_count(tokens / sim.step_time_s), si_count(analytic.tokens_per_s)});
  io.out << t.str() << fmt::format("  simulated - estimated: {:+.2f} %\n\n", gap * 100);
  Table waits({"stage (replica 0)", "waiting on inputs and sends", "share of step"}, "lrr");
  for (std::size_t stage = 0; stage < sim.wait_s.size(); ++stage) {
    waits.add({std::to_string(stage), seconds(sim.wait_s[stage]),
               percent(sim.wait_s[stage] / sim.step_time_s)});
  }
  io.out << waits.str();
  if (!o.trace_file.empty() && !write_json(o.trace_file, chrome_trace(sim), "simulate", io)) {
    return kExitFailure;
  }
  if (!o.json_file.empty()) {
    const nlohmann::json j = {{"scenario", s->file},
                              {"step_time_s", sim.step_time_s},
                              {"mfu", mfu},
                              {"tokens_per_s", tokens / sim.step_time_s},
                              {"analytic_step_time_s", analytic.step_time_s},
                              {"relative_difference", gap},
                              {"hosts", sim.hosts},
                              {"actors", sim.actors},
                              {"flows", sim.flows},
                              {"wait_per_stage_s", sim.wait_s}};
    if (!write_json(o.json_file, j, "simulate", io)) return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

Command add_simulate_command(CLI::App& app, Streams io, const Environment& env) {
  auto options = std::make_shared<SimulateOptions>();
  CLI::App* cmd =
      app.add_subcommand("simulate",
                         "Play one training step on SimGrid (pipeline schedule, pipeline and "
                         "data-parallel flows) and compare it with the analytic estimate.");
  add_scenario_options(*cmd, options->scenario);
  add_profile_option(*cmd, options->profile);
  cmd->add_option("--json", options->json_file, "also write the result as JSON");
  cmd->add_option("--trace", options->trace_file,
                  "write a Chrome/Perfetto trace: one track per stage of replica 0");
  cmd->add_flag("--all-replicas", options->all_replicas,
                "simulate every data-parallel replica, not one per stage and its mirrored ring "
                "neighbours (same result without contention; slower)");
  return {cmd, [options, io, &env] { return run_simulate(*options, io, env); }};
}

}  // namespace myriad::cli
