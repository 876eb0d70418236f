// `myriad calibrate import`: the shipped examples of each format become rows a
// profile is fitted to, several sources into one file; bad input is named.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "calibration/import/import.hpp"
#include "calibration/measure/rows.hpp"
#include "models/scenario/file_lock.hpp"
#include "myriad_source_paths.hpp"
#include "tests/calibration/gzip_text.hpp"
#include "tests/tools/run_cli.hpp"
#include "tests/tools/run_within.hpp"
#include "tools/cli/cli.hpp"

namespace myriad::cli {
namespace {

using test_support::Result;
using test_support::run_cli;

std::string example(const std::string& name) {
  return std::string(MYRIAD_PROFILE_DIR) + "/../examples/" + name;
}

TEST(Cli, CalibrateImportsEachFormatAndFitsTheRows) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string rows = (dir / "myriad_import_rows.json").string();
  const std::string profile = (dir / "myriad_import_profile.json").string();
  std::filesystem::remove(rows);
  const Result nccl = run_cli(
      {"calibrate", "import", "nccl-tests", example("nccl-tests-all_reduce.txt"), "--out", rows});
  ASSERT_EQ(nccl.code, kExitOk) << nccl.err << nccl.out;
  EXPECT_NE(nccl.out.find("all_reduce.ring ranks=8 bytes=1073741824"), std::string::npos)
      << nccl.out;
  const Result trace = run_cli(
      {"calibrate", "import", "kineto", example("kineto-trace.json"), "--out", rows, "--append"});
  ASSERT_EQ(trace.code, kExitOk) << trace.err << trace.out;
  EXPECT_NE(trace.out.find("after the 6 it held"), std::string::npos) << trace.out;
  const calibration::RowsFile file = calibration::read_rows(rows);
  EXPECT_EQ(file.rows.size(), 6U + 5U);
  EXPECT_EQ(file.grid, "imported");
  EXPECT_EQ(file.environment.value("gpu", std::string{}), "NVIDIA H100 80GB HBM3");
  // The same rows again: refused, and the file is left as it was.
  const Result again = run_cli(
      {"calibrate", "import", "kineto", example("kineto-trace.json"), "--out", rows, "--append"});
  EXPECT_EQ(again.code, kExitBadInput);
  EXPECT_NE(again.err.find("is already in the rows"), std::string::npos) << again.err;
  EXPECT_EQ(calibration::read_rows(rows).rows.size(), 11U);
  const Result fit = run_cli({"calibrate", "fit", rows, "--base",
                              std::string(MYRIAD_PROFILE_DIR) + "/H100.json", "--out", profile});
  ASSERT_EQ(fit.code, kExitOk) << fit.err << fit.out;
  EXPECT_NE(fit.out.find("Fitted profile for NVIDIA H100 80GB HBM3"), std::string::npos) << fit.out;
  // Measured GEMMs and attention; the bus bandwidth from nccl-tests.
  EXPECT_NE(fit.out.find("busbw at 1.07 GB"), std::string::npos) << fit.out;
  const Result estimate = run_cli(
      {"estimate", std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-8b-h100-64-pp4.yaml",
       "--profile", profile});
  EXPECT_EQ(estimate.code, kExitOk) << estimate.err;
  // The trace's attention (PyTorch's flash kernel) is neither cuDNN's nor
  // Myriad's: --reference cudnn falls back to it and says so; --reference myriad
  // has nothing to describe and says what the rows hold instead.
  const std::string base = std::string(MYRIAD_PROFILE_DIR) + "/H100.json";
  const Result cudnn =
      run_cli({"calibrate", "fit", rows, "--base", base, "--out", profile, "--reference", "cudnn"});
  EXPECT_EQ(cudnn.code, kExitOk) << cudnn.err;
  EXPECT_NE(cudnn.out.find("cuDNN's not measured"), std::string::npos) << cudnn.out;
  const Result own = run_cli(
      {"calibrate", "fit", rows, "--base", base, "--out", profile, "--reference", "myriad"});
  EXPECT_EQ(own.code, kExitBadInput) << own.out;
  EXPECT_NE(own.err.find("measured: attention.flash"), std::string::npos) << own.err;
  const Result unknown =
      run_cli({"calibrate", "fit", rows, "--base", base, "--out", profile, "--reference", "fa3"});
  EXPECT_NE(unknown.code, kExitOk);
  EXPECT_NE(unknown.err.find("cudnn"), std::string::npos) << unknown.err;
  const Result both = run_cli({"calibrate", "fit", rows, "--base", base, "--out", profile,
                               "--reference", "cudnn", "--attention-kernel", "attention"});
  EXPECT_NE(both.code, kExitOk);
  EXPECT_NE(both.err.find("excludes"), std::string::npos) << both.err;
  std::filesystem::remove(rows);
  std::filesystem::remove(profile);
}

TEST(Cli, CalibrateImportOfGoogleBenchmarkJsonTakesFamiliesFromLabels) {
  const std::string rows =
      (std::filesystem::temp_directory_path() / "myriad_import_gb.json").string();
  const Result r = run_cli({"calibrate", "import", "google-benchmark",
                            example("ops-benchmark-cpu.json"), "--backend", "cpu", "--out", rows});
  ASSERT_EQ(r.code, kExitOk) << r.err << r.out;
  const calibration::RowsFile file = calibration::read_rows(rows);
  EXPECT_EQ(file.backend, "cpu");
  int gemms = 0, gelu = 0;
  for (const auto& row : file.rows) {
    gemms += row.family == "gemm" ? 1 : 0;
    gelu += row.family == "activation.gelu.fwd" ? 1 : 0;
    EXPECT_EQ(row.times_s.size(), 3U) << row.name;  // three repetitions, each a sample
  }
  EXPECT_EQ(gemms, 3);
  EXPECT_EQ(gelu, 2);
  std::filesystem::remove(rows);
}

TEST(Cli, CalibrateImportNamesWhatIsWrong) {
  const std::string rows =
      (std::filesystem::temp_directory_path() / "myriad_import_bad.json").string();
  const Result format =
      run_cli({"calibrate", "import", "perf", example("kineto-trace.json"), "--out", rows});
  EXPECT_EQ(format.code, kExitBadInput);
  EXPECT_NE(format.err.find("expected nccl-tests, google-benchmark, kineto or xla-gemm-table"),
            std::string::npos)
      << format.err;
  const Result wrong =
      run_cli({"calibrate", "import", "nccl-tests", example("kineto-trace.json"), "--out", rows});
  EXPECT_EQ(wrong.code, kExitBadInput);
  EXPECT_NE(wrong.err.find("kineto-trace.json: line 1: expected a result line"), std::string::npos)
      << wrong.err;
  const Result missing =
      run_cli({"calibrate", "import", "kineto", "/nonexistent.json", "--out", rows});
  EXPECT_EQ(missing.code, kExitBadInput);
  // --key is the GEMM table's: refused for the others, not ignored.
  const Result key = run_cli({"calibrate", "import", "kineto", example("kineto-trace.json"),
                              "--key", "sm_90", "--out", rows});
  EXPECT_EQ(key.code, kExitBadInput);
  EXPECT_NE(key.err.find("--key: not read from kineto input"), std::string::npos) << key.err;
  EXPECT_FALSE(std::filesystem::exists(rows));
}

// OpenXLA's published sm_90 table, as shipped: 125 GEMM rows, and the fit next.
TEST(Cli, CalibrateImportsThePublishedXlaGemmTable) {
  const std::string rows =
      (std::filesystem::temp_directory_path() / "myriad_import_xla.json").string();
  const std::string table =
      std::string(MYRIAD_PROFILE_DIR) + "/../published/xla_gemm_sm90_bf16.txtpb";
  const Result r =
      run_cli({"calibrate", "import", "xla-gemm-table", table, "--key", "sm_90", "--out", rows});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("125 GEMMs of sm_90"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote 125 rows"), std::string::npos) << r.out;
  const Result other =
      run_cli({"calibrate", "import", "xla-gemm-table", table, "--key", "sm_80", "--out", rows});
  EXPECT_EQ(other.code, kExitBadInput);
  EXPECT_NE(other.err.find("no device sm_80 (the table holds sm_90)"), std::string::npos)
      << other.err;
  std::filesystem::remove(rows);
}

// Issue 43, hostile inputs. What a child running `args` reported: its exit code and
// standard error, or `signalled` when it did not exit by itself.
using ImportChild = test_support::ChildResult;
using test_support::address_space_limits_work;

// Runs `args` in a child whose address space may grow by `extra` bytes at most.
ImportChild import_within(const std::vector<std::string>& args, std::size_t extra) {
  return test_support::run_cli_within(args, extra);
}

std::string temp_file(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("myriad_import_" + std::to_string(getpid()) + "_" + name))
      .string();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

constexpr std::size_t kMiB = std::size_t{1} << 20;

// A trace of `calls` GEMMs, a kernel each: about 330 bytes a call.
std::string gemm_trace(int calls) {
  std::string text =
      R"({"deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}], "traceEvents": [)";
  text.reserve(static_cast<std::size_t>(calls) * 340);
  for (int i = 0; i < calls; ++i) {
    const std::string id = std::to_string(i);
    text += R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": )" + id +
            R"(, "dur": 10, "args": {"External id": )" + id +
            R"(, "Input Dims": [[4096, 1024], [1024, 2048]], "Input type": ["c10::BFloat16", )"
            R"("c10::BFloat16"]}},)"
            "\n";
    text += R"({"ph": "X", "cat": "kernel", "name": "sm90_gemm", "ts": )" + id +
            R"(, "dur": 50.5, "args": {"External id": )" + id + R"(, "correlation": 7}},)" + "\n";
  }
  text += R"({"ph": "i", "cat": "cuda_runtime", "name": "x", "ts": 0}]})";
  return text;
}

