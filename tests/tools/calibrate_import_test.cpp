// `myriad calibrate import`: the shipped examples of each format become rows a
// profile is fitted to, several sources into one file; bad input is named.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "calibration/measure/rows.hpp"
#include "myriad_source_paths.hpp"
#include "tests/tools/run_cli.hpp"
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
  EXPECT_NE(format.err.find("expected nccl-tests, google-benchmark or kineto"), std::string::npos)
      << format.err;
  const Result wrong =
      run_cli({"calibrate", "import", "nccl-tests", example("kineto-trace.json"), "--out", rows});
  EXPECT_EQ(wrong.code, kExitBadInput);
  EXPECT_NE(wrong.err.find("kineto-trace.json: line 1: expected a result line"), std::string::npos)
      << wrong.err;
  const Result missing =
      run_cli({"calibrate", "import", "kineto", "/nonexistent.json", "--out", rows});
  EXPECT_EQ(missing.code, kExitBadInput);
  EXPECT_FALSE(std::filesystem::exists(rows));
}

}  // namespace
}  // namespace myriad::cli
