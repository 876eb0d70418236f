// The fit recovers a known profile from rows its own cost model generated, and
// refuses rows it cannot trust; the profile it writes is one estimate accepts.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include "calibration/check/check.hpp"
#include "calibration/fit/fit.hpp"
#include "calibration/measure/rows.hpp"
#include "calibration/measure/runner.hpp"
#include "models/transformer/layer_program.hpp"
#include "myriad_source_paths.hpp"
#include "sim/cost/compute_cost.hpp"

namespace myriad::calibration {
namespace {

// The profile the synthetic rows come from.
sim::DeviceProfile truth() {
  sim::DeviceProfile p;
  p.bf16_flops = 2e10;
  p.hbm_bw_Bps = 1e10;
  p.gemm_efficiency = 0.8;
  p.gemm_k_half = 50;
  p.gemm_latency_s = 40e-6;
  p.sms = 1;
  p.gemm_tiles = {{1, 1, 1}};
  p.attention_fwd_efficiency = 0.2;
  p.attention_bwd_efficiency = 0.25;
  p.memory_efficiency = 1;
  p.sustained_clock = 1;
  p.kernel_overhead_s = 5e-6;
  p.memory_bound_efficiency = {{"copy", 1.0},
                               {"norm.layer.fwd", 0.3},
                               {"norm.layer.bwd", 0.4},
                               {"activation.gelu.fwd", 0.05}};
  p.nvlink_busbw = {{4096, 1e8}, {1 << 20, 1e9}, {1 << 23, 2e9}};
  return p;
}

constexpr double kLatency = 30e-6;

Row kernel(const std::string& family, models::OpClass cls, double flops, double bytes) {
  Row r;
  r.name = family + " " + std::to_string(bytes) + " " + std::to_string(flops);
  r.kind = RowKind::kernel;
  r.family = family;
  r.op_class = cls;
  r.flops = flops;
  r.bytes = bytes;
  r.check = "pass";
  return r;
}

Row gemm(double m, double n, double k) {
  Row r = kernel("gemm", models::OpClass::gemm, 2 * m * n * k, 4 * (m * k + k * n + m * n));
  r.gemm = {m, n, k, 1};
  r.name = "gemm " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
  return r;
}

Row all_reduce(int ranks, double bytes) {
  Row r;
  r.name = "all_reduce " + std::to_string(ranks) + " " + std::to_string(bytes);
  r.kind = RowKind::collective;
  r.family = "all_reduce.ring";
  r.bytes = bytes;
  r.collective = {models::CollectiveKind::all_reduce,
                  models::CollectiveAlgorithm::ring,
                  false,
                  ranks,
                  bytes,
                  2.0 * (ranks - 1) / ranks,
                  2.0 * (ranks - 1)};
  r.check = "pass";
  return r;
}

RowsFile synthetic() {
  const sim::DeviceProfile p = truth();
  RowsFile f;
  f.backend = "cpu";
  f.grid = "small";
  f.date = "2026-11-29T00:00:00Z";
  f.environment = {{"cpu", "test CPU"}};
  Row copy = kernel("copy", models::OpClass::elementwise, 0, 1e9);
  copy.kind = RowKind::ceiling;
  copy.name = "ceiling.copy";
  f.rows.push_back(copy);
  Row big = gemm(4096, 4096, 4096);
  big.kind = RowKind::ceiling;
  big.name = "ceiling.gemm";
  f.rows.push_back(big);
  for (double m : {64.0, 256.0, 1024.0}) {
    for (double k : {16.0, 128.0, 1024.0}) f.rows.push_back(gemm(m, 512, k));
  }
  for (double bytes : {1e5, 1e6, 1e7}) {
    f.rows.push_back(kernel("copy", models::OpClass::elementwise, 0, bytes));
    f.rows.push_back(kernel("norm.layer.fwd", models::OpClass::elementwise, bytes, bytes));
    f.rows.push_back(kernel("norm.layer.bwd", models::OpClass::elementwise, bytes, 1.5 * bytes));
    f.rows.push_back(kernel("activation.gelu.fwd", models::OpClass::elementwise, bytes, bytes));
  }
  for (double flops : {1e8, 1e9}) {
    f.rows.push_back(kernel("attention", models::OpClass::attention, flops, flops / 100));
    Row b = kernel("attention", models::OpClass::attention, 2.5 * flops, flops / 50);
    b.backward = true;
    b.name += " bwd";
    f.rows.push_back(b);
  }
  for (int ranks : {2, 4}) {
    for (double bytes : {4096.0, double(1 << 20), double(1 << 23)}) {
      f.rows.push_back(all_reduce(ranks, bytes));
    }
  }
  for (Row& r : f.rows) {
    // The ceilings run at the peak and the datasheet bandwidth by construction.
    double t = r.kind == RowKind::ceiling
                   ? (r.family == "gemm" ? r.flops / p.bf16_flops : r.bytes / p.hbm_bw_Bps)
                   : predict_row(r, p, kLatency);
    r.times_s = {t, t, t};
    r.best_s = t;
  }
  return f;
}

TEST(CalibrationFit, RecoversTheProfileItsRowsCameFrom) {
  const FitResult fit = fit_profile(synthetic(), {});
  const sim::DeviceProfile p = sim::parse_profile(fit.profile, "fitted");
  EXPECT_NEAR(p.bf16_flops, 2e10, 2e10 * 1e-9);
  EXPECT_NEAR(p.hbm_bw_Bps, 1e10, 1e10 * 1e-9);
  EXPECT_NEAR(p.kernel_overhead_s, 5e-6, 5e-6 * 1e-6);
  EXPECT_NEAR(p.memory_bound_efficiency.at("norm.layer.fwd"), 0.3, 1e-6);
  EXPECT_NEAR(p.memory_bound_efficiency.at("norm.layer.bwd"), 0.4, 1e-6);
  EXPECT_NEAR(p.memory_bound_efficiency.at("activation.gelu.fwd"), 0.05, 1e-6);
  // The coarse family averages its kernels: between them.
  EXPECT_GT(p.memory_bound_efficiency.at("norm"), 0.3);
  EXPECT_LT(p.memory_bound_efficiency.at("norm"), 0.4);
  EXPECT_NEAR(p.gemm_efficiency, 0.8, 0.01);
  EXPECT_NEAR(p.gemm_k_half, 50, 1);
  EXPECT_NEAR(p.gemm_latency_s, 40e-6, 1e-6);
  EXPECT_NEAR(p.attention_fwd_efficiency, 0.2, 1e-6);
  EXPECT_NEAR(p.attention_bwd_efficiency, 0.25, 1e-6);
  EXPECT_NEAR(fit.latency_per_step_s, kLatency, 1e-9);
  ASSERT_EQ(p.nvlink_busbw.size(), 3U);
  EXPECT_NEAR(p.nvlink_busbw[1].busbw_Bps, 1e9, 1);
  for (const auto& r : fit.residuals) {
    if (r.parameter.find("norm") != std::string::npos &&
        r.parameter != "memory_bound_kernels.norm") {
      EXPECT_LT(r.max_error, 1e-6) << r.parameter;
    }
  }
  EXPECT_EQ(p.parameters.at("gemm_efficiency").origin, "measured");
  EXPECT_EQ(p.parameters.at("nic_efficiency").origin, "assumption");
  EXPECT_EQ(fit.profile["device"], "test CPU");
}

// Expectation (issue 38): no fitted GEMM rate is above the fastest GEMM measured.
// The H200's rows of 2026-11-30, fitted with the datasheet's 989 TFLOP/s, had put
// the efficiency at 0.906 (896 TFLOP/s for large GEMMs) where the fastest row ran
// 854; the efficiency is now held at that row's rate over the peak, and says so.
TEST(CalibrationFit, NoGemmRateAboveTheFastestMeasured) {
  const std::string measured =
      std::string(MYRIAD_PROFILE_DIR) + "/../measurements/H200-2026-11-30/rows.json";
  const RowsFile rows = read_rows(measured);
  double fastest = 0;
  for (const Row& r : rows.rows) {
    if (r.family == "gemm" && r.best_s > 0) fastest = std::max(fastest, r.flops / r.best_s);
  }
  ASSERT_GT(fastest, 8e14);
  FitOptions o;
  o.base_profile = std::string(MYRIAD_PROFILE_DIR) + "/H200.json";
  const sim::DeviceProfile p = sim::parse_profile(fit_profile(rows, o).profile, "fitted");
  EXPECT_LE(p.gemm_efficiency * p.bf16_flops, fastest * (1 + 1e-9));
  EXPECT_NEAR(p.gemm_efficiency * p.bf16_flops, fastest, fastest * 1e-6);  // the bound binds
  EXPECT_NE(p.parameters.at("gemm_efficiency").note.find("at most the fastest GEMM measured"),
            std::string::npos);
  // The synthetic rows, whose ceiling runs at the peak, keep their 0.8.
  EXPECT_NEAR(sim::parse_profile(fit_profile(synthetic(), {}).profile, "fitted").gemm_efficiency,
              0.8, 0.01);
}

// Expectation (issue 38): the HBM efficiency comes from copies past the last-level
// cache. The H200's 16 MiB copy (32 MiB moved, within the 50 MiB L2) ran at 104 %
// of the datasheet's 4.8 TB/s and made the efficiency 1; the 256 MiB copy alone
// gives 0.88. Without the cache size in the base profile, every copy counts.
TEST(CalibrationFit, HbmBandwidthFromCopiesPastTheCache) {
  const std::string measured =
      std::string(MYRIAD_PROFILE_DIR) + "/../measurements/H200-2026-11-30/rows.json";
  const RowsFile rows = read_rows(measured);
  FitOptions o;
  o.base_profile = std::string(MYRIAD_PROFILE_DIR) + "/H200.json";
  const sim::DeviceProfile p = sim::parse_profile(fit_profile(rows, o).profile, "fitted");
  EXPECT_GT(p.memory_efficiency, 0.85);
  EXPECT_LT(p.memory_efficiency, 0.9);
  EXPECT_NE(p.parameters.at("memory_efficiency")
                .note.find("2 copies within the 50 MiB last-level cache left out"),
            std::string::npos);
  nlohmann::json base = nlohmann::json::parse(std::ifstream(*o.base_profile));
  base["parameters"].erase("last_level_cache_bytes");
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("myriad-fit-nocache-" + std::to_string(::getpid()) + ".json"))
                               .string();
  std::ofstream(path) << base.dump();
  FitOptions blind;
  blind.base_profile = path;
  const sim::DeviceProfile q = sim::parse_profile(fit_profile(rows, blind).profile, "blind");
  EXPECT_DOUBLE_EQ(q.memory_efficiency, 1.0);
  // The L2 the harness records with the rows since 2026-12-06 (50 MiB on the H200,
  // as cudaDeviceProp::l2CacheSize gives the GH100's) serves without the base's.
  RowsFile recorded = rows;
  recorded.environment["gpu_last_level_cache_bytes"] = 52428800.0;
  const FitResult r = fit_profile(recorded, blind);
  std::filesystem::remove(path);
  const sim::DeviceProfile m = sim::parse_profile(r.profile, "recorded");
  EXPECT_DOUBLE_EQ(m.memory_efficiency, p.memory_efficiency);
  EXPECT_DOUBLE_EQ(m.last_level_cache_bytes, 52428800.0);
  EXPECT_EQ(m.parameters.at("last_level_cache_bytes").origin, "measured");
}

// Two attention kernels measured (the SIMT one and a tensor-core one twice as
// fast): the profile describes the faster unless told which, and names it.
TEST(CalibrationFit, DescribesTheFasterAttentionKernelUnlessToldWhich) {
  RowsFile f = synthetic();
  std::vector<Row> fast;
  for (const Row& r : f.rows) {
    if (r.op_class != models::OpClass::attention) continue;
    Row m = r;
    m.name = "mma " + r.name;
    m.family = "attention.mma";
    // Twice the rate above the overhead: efficiency 0.4 forward, 0.5 backward.
    m.best_s = (r.best_s - 5e-6) / 2 + 5e-6;
    m.times_s = {m.best_s};
    fast.push_back(m);
  }
  ASSERT_FALSE(fast.empty());
  f.rows.insert(f.rows.end(), fast.begin(), fast.end());
  const FitResult fastest = fit_profile(f, {});
  const sim::DeviceProfile p = sim::parse_profile(fastest.profile, "fitted");
  EXPECT_NEAR(p.attention_fwd_efficiency, 0.4, 1e-6);
  EXPECT_NEAR(p.attention_bwd_efficiency, 0.5, 1e-6);
  EXPECT_NE(p.parameters.at("attention_fwd_efficiency").note.find("attention.mma"),
            std::string::npos);
  FitOptions simt;
  simt.attention_family = "attention";
  const sim::DeviceProfile q =
      sim::parse_profile(fit_profile(f, simt).profile, "fitted to the SIMT kernel");
  EXPECT_NEAR(q.attention_fwd_efficiency, 0.2, 1e-6);
  FitOptions none;
  none.attention_family = "attention.cudnn";
  try {
    (void)fit_profile(f, none);
    FAIL() << "fitted to a kernel it never measured";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("measured: attention, attention.mma"), std::string::npos)
        << e.what();
  }
}