// Expectation: a trace is read an event at a time, so a 24 MB trace imports in
// an address space 128 MiB larger than the test's (the whole document as JSON
// took ten times its size); a list of millions of zeros is refused at its first.
TEST(Cli, CalibrateImportStreamsAKinetoTraceInBoundedMemory) {
  if (!address_space_limits_work()) GTEST_SKIP() << "sanitizers map shadow memory";
  const std::string trace = temp_file("big_trace.json");
  const std::string zeros = temp_file("zeros.json");
  const std::string rows = temp_file("big_trace_rows.json");
  write_text(trace, gemm_trace(72000));
  std::string list = "[0";
  for (int i = 1; i < 12'000'000; ++i) list += ",0";
  write_text(zeros, list + "]");
  const ImportChild got =
      import_within({"calibrate", "import", "kineto", trace, "--out", rows}, 128 * kMiB);
  EXPECT_FALSE(got.signalled);
  EXPECT_EQ(got.code, kExitOk) << got.err;
  EXPECT_EQ(calibration::read_rows(rows).rows.size(), 1U);
  const ImportChild bad =
      import_within({"calibrate", "import", "kineto", zeros, "--out", rows}, 128 * kMiB);
  EXPECT_EQ(bad.code, kExitBadInput) << bad.err;
  EXPECT_NE(bad.err.find("traceEvents[0]: expected an event object"), std::string::npos) << bad.err;
  for (const auto& f : {trace, zeros, rows}) std::filesystem::remove(f);
}

