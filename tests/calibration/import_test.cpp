// Measurements made elsewhere as calibration rows (calibration/import): nccl-tests
// output, Google Benchmark JSON and a Kineto trace, each read to the numbers it
// holds, refused with the file, line or entry and key when it is not what it
// says, and fitted with a base profile.
#include "calibration/import/import.hpp"

#include <gtest/gtest.h>

#include <string>

#include "calibration/fit/fit.hpp"
#include "myriad_source_paths.hpp"

namespace myriad::calibration {
namespace {

// An 8-rank all_reduce_perf run, as nccl-tests prints it (numbers made up for the
// test: busbw = algbw x 2(n-1)/n).
std::string nccl_all_reduce(const std::string& wrong = "0") {
  std::string text =
      "# nThread 1 nGpus 8 minBytes 1048576 maxBytes 1073741824 step: 32(factor) warmup iters: 5 "
      "iters: 20 agg iters: 1 validation: 1 graph: 0\n"
      "#\n"
      "# Using devices\n";
  for (int r = 0; r < 8; ++r) {
    text += "#  Rank  " + std::to_string(r) + " Group  0 Pid   4242 on     node01 device  " +
            std::to_string(r) + " [0x1b] NVIDIA H100 80GB HBM3\n";
  }
  text +=
      "#\n"
      "#                                                              out-of-place              "
      "         in-place          \n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
      "(us)  (GB/s)  (GB/s)       \n"
      "     1048576        262144     float     sum      -1    40.00   26.21   45.88      0    "
      "39.50   26.55   46.46      0\n"
      "    33554432       8388608     float     sum      -1   200.00  167.77  293.60      0   "
      "199.00  168.61  295.07      0\n"
      "  1073741824     268435456     float     sum      -1  4800.00  223.70  391.47      " +
      wrong +
      "  4790.00  224.16  392.29      0\n"
      "# Out of bounds values : 0 OK\n"
      "# Avg bus bandwidth    : 243.7\n";
  return text;
}

TEST(ImportNcclTests, EverySizeIsACollectiveRowWithItsTimeAndCheck) {
  const Imported got = import_rows(nccl_all_reduce(), "ar.txt", ImportFormat::nccl_tests, {});
  ASSERT_EQ(got.rows.size(), 3U);
  const Row& big = got.rows[2];
  EXPECT_EQ(big.kind, RowKind::collective);
  EXPECT_EQ(big.collective.collective, models::CollectiveKind::all_reduce);  // redop and ratio
  EXPECT_EQ(big.collective.algorithm, models::CollectiveAlgorithm::ring);
  EXPECT_EQ(big.collective.ranks, 8);  // the "#  Rank" lines
  EXPECT_DOUBLE_EQ(big.collective.bytes, 1073741824.0);
  EXPECT_DOUBLE_EQ(big.collective.busbw_factor, 1.75);
  EXPECT_DOUBLE_EQ(big.best_s, 4800e-6);
  EXPECT_EQ(big.name, "all_reduce.ring ranks=8 bytes=1073741824");
  EXPECT_EQ(big.check, "pass");
  // The busbw Myriad computes is the one nccl-tests printed.
  EXPECT_NEAR(big.collective.busbw_factor * big.bytes / big.best_s / 1e9, 391.47, 0.01);
  EXPECT_EQ(big.arguments["line"], 18);
  EXPECT_EQ(got.device, "NVIDIA H100 80GB HBM3");
  ASSERT_FALSE(got.notes.empty());
}

// Found by fuzz_import: nThread x nGpus past an int was converted anyway
// (undefined behaviour); a header naming more ranks than --ranks allows, or
// fractions of one, is refused with its line.
TEST(ImportNcclTests, AHeaderOfAbsurdRanksIsRefused) {
  ImportOptions o;
  o.collective = models::CollectiveKind::all_reduce;
  const std::string row = "  1024  256  float  sum  -1  40.0  26.2  45.9  0  39.5  26.5  46.4  0\n";
  for (const std::string header :
       {"# nThread 1e30 nGpus 5e14\n", "# nThread 1.5 nGpus 8\n", "# nThread 2048 nGpus 1024\n"}) {
    try {
      (void)import_rows(header + row, "ar.txt", ImportFormat::nccl_tests, o);
      FAIL() << header << "was accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("ar.txt: line 1: nThread x nGpus"), std::string::npos)
          << e.what();
    }
  }
}

TEST(ImportNcclTests, WrongElementsFailTheRowAndTheFitRefusesIt) {
  const Imported got = import_rows(nccl_all_reduce("12"), "ar.txt", ImportFormat::nccl_tests, {});
  EXPECT_EQ(got.rows[2].check, "12 wrong elements (nccl-tests)");
  RowsFile f;
  f.backend = "cuda";
  f.grid = "imported";
  f.rows = got.rows;
  FitOptions o;
  o.base_profile = std::string(MYRIAD_PROFILE_DIR) + "/H100.json";
  EXPECT_THROW((void)fit_profile(f, o), std::runtime_error);
  const Imported unverified =
      import_rows(nccl_all_reduce("N/A"), "ar.txt", ImportFormat::nccl_tests, {});
  EXPECT_EQ(unverified.rows[2].check, "pass");
  EXPECT_NE(unverified.rows[2].arguments["verified"].get<std::string>().find("not verified"),
            std::string::npos);
}

TEST(ImportNcclTests, TheCollectiveComesFromTheOutputOrTheOption) {
  // An all-gather prints redop none and busbw = algbw x (n-1)/n, as an all-to-all does.
  std::string gather =
      "# nThread 1 nGpus 4 minBytes 8 maxBytes 1024 step: 2(factor) warmup iters: 5 iters: 20\n"
      "     1048576         65536     float    none      -1    30.00   34.95   26.21      0    "
      "29.00   36.16   27.12      0\n"
      "# Out of bounds values : 0 OK\n"
      "# Avg bus bandwidth    : 26.21\n";
  try {
    (void)import_rows(gather, "ag.txt", ImportFormat::nccl_tests, {});
    FAIL() << "an all-gather and an all-to-all cannot be told apart";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("ag.txt: line 2: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--collective"), std::string::npos) << e.what();
  }
  ImportOptions o;
  o.collective = models::CollectiveKind::all_gather;
  const Imported got = import_rows(gather, "ag.txt", ImportFormat::nccl_tests, o);
  EXPECT_EQ(got.rows[0].collective.ranks, 4);  // nThread x nGpus
  EXPECT_DOUBLE_EQ(got.rows[0].collective.busbw_factor, 0.75);
  const Imported named = import_rows("# Collective test starting: alltoall_perf\n" + gather,
                                     "a2a.txt", ImportFormat::nccl_tests, {});
  EXPECT_EQ(named.rows[0].collective.collective, models::CollectiveKind::all_to_all);
}

TEST(ImportNcclTests, RefusesWhatIsNotItsOutput) {
  const auto error = [](const std::string& text, const ImportOptions& o = {}) {
    try {
      (void)import_rows(text, "x.txt", ImportFormat::nccl_tests, o);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("# nThread 1 nGpus 8\n 1 2 3\n").find("x.txt: line 2: expected a result line"),
            std::string::npos);
  EXPECT_NE(error("# nThread 1 nGpus 8\n").find("no result lines"), std::string::npos);
  EXPECT_NE(error("# nThread 1 nGpus 8\n 1048576 1 float sum -1 x 1 1 0\n").find("line 2"),
            std::string::npos);
  // No ranks anywhere.
  EXPECT_NE(error(" 1048576 262144 float sum -1 40.00 26.21 45.88 0\n# Avg bus bandwidth : 45.88\n")
                .find("--ranks"),
            std::string::npos);
}

std::string benchmark_json() {
  return R"({"context": {"date": "2026-12-03", "num_cpus": 2},
 "benchmarks": [
  {"name": "BM_Gemm/1024/1024/1024", "run_name": "BM_Gemm/1024/1024/1024", "run_type": "iteration",
   "repetitions": 2, "repetition_index": 0, "iterations": 10, "real_time": 2.0, "cpu_time": 2.0,
   "time_unit": "ms", "m": 1024, "n": 1024, "k": 1024},
  {"name": "BM_Gemm/1024/1024/1024", "run_name": "BM_Gemm/1024/1024/1024", "run_type": "iteration",
   "repetitions": 2, "repetition_index": 1, "iterations": 10, "real_time": 2.5, "cpu_time": 2.5,
   "time_unit": "ms", "m": 1024, "n": 1024, "k": 1024},
  {"name": "BM_Gemm/1024/1024/1024_mean", "run_name": "BM_Gemm/1024/1024/1024",
   "run_type": "aggregate", "aggregate_name": "mean", "real_time": 2.25, "time_unit": "ms"},
  {"name": "BM_RmsNorm/4096", "run_name": "BM_RmsNorm/4096", "run_type": "iteration",
   "iterations": 100, "real_time": 250.0, "cpu_time": 250.0, "time_unit": "us",
   "bytes": 5.0e7, "flops": 1.0e7}
 ]})";
}

