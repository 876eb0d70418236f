// `myriad trace`'s command line: `trace export` and `trace play` (CLI11).
#include <memory>

#include "tools/cli/commands.hpp"
#include "tools/cli/trace_options.hpp"

namespace myriad::cli {

Command add_trace_command(CLI::App& app, Streams io, const Environment& env) {
  CLI::App* cmd = app.add_subcommand(
      "trace",
      "Chakra execution traces: write a scenario's training step as traces (one file a "
      "pipeline stage, as ASTRA-sim reads them), or play traces as a step.");
  cmd->require_subcommand(1);
  auto out = std::make_shared<TraceExportOptions>();
  CLI::App* write = cmd->add_subcommand(
      "export", "Write the scenario's step program as Chakra traces and a manifest.");
  add_scenario_options(*write, out->scenario);
  add_profile_option(*write, out->profile);
  write->add_option("--out", out->out_dir, "folder to write the traces in (created if missing)")
      ->required();
  write->add_option("--name", out->name, "the traces' name: NAME.RANK.et, NAME.et.json")
      ->capture_default_str();
  auto in = std::make_shared<TracePlayOptions>();
  CLI::App* play = cmd->add_subcommand(
      "play", "Play Chakra traces as a step: their traced durations, their data deps.");
  play->add_option("path", in->path, "a manifest (.et.json), a folder of traces, or one .et file")
      ->required();
  play->add_flag("--ignore-ctrl-deps", in->ignore_ctrl_deps,
                 "read ctrl deps without checking them (PyTorch converters record parent "
                 "operators there, some outside the file; Chakra's feeder ignores them too)");
  play->add_option("--json", in->json_file, "also write the result as JSON");
  play->add_option("--on", in->on.scenario,
                   "price the traces' collectives and sends on this scenario's cluster (compute "
                   "keeps its traced time)");
  play->add_option("--group", in->group,
                   "with --on: the scenario's group the traced collectives span")
      ->check(CLI::IsMember({"tp", "cp", "ep", "dp"}))
      ->capture_default_str();
  add_profile_option(*play, in->profile);
  return {cmd, [write, out, in, io, &env] {
            return write->parsed() ? run_trace_export(*out, io, env) : run_trace_play(*in, io, env);
          }};
}

}  // namespace myriad::cli