// Expectation: Google Benchmark JSON is read a benchmark at a time too: what the
// import does not use (a context of millions of values) is not kept.
TEST(Cli, CalibrateImportReadsGoogleBenchmarkJsonInBoundedMemory) {
  if (!address_space_limits_work()) GTEST_SKIP() << "sanitizers map shadow memory";
  const std::string json = temp_file("big_benchmark.json");
  const std::string rows = temp_file("big_benchmark_rows.json");
  std::string text = R"({"context": [0)";
  for (int i = 1; i < 10'000'000; ++i) text += ",0";
  text += R"(], "benchmarks": [{"name": "BM_Gemm", "real_time": 2.0, "time_unit": "ms",
    "m": 1024, "n": 1024, "k": 1024}]})";
  write_text(json, text);
  const ImportChild got =
      import_within({"calibrate", "import", "google-benchmark", json, "--out", rows}, 128 * kMiB);
  EXPECT_FALSE(got.signalled);
  EXPECT_EQ(got.code, kExitOk) << got.err;
  for (const auto& f : {json, rows}) std::filesystem::remove(f);
}

// Expectation: nccl-tests output is read a line at a time, a row kept per result
// line up to a stated bound; 100,000 lines (3.1 GB at 600,000 before) are
// refused at the bound, in little memory.
TEST(Cli, CalibrateImportBoundsTheRowsOfNcclTestsOutput) {
  if (!address_space_limits_work()) GTEST_SKIP() << "sanitizers map shadow memory";
  const std::string text = temp_file("many_sizes.txt");
  const std::string rows = temp_file("many_sizes_rows.json");
  std::string lines = "# nThread 1 nGpus 8\n";
  for (int i = 1; i <= 100'000; ++i) {
    lines += " " + std::to_string(8 * i) + " 2 float sum -1 40.0 1.00 1.75 0 40.0 1.00 1.75 0\n";
  }
  write_text(text, lines);
  const ImportChild got =
      import_within({"calibrate", "import", "nccl-tests", text, "--out", rows}, 128 * kMiB);
  EXPECT_FALSE(got.signalled);
  EXPECT_EQ(got.code, kExitBadInput) << got.err;
  EXPECT_NE(got.err.find("more than 20000 result lines"), std::string::npos) << got.err;
  EXPECT_FALSE(std::filesystem::exists(rows));
  for (const auto& f : {text, rows}) std::filesystem::remove(f);
}