// cuDNN's fused attention measured beside Myriad's kernels (forward only, as the
// CUDA grid times it), four times the SIMT kernel's rate: the profile describes
// it by default (the fastest) and with --reference cudnn, whose backward falls
// back to the fastest measured and says so; --reference myriad describes the
// fastest of Myriad's own.
TEST(CalibrationFit, GroundsAttentionInTheReferenceOrInMyriadsOwnKernels) {
  RowsFile f = synthetic();
  std::vector<Row> added;
  for (const Row& r : f.rows) {
    if (r.op_class != models::OpClass::attention) continue;
    for (const auto& [family, speedup] :
         {std::pair{"attention.mma", 2.0}, std::pair{"attention.cudnn", 4.0}}) {
      if (r.backward && std::string(family) == kCudnnAttentionFamily) continue;
      Row m = r;
      m.name = std::string(family) + " " + r.name;
      m.family = family;
      m.best_s = (r.best_s - 5e-6) / speedup + 5e-6;
      m.times_s = {m.best_s};
      added.push_back(m);
    }
  }
  ASSERT_FALSE(added.empty());
  f.rows.insert(f.rows.end(), added.begin(), added.end());
  const auto fitted = [&](const std::string& reference) {
    FitOptions o;
    o.attention_reference = reference;
    return sim::parse_profile(fit_profile(f, o).profile, "fitted");
  };
  const sim::DeviceProfile fastest = fitted("");
  EXPECT_NEAR(fastest.attention_fwd_efficiency, 0.8, 1e-6);
  EXPECT_NEAR(fastest.attention_bwd_efficiency, 0.5, 1e-6);
  const sim::DeviceProfile cudnn = fitted("cudnn");
  EXPECT_NEAR(cudnn.attention_fwd_efficiency, 0.8, 1e-6);
  EXPECT_NEAR(cudnn.attention_bwd_efficiency, 0.5, 1e-6);
  EXPECT_NE(cudnn.parameters.at("attention_bwd_efficiency").note.find("cuDNN's not measured"),
            std::string::npos)
      << cudnn.parameters.at("attention_bwd_efficiency").note;
  const sim::DeviceProfile own = fitted("myriad");
  EXPECT_NEAR(own.attention_fwd_efficiency, 0.4, 1e-6);
  EXPECT_NE(own.parameters.at("attention_fwd_efficiency").note.find("fastest of Myriad's own"),
            std::string::npos)
      << own.parameters.at("attention_fwd_efficiency").note;
  EXPECT_TRUE(own_attention_family("attention.mma"));
  EXPECT_FALSE(own_attention_family(kCudnnAttentionFamily));
}

