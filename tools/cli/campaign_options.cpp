// `myriad campaign`'s command line: its subcommand and options (CLI11).
#include <fmt/format.h>

#include <memory>

#include "models/scenario/text_file.hpp"
#include "sim/campaign/campaign_report.hpp"
#include "tools/cli/campaign_options.hpp"
#include "tools/cli/commands.hpp"

namespace myriad::cli {
namespace {

// An unknown level names the two there are and what each keeps.
CLI::Validator events_level_check() {
  return {[](const std::string& level) -> std::string {
            for (const auto name : sim::campaign::kEventLevelNames) {
              if (level == name) return {};
            }
            return fmt::format(
                "expected failures (failures, detection, restarts, repairs, stragglers) or all "
                "(also every checkpoint and upload), found '{}'",
                models::scenario::printable(level));
          },
          "failures|all"};
}

}  // namespace

Command add_campaign_command(CLI::App& app, Streams io, const Environment& env) {
  auto options = std::make_shared<CampaignCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "campaign",
      "Simulate days of training with failures, stragglers, checkpoints and recovery; compare "
      "the scenario's policy sets side by side.");
  add_scenario_options(*cmd, options->scenario);
  add_profile_option(*cmd, options->profile);
  auto* days = cmd->add_option("--days", options->days,
                               "simulate this many days of wall clock (at most ten years)")
                   ->check(finite_range(1.0 / 1440, sim::campaign::kLongestCampaign_days));
  cmd->add_option("--tokens", options->tokens,
                  "train until this many tokens, such as 15T (default: training.tokens)")
      ->excludes(days);
  cmd->add_option("--seeds", options->seeds, "independent runs, for confidence intervals")
      ->check(CLI::Range(1, 100000));
  cmd->add_option(
         "--threads", options->threads,
         "seeds in parallel (default: all cores; at most the cores, since each thread holds a "
         "run's state and more than the cores only add memory)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--json", options->json_file, "also write the report as JSON");
  auto* events =
      cmd->add_option("--events", options->events_file,
                      "stream one seed's event log, every policy set's run in turn, to this file: "
                      "JSON Lines, or CSV when it ends in .csv (failures and repairs with their "
                      "domain and nodes, one line an incident, detection, restarts, rollbacks "
                      "with the work lost, stragglers, evictions, shrink and grow; checkpoints "
                      "and uploads with --events-level all)");
  cmd->add_option("--events-level", options->events_level,
                  "what --events keeps: failures (default: failures, evictions, stragglers, "
                  "rollbacks, detection, waits, restarts, repairs) or all (also each checkpoint's "
                  "stage, upload and peer copy, over 99 % of the lines at a Young interval)")
      ->check(events_level_check())
      ->needs(events);
  cmd->add_option("--event-seed", options->event_seed,
                  "the seed index whose events --events writes and whose interruptions the "
                  "failure timeline shows (default 0)")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--vary", options->vary,
                  "KEY=VALUES: the campaign once per value, ETTR, days and cost against it "
                  "(a list a,b,c or a range 1..8*2; policies.KEY sets KEY in every policy set), "
                  "e.g. faults.rate_scale=0.5,1,2 or policies.hot_spares=0,16,32");
  auto* engine =
      cmd->add_option("--step-engine", options->step_engine,
                      "analytic (default), or simulate: the healthy step, the largest shrunk "
                      "states, each straggler's and each injected slow node's step played on the "
                      "step engine first (a child process each); the campaign then runs at the "
                      "step engine's pace and slow-node factors")
          ->check(CLI::IsMember({"analytic", "simulate"}));
  cmd->add_option("--step-engine-states", options->step_engine_states,
                  "with --step-engine simulate, how many shrunk states to play, largest first "
                  "(default 3); smaller ones scale as the nearest played one")
      ->check(CLI::Range(0, 64))
      ->needs(engine);
  cmd->add_flag("--wide", options->wide,
                "every figure: checkpoint and storage costs, uploads, failures by component");
  cmd->add_option("--report", options->report_file,
                  "also write an HTML report: effective training time ratio, days and goodput "
                  "by policy with their 95 % intervals (tokens and tokens per dollar in place of "
                  "days and cost with --days), hours lost by cause, the failure timeline; works "
                  "offline");
  return {cmd, [options, io, &env] { return run_campaign(*options, io, env); }};
}

}  // namespace myriad::cli