// Expectation: the step engine's SimGrid aborts where an allocation fails, so
// simulate maps the address space the step should take (2,048 rank groups x
// 0.3 MB: the 405B example with its racks at 1:2, so that every replica is played
// alone) before it starts: 256 MiB more than is mapped is out of memory, said so,
// exit 1 (it was SIGABRT inside SimGrid).
TEST(Cli, SimulateSaysWhenItRunsOutOfMemory) {
  if (!address_space_limits_work()) GTEST_SKIP() << "sanitizers map shadow memory";
  const ImportChild got = import_within(
      {"simulate",
       std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-405b-h100-16384-campaign.yaml", "--set",
       "faults.stragglers=[{per_1000_node_days: 120, duration: 1h, slowdown: 1.1}]", "--set",
       "cluster.network.tiers.0.oversubscription=1:2"},
      256 * kMiB);
  EXPECT_FALSE(got.signalled);
  EXPECT_EQ(got.code, kExitFailure) << got.err;
  EXPECT_NE(got.err.find("out of memory"), std::string::npos) << got.err;
}

// Expectation: running out of memory is an error that says so, exit 1 (not a
// bad input, not a crash).
TEST(Cli, CalibrateImportSaysWhenItRunsOutOfMemory) {
  if (!address_space_limits_work()) GTEST_SKIP() << "sanitizers map shadow memory";
  const std::string json = temp_file("long_name.json");
  const std::string rows = temp_file("long_name_rows.json");
  write_text(json, R"({"benchmarks": [{"name": ")" + std::string(60 * kMiB, 'x') + "\"}]}");
  const ImportChild got =
      import_within({"calibrate", "import", "google-benchmark", json, "--out", rows}, 48 * kMiB);
  EXPECT_FALSE(got.signalled);
  EXPECT_EQ(got.code, kExitFailure) << got.err;
  EXPECT_NE(got.err.find("out of memory"), std::string::npos) << got.err;
  for (const auto& f : {json, rows}) std::filesystem::remove(f);
}