// Two threads running the ceiling GEMM at once, 1.25x as long as one alone:
// the profile records it, the check reads it back and scales the compute of
// ranks that share the host, and refuses rank counts it was not measured at.
TEST(CalibrationFit, RecordsWhatRanksSharingTheHostCostEachOther) {
  RowsFile rows = synthetic();
  const Row& alone = rows.rows[1];
  ASSERT_EQ(alone.name, "ceiling.gemm");
  Row together = alone;
  together.name = "gemm.nn.concurrent threads=2";
  together.family = "gemm.concurrent";
  together.arguments = {{"threads", 2}};
  together.best_s = 1.25 * alone.best_s;
  together.times_s = {together.best_s};
  rows.rows.push_back(together);
  const FitResult fit = fit_profile(rows, {});
  EXPECT_EQ(fit.concurrent_threads, 2);
  EXPECT_DOUBLE_EQ(fit.concurrent_slowdown, 1.25);
  const FittedTerms terms = fitted_terms(fit.profile, "fitted");
  EXPECT_EQ(terms.concurrent_threads, 2);
  EXPECT_DOUBLE_EQ(terms.concurrent_slowdown, 1.25);
  EXPECT_NEAR(terms.latency_per_step_s, kLatency, 1e-9);

  const sim::DeviceProfile p = sim::parse_profile(fit.profile, "fitted");
  CompositeWork work;
  work.ops.push_back(models::make_elementwise("norm.layer.fwd", 1e6));
  const double one = predict_composite(work, p, terms);
  work.ranks_on_host = 2;
  EXPECT_DOUBLE_EQ(predict_composite(work, p, terms), 1.25 * one);
  work.ranks_on_host = 3;
  EXPECT_THROW((void)predict_composite(work, p, terms), std::runtime_error);

  // Without the concurrent row there is nothing to scale by: refused, not guessed.
  const FittedTerms single = fitted_terms(fit_profile(synthetic(), {}).profile, "fitted");
  EXPECT_EQ(single.concurrent_threads, 1);
  work.ranks_on_host = 2;
  EXPECT_THROW((void)predict_composite(work, p, single), std::runtime_error);

  // A concurrent row needs the same GEMM alone to compare with.
  rows.rows.back().gemm.k += 1;
  EXPECT_THROW((void)fit_profile(rows, {}), std::runtime_error);
}