TEST(ImportGoogleBenchmark, RepetitionsAreSamplesAndCountersTheWork) {
  ImportOptions o;
  o.family = "norm.rms.fwd";
  const Imported got =
      import_rows(benchmark_json(), "bench.json", ImportFormat::google_benchmark, o);
  ASSERT_EQ(got.rows.size(), 2U);
  const Row& gemm = got.rows[0];
  EXPECT_EQ(gemm.family, "gemm");
  EXPECT_EQ(gemm.op_class, models::OpClass::gemm);
  EXPECT_DOUBLE_EQ(gemm.flops, 2.0 * 1024 * 1024 * 1024);  // no flops counter: 2mnk
  ASSERT_EQ(gemm.times_s.size(), 2U);                      // the aggregate left out
  EXPECT_DOUBLE_EQ(gemm.best_s, 2e-3);
  const Row& norm = got.rows[1];
  EXPECT_EQ(norm.family, "norm.rms.fwd");
  EXPECT_EQ(norm.op_class, models::OpClass::elementwise);
  EXPECT_DOUBLE_EQ(norm.bytes, 5e7);
  EXPECT_DOUBLE_EQ(norm.best_s, 250e-6);
  // Without --family the norm benchmark says what it lacks.
  try {
    (void)import_rows(benchmark_json(), "bench.json", ImportFormat::google_benchmark, {});
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bench.json: benchmarks[3]: "), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--family"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)import_rows(R"({"benchmarks": [{"name": "a", "run_type": "aggregate"}]})",
                                 "b.json", ImportFormat::google_benchmark, o),
               std::runtime_error);
  EXPECT_THROW((void)import_rows("{", "b.json", ImportFormat::google_benchmark, o),
               std::runtime_error);
}

