// Fuzzes `calibrate import`'s four readers (calibration/import): the first
// byte picks the format (nccl-tests text, Google Benchmark JSON, a Kineto
// trace, OpenXLA's GEMM table), the rest is the file, plain or gzip-compressed (corpus kineto-gzip:
// import_rows decompresses what starts with gzip's magic). Rows or a std::runtime_error naming the
// problem come out; never a crash, a hang or an unbounded allocation.
//
// Property: every imported row is one the rows reader accepts (import.hpp:
// "a file ... with a row `calibrate fit` would refuse" is an error), so the
// rows written back read again.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string_view>

#include <nlohmann/json.hpp>

#include "calibration/import/import.hpp"
#include "calibration/measure/rows.hpp"
#include "fuzz/property.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using myriad::calibration::ImportFormat;
  constexpr ImportFormat kFormats[] = {ImportFormat::nccl_tests, ImportFormat::google_benchmark,
                                       ImportFormat::kineto, ImportFormat::xla_gemm_table};
  const ImportFormat format = kFormats[data[0] % 4];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  myriad::calibration::ImportOptions options;
  options.collective = myriad::models::CollectiveKind::all_reduce;
  options.family = "norm.rms.fwd";
  options.table_key = "sm_90";
  myriad::calibration::Imported imported;
  try {
    imported = myriad::calibration::import_rows(text, "fuzz.txt", format, options);
  } catch (const std::exception&) {
    return 0;  // rejected, with a message
  }
  myriad::calibration::RowsFile file;  // as `calibrate import` writes it
  file.backend = "cuda";
  file.grid = "imported";
  file.date = "2026-12-04T00:00:00Z";
  file.rows = imported.rows;
  try {
    (void)myriad::calibration::rows_from_json(myriad::calibration::to_json(file), "written.json");
  } catch (const std::exception& e) {
    myriad::fuzz::require(false, "imported rows do not read again", e.what());
  }
  return 0;
}