TEST(CalibrationRows, TheOldFormatIsRefusedWithWhy) {
  nlohmann::json j = to_json(synthetic());
  j["format"] = "myriad-calibration-rows/1";
  try {
    (void)rows_from_json(j, "old/rows.json");
    FAIL() << "accepted rows of the old format";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("old/rows.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("measure again"), std::string::npos) << e.what();
  }
}

TEST(CalibrationFit, EveryFittedRowIsPredictedBackExactly) {
  const RowsFile rows = synthetic();
  const FitResult fit = fit_profile(rows, {});
  const sim::DeviceProfile p = sim::parse_profile(fit.profile, "fitted");
  for (const Row& r : rows.rows) {
    if (r.kind == RowKind::ceiling || r.op_class == models::OpClass::gemm) continue;
    EXPECT_NEAR(predict_row(r, p, fit.latency_per_step_s) / r.best_s, 1, 1e-6) << r.name;
  }
}

TEST(CalibrationFit, RefusesRowsThatFailedTheirCheck) {
  RowsFile rows = synthetic();
  rows.rows[3].check = "C[0, 0] = 1, expected 2";
  try {
    (void)fit_profile(rows, {});
    FAIL() << "fitted to a wrong result";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(rows.rows[3].name), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("failed its check"), std::string::npos) << e.what();
  }
}