// Expectation: an input over its kind's size cap is refused before it is read,
// with its size, the cap and the option that raises it.
TEST(Cli, CalibrateImportRefusesAnInputOverItsSizeCap) {
  const std::string trace = temp_file("capped_trace.json");
  const std::string json = temp_file("capped_benchmark.json");
  const std::string rows = temp_file("capped_rows.json");
  write_text(trace, gemm_trace(7000));  // 2.3 MB
  const Result small =
      run_cli({"calibrate", "import", "kineto", trace, "--out", rows, "--max-input-size", "1MiB"});
  EXPECT_EQ(small.code, kExitBadInput);
  EXPECT_NE(small.err.find("bytes, more than the 1 MiB"), std::string::npos) << small.err;
  EXPECT_NE(small.err.find("--max-input-size"), std::string::npos) << small.err;
  const Result raised =
      run_cli({"calibrate", "import", "kineto", trace, "--out", rows, "--max-input-size", "3MiB"});
  EXPECT_EQ(raised.code, kExitOk) << raised.err;
  // Google Benchmark JSON is a few kilobytes: 64 MiB by default (a sparse file).
  { std::ofstream(json, std::ios::binary); }
  std::filesystem::resize_file(json, 65 * kMiB);
  const Result big = run_cli({"calibrate", "import", "google-benchmark", json, "--out", rows});
  EXPECT_EQ(big.code, kExitBadInput);
  EXPECT_NE(big.err.find("68157440 bytes, more than the 64 MiB"), std::string::npos) << big.err;
  EXPECT_NE(big.err.find("--max-input-size"), std::string::npos) << big.err;
  for (const auto& f : {trace, json, rows}) std::filesystem::remove(f);
}

// Expectation: a row its own reader would refuse (a GEMM of m = 0) is never
// written: with --append the rows already there stay readable.
TEST(Cli, CalibrateImportNeverWritesRowsItsReaderRefuses) {
  const std::string json = temp_file("m0.json");
  const std::string rows = temp_file("m0_rows.json");
  const Result first = run_cli(
      {"calibrate", "import", "nccl-tests", example("nccl-tests-all_reduce.txt"), "--out", rows});
  ASSERT_EQ(first.code, kExitOk) << first.err;
  write_text(json, R"({"benchmarks": [{"name": "BM_Gemm/0", "real_time": 2.0, "time_unit": "ms",
    "m": 0, "n": 1024, "k": 1024}]})");
  const Result bad =
      run_cli({"calibrate", "import", "google-benchmark", json, "--out", rows, "--append"});
  EXPECT_NE(bad.code, kExitOk);
  EXPECT_NE(bad.err.find("benchmarks[0].m"), std::string::npos) << bad.err;
  EXPECT_NO_THROW(EXPECT_EQ(calibration::read_rows(rows).rows.size(), 6U));
  for (const auto& f : {json, rows}) std::filesystem::remove(f);
}

// Expectation: --append reads, adds and writes under an exclusive lock; a second
// import waits for the first instead of writing over what it wrote. Here the
// test is the first writer: it holds the lock, read the rows, and writes them
// with one more after the import started.
TEST(Cli, CalibrateImportAppendWaitsForAConcurrentWriter) {
  const std::string rows = temp_file("shared_rows.json");
  const std::string lock_path = (std::filesystem::path(rows).parent_path() /
                                 ("." + std::filesystem::path(rows).filename().string() + ".lock"))
                                    .string();
  const Result first = run_cli(
      {"calibrate", "import", "nccl-tests", example("nccl-tests-all_reduce.txt"), "--out", rows});
  ASSERT_EQ(first.code, kExitOk) << first.err;
  const int lock = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  ASSERT_GE(lock, 0);
  ASSERT_EQ(flock(lock, LOCK_EX), 0);
  calibration::RowsFile mine = calibration::read_rows(rows);
  const pid_t pid = fork();
  if (pid == 0) {
    _exit(run_cli({"calibrate", "import", "kineto", example("kineto-trace.json"), "--out", rows,
                   "--append"})
              .code);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  mine.rows.push_back(mine.rows.front());
  mine.rows.back().name = "written while the import waited";
  calibration::write_rows(mine, rows);
  flock(lock, LOCK_UN);
  close(lock);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == kExitOk);
  const calibration::RowsFile after = calibration::read_rows(rows);
  EXPECT_EQ(after.rows.size(), 6U + 1U + 5U);  // nccl-tests, the test's row, the trace's
  std::filesystem::remove(rows);
  std::filesystem::remove(lock_path);
}

