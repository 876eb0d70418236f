// `myriad calibrate`'s command line: its subcommands (fit, check, loop, import) and
// their options (CLI11).
#include <memory>
#include <string>

#include "tools/cli/calibrate_import.hpp"
#include "tools/cli/calibrate_options.hpp"
#include "tools/cli/commands.hpp"

namespace myriad::cli {
namespace {

void add_timing_options(CLI::App& cmd, CalibrateOptions& o) {
  cmd.add_option("--repetitions", o.repetitions,
                 "passes over the grid: samples per case, seconds apart (the fastest is kept)")
      ->check(CLI::Range(1, 1000));
  cmd.add_option("--min-time", o.min_time_s, "seconds each sample runs at least")
      ->check(finite_range(1e-4, 10.0));
}

// check's and loop's bound on the mean composite error.
void add_max_error_option(CLI::App& cmd, CalibrateOptions& o) {
  cmd.add_option("--max-error", o.max_error,
                 "fail (exit 1) when the mean composite prediction error exceeds this fraction "
                 "(default 0.15)")
      ->check(finite_range(1e-6, 100));
}

// The subcommand `import`, under `calibrate`.
Command add_calibrate_import(CLI::App& calibrate, Streams io) {
  auto o = std::make_shared<ImportOptions>();
  CLI::App* cmd = calibrate.add_subcommand(
      "import",
      "Turn measurements made elsewhere into calibration rows: nccl-tests output, Google "
      "Benchmark JSON (--benchmark_out), a PyTorch profiler (Kineto) trace, OpenXLA's GEMM "
      "performance table.");
  cmd->add_option("format", o->format, "nccl-tests, google-benchmark, kineto or xla-gemm-table")
      ->required();
  cmd->add_option("files", o->files, "the measurement files, all of that format")->required();
  cmd->add_option("--out", o->out, "the rows file to write")->required();
  cmd->add_flag("--append", o->append,
                "keep the rows --out already holds and add these (to fit collectives and "
                "kernels from several sources together)");
  cmd->add_option("--backend", o->backend, "what ran the measurements: cuda (default) or cpu")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  cmd->add_option("--collective", o->collective,
                  "nccl-tests: the collective, when the output does not name it (all_reduce, "
                  "all_gather, reduce_scatter, all_to_all, broadcast)");
  cmd->add_option(
      "--algorithm", o->algorithm,
      "nccl-tests: the algorithm NCCL ran (NCCL_ALGO): ring (default), tree, nvls, ...");
  cmd->add_option("--profile", o->profile,
                  "nccl-tests: a device profile (calibration/profiles/H100.json): a busbw above "
                  "what its links carry is refused, one above its ring ceiling flagged");
  cmd->add_option("--ranks", o->ranks, "nccl-tests: the ranks, when the output does not list them")
      ->check(CLI::Range(2, 1 << 20));
  cmd->add_option("--family", o->family,
                  "google-benchmark: the family of benchmarks without m, n, k counters "
                  "(norm.rms.fwd, activation.swiglu.bwd, attention.fwd, ...)");
  cmd->add_option("--key", o->key,
                  "xla-gemm-table: the device whose entries are read (sm_90 is the H100); "
                  "needed when the table holds several");
  cmd->add_option("--max-input-size", o->max_input_size,
                  "the largest input file read, e.g. 8GiB (default 4GiB for kineto, 64MiB for "
                  "the others); a larger one is refused before it is read");
  return {cmd, [o, io] { return run_import(*o, io); }};
}

}  // namespace

Command add_calibrate_command(CLI::App& app, Streams io, const Environment& /*env*/) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "calibrate",
      "Measure the kernels and collectives, fit a device profile, check its predictions.");
  cmd->require_subcommand(0, 1);
  cmd->add_option("--backend", o->backend, "cpu (always) or cuda (with a GPU)");
  cmd->add_option("--grid", o->grid, "small (CI, minutes) or full");
  cmd->add_option("--out", o->out, "directory for rows.json (and the loop's profile and check)");
  add_timing_options(*cmd, *o);

  CLI::App* fit_cmd = cmd->add_subcommand("fit", "Fit a device profile to calibration rows.");
  fit_cmd->add_option("rows", o->rows, "rows.json written by `myriad calibrate`")->required();
  fit_cmd->add_option("--out", o->profile_out, "profile to write (default: beside the rows)");
  fit_cmd->add_option("--base", o->base,
                      "profile giving datasheet peaks and what the rows cannot measure");
  fit_cmd->add_option("--device", o->device, "the device name the profile records");
  const char* leave_out_help =
      "fit the rows that passed their check; the profile names those left out";
  fit_cmd->add_flag("--leave-out-failed", o->leave_out_failed, leave_out_help);
  CLI::Option* kernel =
      fit_cmd->add_option("--attention-kernel", o->attention_kernel,
                          "the attention kernel the profile describes, by its rows' family "
                          "(attention: the SIMT kernel; attention.mma: tensor cores; "
                          "attention.cudnn: cuDNN); default: the fastest measured");
  fit_cmd
      ->add_option("--reference", o->reference,
                   "ground the profile in the production kernels (cudnn: cuDNN's fused "
                   "attention, measured beside ours) or in Myriad's own (myriad: the fastest of "
                   "attention and attention.mma); GEMMs are cuBLASLt's either way")
      ->check(CLI::IsMember({"cudnn", "myriad"}))
      ->excludes(kernel);

  CLI::App* check_cmd =
      cmd->add_subcommand("check", "Predict composite workloads from a profile and time them.");
  check_cmd->add_option("--profile", o->profile, "profile written by `myriad calibrate fit`")
      ->required();
  check_cmd->add_option("--rows", o->check_rows, "also report the fitted rows' errors");
  check_cmd->add_option("--json", o->json_file, "write the report as JSON");
  check_cmd->add_option("--measured-from", o->measured_from,
                        "take the composites' times from an earlier check report (its --json, "
                        "or the loop's check.json) instead of timing them here");
  add_max_error_option(*check_cmd, *o);
  add_timing_options(*check_cmd, *o);

  CLI::App* loop_cmd = cmd->add_subcommand(
      "loop", "Measure, fit and check in one go; everything is written to --out.");
  loop_cmd->fallthrough();  // --backend, --grid, --out and timing belong to calibrate
  loop_cmd->add_option("--base", o->base,
                       "profile giving datasheet peaks and what the rows cannot measure");
  add_max_error_option(*loop_cmd, *o);
  loop_cmd->add_flag("--leave-out-failed", o->leave_out_failed,
                     std::string(leave_out_help) + " (the loop still exits 1)");
  loop_cmd
      ->add_option("--reference", o->loop_reference,
                   "the attention kernels the profile describes: cudnn (cuDNN's) or myriad (the "
                   "fastest of Myriad's own); by default the kernel the loop's composites run, "
                   "the SIMT one, so that the check compares like with like")
      ->check(CLI::IsMember({"cudnn", "myriad"}));

  const Command import_cmd = add_calibrate_import(*cmd, io);

  return {cmd, [o, io, fit_cmd, check_cmd, loop_cmd, import_cmd] {
            if (import_cmd.app->parsed()) return import_cmd.action();
            CalibrateRun what = CalibrateRun::measure;
            if (fit_cmd->parsed()) what = CalibrateRun::fit;
            if (check_cmd->parsed()) what = CalibrateRun::check;
            if (loop_cmd->parsed()) what = CalibrateRun::loop;
            return run_calibrate(*o, what, io);
          }};
}

}  // namespace myriad::cli