TEST(CalibrationFit, LeavesOutFailedRowsOnlyWhenAskedAndNamesThem) {
  RowsFile rows = synthetic();
  rows.rows[3].check = "error: CUBLAS_STATUS_NOT_SUPPORTED";
  rows.rows[3].times_s.clear();
  FitOptions options;
  options.leave_out_failed = true;
  const FitResult fitted = fit_profile(rows, options);
  ASSERT_EQ(fitted.left_out, std::vector<std::string>{rows.rows[3].name});
  const auto& left = fitted.profile["provenance"]["left_out"]["rows"];
  ASSERT_EQ(left.size(), 1U);
  EXPECT_EQ(left[0]["row"], rows.rows[3].name);
  EXPECT_EQ(left[0]["check"], rows.rows[3].check);
  // The rows that passed give the profile they gave before.
  const FitResult clean = fit_profile(synthetic(), {});
  EXPECT_FALSE(clean.profile["provenance"].contains("left_out"));
  for (const auto& [key, p] : clean.profile["parameters"].items()) {
    const double want = p["value"].get<double>();
    EXPECT_NEAR(fitted.profile["parameters"][key]["value"].get<double>(), want,
                1e-6 * std::abs(want))
        << key;
  }
  EXPECT_NE(fitted.profile["parameters"]["gemm_efficiency"]["note"].get<std::string>().find(
                "fitted to 8 rows"),
            std::string::npos)
      << "one GEMM row of 9 left out";
}