// Expectation: the lock waits a bounded time, then names the file and says why;
// a link planted as the lock file is refused, not followed.
TEST(Cli, CalibrateImportLockWaitsABoundedTimeAndFollowsNoLink) {
  const std::string rows = temp_file("locked_rows.json");
  const std::string lock_path = models::scenario::FileLock::lock_path(rows);
  {
    const models::scenario::FileLock held(rows, 1);
    const auto start = std::chrono::steady_clock::now();
    try {
      const models::scenario::FileLock second(rows, 0.2);
      ADD_FAILURE() << "two holders of one lock";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("another process has held the lock for 0.2 s"),
                std::string::npos)
          << e.what();
    }
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  }
  EXPECT_NO_THROW(const models::scenario::FileLock again(rows, 0.2));  // released
  std::filesystem::remove(lock_path);
  std::filesystem::create_symlink(rows + ".target", lock_path);
  EXPECT_THROW(const models::scenario::FileLock linked(rows, 0.2), std::runtime_error);
  EXPECT_FALSE(std::filesystem::exists(rows + ".target"));
  std::filesystem::remove(lock_path);
}

// The example's 408.49 and 427.06 GB/s (lines 22 and 23) pass the 370 GB/s ring
// ceiling of the H100 profile (0.8222 of its 450 GB/s NVLink): flagged, on the
// console and in the rows, not refused; the same sizes as an NVLS run are what NVLS
// does. A link the rows could not fit on is refused.
TEST(Cli, CalibrateImportFlagsBusBandwidthAboveTheProfilesRingCeiling) {
  const std::string rows = temp_file("ceiling_rows.json");
  const std::string h100 = std::string(MYRIAD_PROFILE_DIR) + "/H100.json";
  const Result ring =
      run_cli({"calibrate", "import", "nccl-tests", example("nccl-tests-all_reduce.txt"), "--out",
               rows, "--profile", h100});
  ASSERT_EQ(ring.code, kExitOk) << ring.err;
  EXPECT_NE(ring.out.find("2 of 6 sizes (the first at line 22, 408.49 GB/s) have a busbw above "
                          "the 370 GB/s ring ceiling the tool prices with " +
                          h100),
            std::string::npos)
      << ring.out;
  const calibration::RowsFile file = calibration::read_rows(rows);
  EXPECT_FALSE(file.rows[3].arguments.contains("above_ring_ceiling"));  // 355.88 GB/s
  EXPECT_TRUE(file.rows[4].arguments.contains("above_ring_ceiling"));
  const Result nvls =
      run_cli({"calibrate", "import", "nccl-tests", example("nccl-tests-all_reduce.txt"), "--out",
               rows, "--profile", h100, "--algorithm", "nvls"});
  ASSERT_EQ(nvls.code, kExitOk) << nvls.err;
  EXPECT_NE(nvls.out.find("as nvls can"), std::string::npos) << nvls.out;
  // The A100's NVLink 3 carries 300 GB/s: the first size above it, 355.88 GB/s, is refused.
  const Result a100 =
      run_cli({"calibrate", "import", "nccl-tests", example("nccl-tests-all_reduce.txt"), "--out",
               rows, "--profile", std::string(MYRIAD_PROFILE_DIR) + "/A100-80GB.json"});
  EXPECT_EQ(a100.code, kExitBadInput);
  EXPECT_NE(a100.err.find("nccl-tests-all_reduce.txt: line 21: busbw 355.88 GB/s is more than "
                          "A100-SXM4-80GB links of 300 GB/s"),
            std::string::npos)
      << a100.err;
  const Result bad =
      run_cli({"calibrate", "import", "nccl-tests", example("nccl-tests-all_reduce.txt"), "--out",
               rows, "--profile", "/nonexistent.json"});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_NE(bad.err.find("--profile: "), std::string::npos) << bad.err;
  std::filesystem::remove(rows);
}