// A trace of one mm (two launches of one kernel, and one of two kernels), a
// layer norm, an op Myriad does not price, and a kernel linked to nothing.
std::string kineto_trace() {
  return R"({"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
 "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 10,
   "args": {"External id": 1, "Input Dims": [[4096, 1024], [1024, 2048]],
            "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
  {"ph": "X", "cat": "kernel", "name": "sm90_gemm_a", "ts": 1, "dur": 100.0,
   "args": {"External id": 1, "correlation": 11}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 20, "dur": 10,
   "args": {"External id": 2, "Input Dims": [[4096, 1024], [1024, 2048]],
            "Input type": ["c10::BFloat16", "c10::BFloat16"]}},
  {"ph": "X", "cat": "kernel", "name": "sm90_gemm_a", "ts": 21, "dur": 80.0,
   "args": {"External id": 2}},
  {"ph": "X", "cat": "kernel", "name": "splitk_reduce", "ts": 101, "dur": 5.0,
   "args": {"External id": 2}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::native_layer_norm", "ts": 40, "dur": 5,
   "args": {"External id": 3, "Input Dims": [[4096, 1024], [], [1024], [1024], []],
            "Input type": ["c10::BFloat16", "", "float", "float", "double"]}},
  {"ph": "X", "cat": "kernel", "name": "layer_norm_kernel", "ts": 41, "dur": 20.0,
   "args": {"External id": 3}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::topk", "ts": 60, "dur": 5,
   "args": {"External id": 4, "Input Dims": [[4096, 64], []], "Input type": ["float", ""]}},
  {"ph": "X", "cat": "kernel", "name": "topk_kernel", "ts": 61, "dur": 7.0,
   "args": {"External id": 4}},
  {"ph": "X", "cat": "kernel", "name": "orphan", "ts": 70, "dur": 3.0, "args": {}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::_scaled_dot_product_flash_attention", "ts": 80,
   "dur": 5, "args": {"External id": 5, "Input Dims": [[1, 8, 1024, 64], [1, 8, 1024, 64],
   [1, 8, 1024, 64], [], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16",
   "Scalar", "Scalar"], "Concrete Inputs": ["", "", "", "0.0", "True"]}},
  {"ph": "X", "cat": "kernel", "name": "flash_fwd", "ts": 81, "dur": 50.0,
   "args": {"External id": 5}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::_scaled_dot_product_flash_attention", "ts": 90,
   "dur": 5, "args": {"External id": 6, "Input Dims": [[1, 8, 2048, 64], [1, 8, 2048, 64],
   [1, 8, 2048, 64], [], []], "Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16",
   "Scalar", "Scalar"]}},
  {"ph": "X", "cat": "kernel", "name": "flash_fwd", "ts": 91, "dur": 90.0,
   "args": {"External id": 6}},
  {"ph": "i", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 0}
 ]})";
}