TEST(CalibrationRunner, ACaseThatThrowsCostsItsRowNotTheRun) {
  const auto blank = [](Row r) {
    r.times_s.clear();
    r.check.clear();
    return r;
  };
  Case broken;
  broken.row = blank(synthetic().rows[3]);
  broken.prepare = []() -> Instance { throw std::runtime_error("no such kernel on this device"); };
  Case fine;
  fine.row = blank(synthetic().rows[4]);
  fine.prepare = [] {
    Instance inst;
    auto sum = std::make_shared<double>(0);
    inst.run = [sum] { *sum = *sum + 1; };
    inst.timed = [sum](int iterations) {
      for (int i = 0; i < iterations; ++i) *sum = *sum + 1;
      return 1e-6 * iterations;  // a device clock that says one microsecond a run
    };
    inst.check = [] { return std::string("pass"); };
    return inst;
  };
  std::ostringstream progress;
  const std::vector<Row> got = run_cases({broken, fine}, {3, 1e-3}, progress);
  ASSERT_EQ(got.size(), 2U);
  EXPECT_EQ(got[0].check, "error: no such kernel on this device");
  EXPECT_TRUE(got[0].times_s.empty());
  EXPECT_EQ(got[1].check, "pass");
  EXPECT_EQ(got[1].times_s.size(), 3U);
  EXPECT_DOUBLE_EQ(got[1].best_s, 1e-6);
  EXPECT_NE(progress.str().find(got[0].name + " "), std::string::npos) << progress.str();
  // The errored row survives the rows file, and a row without times and a
  // passing check is still refused.
  RowsFile file = synthetic();
  file.rows.push_back(got[0]);
  const RowsFile back = rows_from_json(to_json(file), "rows.json");
  EXPECT_EQ(back.rows.back().check, got[0].check);
  file.rows.back().check = "pass";
  EXPECT_THROW((void)rows_from_json(to_json(file), "rows.json"), std::runtime_error);
}

TEST(CalibrationFit, SaysWhatIsMissing) {
  RowsFile rows = synthetic();
  std::erase_if(rows.rows, [](const Row& r) { return r.op_class == models::OpClass::attention; });
  try {
    (void)fit_profile(rows, {});
    FAIL() << "fitted without attention rows";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "calibration rows have no attention forward kernels");
  }
}

TEST(CalibrationRows, RoundTripThroughJson) {
  const RowsFile rows = synthetic();
  const RowsFile back = rows_from_json(to_json(rows), "rows.json");
  ASSERT_EQ(back.rows.size(), rows.rows.size());
  for (std::size_t i = 0; i < rows.rows.size(); ++i) {
    EXPECT_EQ(back.rows[i].name, rows.rows[i].name);
    EXPECT_EQ(back.rows[i].best_s, rows.rows[i].best_s);
    EXPECT_EQ(back.rows[i].collective.steps, rows.rows[i].collective.steps);
    EXPECT_EQ(back.rows[i].gemm.k, rows.rows[i].gemm.k);
    EXPECT_EQ(back.rows[i].kind, rows.rows[i].kind);
    EXPECT_EQ(back.rows[i].collective.collective, rows.rows[i].collective.collective);
    EXPECT_EQ(back.rows[i].collective.algorithm, rows.rows[i].collective.algorithm);
  }
}

