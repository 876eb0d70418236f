// OpenXLA's GEMM performance table (calibrate import xla-gemm-table): one row per
// bf16 entry of the device asked for, its time from the table's FLOP/s, refused
// with the line when the text is not the table, and fitted with a base profile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "calibration/fit/fit.hpp"
#include "calibration/import/import.hpp"
#include "myriad_source_paths.hpp"
#include "sim/cost/compute_cost.hpp"

namespace myriad::calibration {
namespace {

// Entries as the table writes them (openxla/xla,
// xla/service/gpu/model/default_matmul_perf_table.txtpb, commit 336bb15c: the
// sm_100_B200 entry's values; the sm_90 entries' values from the same project's
// matmul_interpolator_data.h), one of them without a bf16 figure.
std::string xla_table() {
  return R"(# proto-file: third_party/tensorflow/compiler/xla/xla_data.proto
# proto-message: xla.GemmPerfTable

entries {
  key: "sm_100_B200"
  value {
    entries {
      b: 1
      m: 256
      n: 256
      k: 256
      flops { key: "bf16xbf16->bf16" value: 6765006451612 }
      flops { key: "f32xf32->f32" value: 5065584541062 }
    }
  }
}
entries {
  key: "sm_90"
  value {
    entries {
      b: 1
      m: 4096
      n: 4096
      k: 4096
      flops { key: "bf16xbf16->bf16" value: 783328793548203 }
      flops { key: "f32xf32->f32" value: 401589990188086 }
    }
    entries {
      b: 2
      m: 256
      n: 2048
      k: 2048
      flops {
        key: "bf16xbf16->bf16"
        value: 332247798870580
      }
    }
    entries {
      b: 1
      m: 512
      n: 256
      k: 256
      flops { key: "f32xf32->f32" value: 9731563805104 }
    }
  }
}
)";
}

TEST(ImportXlaGemmTable, EachBf16EntryOfTheDeviceIsARow) {
  ImportOptions o;
  o.table_key = "sm_90";
  const Imported got = import_rows(xla_table(), "table.txtpb", ImportFormat::xla_gemm_table, o);
  ASSERT_EQ(got.rows.size(), 2U);
  EXPECT_EQ(got.device, "sm_90");
  const Row& big = got.rows[0];
  EXPECT_EQ(big.family, "gemm");
  EXPECT_EQ(big.op_class, models::OpClass::gemm);
  EXPECT_DOUBLE_EQ(big.gemm.m, 4096);
  EXPECT_DOUBLE_EQ(big.gemm.batch, 1);
  EXPECT_DOUBLE_EQ(big.flops, 2.0 * 4096 * 4096 * 4096);
  EXPECT_DOUBLE_EQ(big.best_s, big.flops / 783328793548203.0);
  EXPECT_EQ(big.arguments["key"], "sm_90");
  EXPECT_EQ(big.arguments["line"], 20);
  const Row& batched = got.rows[1];
  EXPECT_DOUBLE_EQ(batched.gemm.batch, 2);
  EXPECT_DOUBLE_EQ(batched.flops, 2.0 * 2 * 256 * 2048 * 2048);
  // The entry without a bf16 figure is left out, and said.
  ASSERT_FALSE(got.notes.empty());
  EXPECT_NE(got.notes.back().find("1 entries without bf16xbf16->bf16 left out"), std::string::npos)
      << got.notes.back();
}

TEST(ImportXlaGemmTable, TheDeviceMustBeNamedWhereThereAreSeveral) {
  const auto error = [](const std::string& text, const std::string& key) {
    ImportOptions o;
    o.table_key = key;
    try {
      (void)import_rows(text, "t.txtpb", ImportFormat::xla_gemm_table, o);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(
      error(xla_table(), "").find("the table holds 2 devices (sm_100_B200, sm_90): give --key"),
      std::string::npos)
      << error(xla_table(), "");
  EXPECT_NE(error(xla_table(), "sm_80").find("no device sm_80"), std::string::npos);
  // Not the table: each refused with its line.
  EXPECT_NE(error("entries {\n  key: \"sm_90\"\n  valu {\n", "sm_90").find("t.txtpb: line 3"),
            std::string::npos)
      << error("entries {\n  key: \"sm_90\"\n  valu {\n", "sm_90");
  const std::string unknown = "entries { key: \"sm_90\" value { entries {\n b: 1 mm: 2 } } }";
  EXPECT_NE(error(unknown, "sm_90").find("line 2: expected b, m, n, k or flops"), std::string::npos)
      << error(unknown, "sm_90");
  const std::string open = "entries { key: \"sm_90\" value { entries { b: 1 m: 2 n: 2 k: 2";
  EXPECT_NE(error(open, "sm_90"), "(no error)");
  const std::string negative =
      "entries { key: \"sm_90\" value { entries { b: 1 m: -2 n: 2 k: 2 } } }";
  EXPECT_NE(error(negative, "sm_90").find("m: expected a non-negative number"), std::string::npos)
      << error(negative, "sm_90");
  const std::string zero = "entries { key: \"sm_90\" value { entries { b: 1 m: 0 n: 2 k: 2 } } }";
  EXPECT_NE(error(zero, "sm_90").find("at least 1"), std::string::npos) << error(zero, "sm_90");
  EXPECT_NE(error("{", "").find("expected the field entries"), std::string::npos);
  EXPECT_NE(error("", "").find("no device entries"), std::string::npos) << error("", "");
}

TEST(ImportXlaGemmTable, FitsWithABaseProfile) {
  ImportOptions o;
  o.table_key = "sm_90";
  RowsFile f;
  f.backend = "cuda";
  f.grid = "imported";
  f.rows = import_rows(xla_table(), "table.txtpb", ImportFormat::xla_gemm_table, o).rows;
  FitOptions fit;
  fit.base_profile = std::string(MYRIAD_PROFILE_DIR) + "/H100.json";
  const FitResult r = fit_profile(f, fit);
  const auto& gemm = r.profile["parameters"]["gemm_efficiency"];
  EXPECT_EQ(gemm["origin"], "measured") << gemm.dump();
  // Its ceiling is the fastest entry's rate: 783 of the datasheet's 989 TFLOP/s.
  EXPECT_DOUBLE_EQ(r.profile["provenance"]["ceilings"]["gemm"]["measured"].get<double>(),
                   783328793548203.0);
}

// The H100 profile against OpenXLA's published sm_90 table (calibration/published):
// it prices no large GEMM faster than XLA measured one, since its efficiency
// (790 TFLOP/s on random data, H200) times the sustained clock (0.9, training
// under the power limit) sits below XLA's isolated runs; and the small ones,
// where the fixed cost of a launch decides, within the table's floor of about 5 us.
TEST(ImportXlaGemmTable, TheH100ProfileIsNoFasterThanThePublishedTable) {
  const std::string file =
      std::string(MYRIAD_PROFILE_DIR) + "/../published/xla_gemm_sm90_bf16.txtpb";
  const Imported got = import_file(file, ImportFormat::xla_gemm_table, {});
  ASSERT_EQ(got.rows.size(), 125U);
  const sim::DeviceProfile h100 = sim::load_profile(std::string(MYRIAD_PROFILE_DIR) + "/H100.json");
  double big = 0, small = 0;
  int bigs = 0, smalls = 0;
  for (const Row& r : got.rows) {
    const double ratio = sim::compute_cost(r.op(), h100).time_s / r.best_s;
    if (r.flops >= 2.0 * 2048 * 2048 * 2048) {
      EXPECT_GT(ratio, 0.97) << r.name;  // no faster than measured
      big += ratio;
      ++bigs;
    } else if (r.best_s < 8e-6) {
      small += std::log(ratio);
      ++smalls;
    }
  }
  ASSERT_GT(bigs, 10);
  ASSERT_GT(smalls, 30);
  // Large GEMMs: 17 % slower than the table on average (2026-12-06).
  EXPECT_LT(big / bigs, 1.3);
  EXPECT_NEAR(std::exp(small / smalls), 1, 0.2);
}

}  // namespace
}  // namespace myriad::calibration