// An option the format does not read is an error, not ignored.
TEST(Cli, CalibrateImportRefusesOptionsItsFormatDoesNotRead) {
  const std::string rows = temp_file("unread_rows.json");
  const Result kineto = run_cli({"calibrate", "import", "kineto", example("kineto-trace.json"),
                                 "--out", rows, "--collective", "all_reduce", "--ranks", "8"});
  EXPECT_EQ(kineto.code, kExitBadInput);
  EXPECT_NE(kineto.err.find("--collective, --ranks: not read from kineto input"), std::string::npos)
      << kineto.err;
  const Result nccl =
      run_cli({"calibrate", "import", "nccl-tests", example("nccl-tests-all_reduce.txt"), "--out",
               rows, "--family", "norm.rms.fwd"});
  EXPECT_EQ(nccl.code, kExitBadInput);
  EXPECT_NE(nccl.err.find("--family: not read from nccl-tests input"), std::string::npos)
      << nccl.err;
  EXPECT_FALSE(std::filesystem::exists(rows));
}

// PyTorch's *.pt.trace.json.gz: read as it streams, decompressed, in the bounded
// memory of an uncompressed trace (a 23 MB trace in 128 MiB more than the
// test's); a gzip bomb is refused at the cap, before it is parsed.
TEST(Cli, CalibrateImportReadsGzipTracesAndRefusesABomb) {
  const std::string trace = temp_file("trace.pt.trace.json.gz");
  const std::string bomb = temp_file("bomb.json.gz");
  const std::string rows = temp_file("gzip_rows.json");
  write_text(trace, myriad::calibration::test_support::gzip_text(gemm_trace(70'000)));
  if (address_space_limits_work()) {
    const ImportChild got =
        import_within({"calibrate", "import", "kineto", trace, "--out", rows}, 128 * kMiB);
    EXPECT_FALSE(got.signalled);
    EXPECT_EQ(got.code, kExitOk) << got.err;
  }
  write_text(trace, myriad::calibration::test_support::gzip_text(gemm_trace(20)));
  const Result named = run_cli({"calibrate", "import", "kineto", trace, "--out", rows});
  ASSERT_EQ(named.code, kExitOk) << named.err;
  EXPECT_NE(named.out.find(trace + ": gzip: " + calibration::size_text(gemm_trace(20).size()) +
                           " decompressed"),
            std::string::npos)
      << named.out;
  EXPECT_NE(named.out.find("20 kernels"), std::string::npos) << named.out;
  // 64 MiB of zeros in a 64 KiB file, under a 4 MiB cap: refused by its size.
  write_text(
      bomb, myriad::calibration::test_support::gzip_text(std::string(std::size_t{64} << 20, '\0')));
  const Result refused =
      run_cli({"calibrate", "import", "kineto", bomb, "--out", rows, "--max-input-size", "4MiB"});
  EXPECT_EQ(refused.code, kExitBadInput);
  EXPECT_NE(refused.err.find(bomb + ": cannot read kineto input: more than the 4 MiB cap for "
                                    "kineto input once decompressed (--max-input-size raises it)"),
            std::string::npos)
      << refused.err;
  for (const auto& f : {trace, bomb, rows}) std::filesystem::remove(f);
}

}  // namespace
}  // namespace myriad::cli