TEST(ImportKineto, KernelsBecomeRowsOfTheOpsThatLaunchedThem) {
  const Imported got = import_rows(kineto_trace(), "trace.json", ImportFormat::kineto, {});
  ASSERT_EQ(got.rows.size(), 3U);
  EXPECT_EQ(got.device, "NVIDIA H100 80GB HBM3");
  // SDPA's flash forward, causal as recorded: 4 x heads x seq (seq + 1) / 2 x head dim.
  const Row& attention = got.rows[2];
  EXPECT_EQ(attention.op_class, models::OpClass::attention);
  EXPECT_EQ(attention.family, "attention.flash");  // not one of Myriad's own kernels
  EXPECT_FALSE(attention.backward);
  EXPECT_DOUBLE_EQ(attention.flops, 4.0 * 8 * (1024.0 * 1025 / 2) * 64);
  EXPECT_DOUBLE_EQ(attention.best_s, 50e-6);
  const Row& mm = got.rows[0];
  EXPECT_EQ(mm.name, "aten::mm [4096,1024],[1024,2048]");
  EXPECT_EQ(mm.family, "gemm");
  EXPECT_DOUBLE_EQ(mm.gemm.m, 4096);
  EXPECT_DOUBLE_EQ(mm.gemm.n, 2048);
  EXPECT_DOUBLE_EQ(mm.gemm.k, 1024);
  EXPECT_DOUBLE_EQ(mm.flops, 2.0 * 4096 * 2048 * 1024);
  ASSERT_EQ(mm.times_s.size(), 2U);
  EXPECT_DOUBLE_EQ(mm.times_s[1], 85e-6);  // a call's kernels summed
  EXPECT_DOUBLE_EQ(mm.best_s, 85e-6);
  EXPECT_EQ(mm.arguments["kernels"].size(), 2U);
  const Row& norm = got.rows[1];
  EXPECT_EQ(norm.family, "norm.layer.fwd");
  // Input (bf16), weight and bias (fp32) read, the output as large as the input.
  EXPECT_DOUBLE_EQ(norm.bytes, 2 * 4096.0 * 1024 * 2 + 2 * 1024.0 * 4);
  std::string notes;
  for (const auto& n : got.notes) notes += n + "\n";
  EXPECT_NE(notes.find("aten::topk (1 calls"), std::string::npos) << notes;
  // Without is_causal recorded, the second attention cannot be priced: left out,
  // named with why and where.
  EXPECT_NE(notes.find("kernels of 1 calls of aten::_scaled_dot_product_flash_attention (0.09 "
                       "ms), an op Myriad prices, left out: is_causal not recorded among its "
                       "\"Concrete Inputs\" (the first at traceEvents[12])"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("1 events neither ATen ops nor kernels, not read: 1 cuda_runtime"),
            std::string::npos)
      << notes;
  EXPECT_NE(notes.find("1 kernels name no ATen op"), std::string::npos) << notes;
  EXPECT_THROW((void)import_rows(R"({"traceEvents": []})", "t.json", ImportFormat::kineto, {}),
               std::runtime_error);
  EXPECT_THROW((void)import_rows(R"({"traceEvents": [{"cat": "kernel", "name": "k"}]})", "t.json",
                                 ImportFormat::kineto, {}),
               std::runtime_error);
}

// Issue 43: a tensor of 2^62 elements, or shapes whose product overflows, is
// not a shape a trace records: refused where it is, not priced.
TEST(ImportKineto, RefusesTensorsOfAbsurdSize) {
  const auto error = [](const std::string& dims) {
    const std::string trace =
        R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "args": {
        "External id": 1, "Input Dims": )" +
        dims + R"(, "Input type": ["float", "float"]}},
        {"ph": "X", "cat": "kernel", "name": "k", "dur": 5.0, "args": {"External id": 1}}]})";
    try {
      (void)import_rows(trace, "t.json", ImportFormat::kineto, {});
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error("[[4611686018427387904, 1024], [1024, 2048]]")
                .find("t.json: traceEvents[0].args.Input Dims[0]: "),
            std::string::npos)
      << error("[[4611686018427387904, 1024], [1024, 2048]]");
  // Each dimension plausible, their product (2^50) not.
  EXPECT_NE(error("[[33554432, 33554432], [33554432, 1024]]").find("Input Dims[0]"),
            std::string::npos);
  EXPECT_EQ(error("[[4096, 1024], [1024, 2048]]"), "no error");
}