// Expectation: collective rows the curve is not fitted from (NCCL's nvls) are
// named with their count, and a curve kept from the base profile is not called
// measured (issue 41 item 5: they were dropped silently, and the console said
// "measured" of the base profile's curve).
TEST(CalibrationFit, NamesTheCollectiveRowsItDoesNotUse) {
  RowsFile rows = synthetic();
  int nvls = 0;
  for (Row& r : rows.rows) {
    if (r.kind != RowKind::collective) continue;
    r.collective.algorithm = models::CollectiveAlgorithm::nvls;
    r.family = "all_reduce.nvls";
    ++nvls;
  }
  ASSERT_GT(nvls, 0);
  // The base: the profile these rows fit with ring all-reduces.
  const FitResult ring = fit_profile(synthetic(), {});
  EXPECT_TRUE(ring.profile["provenance"]["transport"]["measured"].get<bool>());
  const std::string base = (std::filesystem::temp_directory_path() /
                            ("myriad-fit-base-" + std::to_string(::getpid()) + ".json"))
                               .string();
  std::ofstream(base) << ring.profile.dump();
  FitOptions o;
  o.base_profile = base;
  const FitResult fit = fit_profile(rows, o);
  std::filesystem::remove(base);
  const auto& transport = fit.profile["provenance"]["transport"];
  EXPECT_FALSE(transport["measured"].get<bool>());
  const std::string note = transport["note"].get<std::string>();
  EXPECT_NE(note.find("not measured"), std::string::npos) << note;
  EXPECT_NE(note.find(fmt::format("not used: all_reduce.nvls x{}", nvls)), std::string::npos)
      << note;
}

// Expectation: collectives copied between ranks on one device keep saying so
// ("ring.device_copy"), and the fit leaves them out of the bus bandwidth curve.
TEST(CalibrationRows, DeviceCopiesAreKeptApartFromTheInterconnect) {
  RowsFile rows = synthetic();
  const FitResult interconnect = fit_profile(rows, {});
  for (Row& r : rows.rows) {
    if (r.kind != RowKind::collective) continue;
    r.collective.device_copy = true;
    r.best_s *= 3;  // what the fit must not see
  }
  nlohmann::json j = to_json(rows);
  bool written = false;
  for (const auto& r : j["rows"]) {
    if (r["kind"] == "collective") written = r["collective"]["algorithm"] == "ring.device_copy";
  }
  EXPECT_TRUE(written);
  const RowsFile back = rows_from_json(j, "rows.json");
  for (const Row& r : back.rows) {
    if (r.kind == RowKind::collective) {
      EXPECT_TRUE(r.collective.device_copy) << r.name;
    }
  }
  try {
    (void)fit_profile(back, {});
    FAIL() << "fitted a bus bandwidth curve to device copies";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no all-reduce rows"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(interconnect.profile["nvlink_busbw"].empty());
}

TEST(CalibrationRows, UnknownCollectivesAndAlgorithmsAreNamed) {
  nlohmann::json j = to_json(synthetic());
  for (auto& r : j["rows"]) {
    if (r["kind"] != "collective") continue;
    r["collective"]["collective"] = "allreduce";
    r["collective"]["algorithm"] = "rings";
    break;
  }
  try {
    (void)rows_from_json(j, "rows.json");
    FAIL() << "accepted an unknown collective";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(".collective.collective: expected all_reduce, all_gather"), std::string::npos)
        << m;
    EXPECT_NE(m.find(".collective.algorithm: expected an algorithm (ring, tree"), std::string::npos)
        << m;
  }
}

TEST(CalibrationRows, BadRowsAreNamedWithTheKey) {
  nlohmann::json j = to_json(synthetic());
  j["rows"][2]["kind"] = "benchmark";
  j["rows"][4]["speed"] = 3;
  j["rows"][5]["times_s"] = nlohmann::json::array();
  try {
    (void)rows_from_json(j, "run/rows.json");
    FAIL() << "accepted bad rows";
  } catch (const std::runtime_error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("run/rows.json: 3 problem(s)"), std::string::npos) << m;
    EXPECT_NE(m.find("rows[2].kind: expected ceiling, kernel or collective"), std::string::npos)
        << m;
    EXPECT_NE(m.find("rows[4].speed: unknown key"), std::string::npos) << m;
    EXPECT_NE(m.find("rows[5].times_s: expected a non-empty list of seconds"), std::string::npos)
        << m;
  }
  EXPECT_THROW((void)rows_from_json(nlohmann::json::object(), "x.json"), std::runtime_error);
}

// Expectation: the fit writes every parameter the profile reader requires, under
// the reader's own keys, and nothing else.
TEST(ProfileKeys, TheFitWritesWhatTheReaderReads) {
  const FitResult fit = fit_profile(synthetic(), {});
  std::set<std::string> written;
  for (const auto& item : fit.profile["parameters"].items()) written.insert(item.key());
  std::set<std::string> required;
  for (const auto& scalar : sim::profile_scalars()) {
    EXPECT_EQ(sim::profile_key(scalar.member), scalar.key);
    if (scalar.required) required.insert(std::string(scalar.key));
  }
  EXPECT_EQ(written, required);
}

TEST(DeviceProfileFamilies, LongestMeasuredPrefixWins) {
  sim::DeviceProfile p;
  p.memory_efficiency = 0.9;
  p.memory_bound_efficiency = {{"norm", 0.5}, {"norm.layer", 0.6}, {"norm.layer.bwd", 0.7}};
  EXPECT_EQ(sim::memory_efficiency_of(p, "norm.layer.bwd"), 0.7);
  EXPECT_EQ(sim::memory_efficiency_of(p, "norm.layer.fwd"), 0.6);
  EXPECT_EQ(sim::memory_efficiency_of(p, "norm.attention"), 0.5);
  EXPECT_EQ(sim::memory_efficiency_of(p, "residual.mlp"), 0.9);
  EXPECT_EQ(sim::memory_efficiency_of(p, "normal"), 0.9);
}

// Expectation: a model with RMSNorm is priced with the RMSNorm kernels calibration
// measured, forward and backward; one with LayerNorm with the LayerNorm ones.
TEST(DeviceProfileFamilies, TheModelsNormIsTheKernelMeasured) {
  sim::DeviceProfile p;
  p.hbm_bw_Bps = 1e12;
  p.bf16_flops = 1e18;  // memory-bound: only the traffic counts
  p.kernel_overhead_s = 0;
  p.memory_efficiency = 0.9;
  p.memory_bound_efficiency = {{"norm.layer.fwd", 0.4},
                               {"norm.layer.bwd", 0.5},
                               {"norm.rms.fwd", 0.6},
                               {"norm.rms.bwd", 0.8}};
  const auto norm_times = [&](models::scenario::Norm norm) {
    models::scenario::ModelSpec m;
    m.layers = 1;
    m.hidden = 1024;
    m.heads = 8;
    m.kv_heads = 8;
    m.ffn_hidden = 4096;
    m.vocab = 1000;
    m.seq_length = 256;
    m.norm = norm;
    models::ShardShape sh;
    sh.seq = 256;
    const models::LayerProgram lp = models::transformer_layer(m, sh);
    std::vector<double> seconds_per_byte;
    for (const models::Phase* phase : {&lp.forward, &lp.backward}) {
      for (const auto& op : phase->ops) {
        if (op.name != "norm.attention") continue;
        seconds_per_byte.push_back(sim::compute_cost(op, p).time_s / op.bytes);
      }
    }
    return seconds_per_byte;
  };
  const auto layer = norm_times(models::scenario::Norm::layernorm);
  const auto rms = norm_times(models::scenario::Norm::rmsnorm);
  ASSERT_EQ(layer.size(), 2U);
  ASSERT_EQ(rms.size(), 2U);
  EXPECT_NEAR(layer[0] * 1e12, 1 / 0.4, 1e-9);
  EXPECT_NEAR(layer[1] * 1e12, 1 / 0.5, 1e-9);
  EXPECT_NEAR(rms[0] * 1e12, 1 / 0.6, 1e-9);
  EXPECT_NEAR(rms[1] * 1e12, 1 / 0.8, 1e-9);
}

}  // namespace
}  // namespace myriad::calibration