// Issue 43: a GEMM with an empty dimension (a zero-size tensor) would be a row
// `calibrate fit` refuses (gemm.m >= 1): it is left out, as ops Myriad does not
// price are.
TEST(ImportKineto, AGemmWithAnEmptyDimensionIsLeftOut) {
  const std::string trace = R"({"traceEvents": [
   {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "args": {"External id": 1,
    "Input Dims": [[0, 1024], [1024, 2048]], "Input type": ["float", "float"]}},
   {"ph": "X", "cat": "kernel", "name": "k", "dur": 5.0, "args": {"External id": 1}},
   {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "args": {"External id": 2,
    "Input Dims": [[64, 1024], [1024, 2048]], "Input type": ["float", "float"]}},
   {"ph": "X", "cat": "kernel", "name": "k", "dur": 6.0, "args": {"External id": 2}}]})";
  const Imported got = import_rows(trace, "t.json", ImportFormat::kineto, {});
  ASSERT_EQ(got.rows.size(), 1U);
  EXPECT_DOUBLE_EQ(got.rows[0].gemm.m, 64);
}

// Issue 43: a counter m of 0 made a GEMM row its own reader refuses.
TEST(ImportGoogleBenchmark, RefusesAGemmDimensionBelowOne) {
  const std::string json = R"({"benchmarks": [{"name": "BM_Gemm/0", "real_time": 2.0,
    "time_unit": "ms", "m": 0, "n": 1024, "k": 1024}]})";
  try {
    (void)import_rows(json, "b.json", ImportFormat::google_benchmark, {});
    FAIL() << "a GEMM of m = 0 was imported";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("b.json: benchmarks[0].m: "), std::string::npos)
        << e.what();
  }
}

// Issue 43: a row per result line is what the reader keeps; past its bound it
// stops, at the line, and says the bound.
TEST(ImportNcclTests, RefusesMoreResultLinesThanOneImportTakes) {
  std::string text = "# nThread 1 nGpus 8\n";
  for (int i = 1; i <= 20001; ++i) {
    text += " " + std::to_string(8 * i) + " 2 float sum -1 40.0 1.00 1.75 0\n";
  }
  try {
    (void)import_rows(text, "x.txt", ImportFormat::nccl_tests, {});
    FAIL() << "20001 result lines were imported";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("x.txt: line 20002: more than 20000 result lines"),
              std::string::npos)
        << e.what();
  }
}

TEST(ImportedRows, FitWithABaseProfile) {
  RowsFile f;
  f.backend = "cuda";
  f.grid = "imported";
  f.rows = import_rows(nccl_all_reduce(), "ar.txt", ImportFormat::nccl_tests, {}).rows;
  for (Row& r : import_rows(kineto_trace(), "trace.json", ImportFormat::kineto, {}).rows) {
    f.rows.push_back(std::move(r));
  }
  FitOptions o;
  o.base_profile = std::string(MYRIAD_PROFILE_DIR) + "/H100.json";
  const FitResult fit = fit_profile(f, o);
  // The bus bandwidth curve is the import's: 391 GB/s at 1 GiB.
  const auto& curve = fit.profile["nvlink_busbw"];
  ASSERT_TRUE(curve.is_array());
  ASSERT_FALSE(curve.empty());
  double at_largest = 0;
  for (const auto& point : curve) at_largest = point[1].get<double>();
  EXPECT_GT(at_largest, 300e9);
  EXPECT_LT(at_largest, 450e9);
  // The imported layer norm has an efficiency of its own.
  EXPECT_TRUE(fit.profile["memory_bound_kernels"].contains("norm.layer.fwd"))
      << fit.profile["memory_bound_kernels"].dump();
  // Without a base there are no ceilings to fit against.
  EXPECT_THROW((void)fit_profile(f, {}), std::runtime_error);
}

}  // namespace
}  // namespace myriad::calibration
