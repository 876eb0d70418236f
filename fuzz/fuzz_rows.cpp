// Fuzzes the calibration rows reader (what `calibrate fit` and `calibrate
// check` read): JSON bytes in, rows or a std::runtime_error listing the problems
// out. Each accepted row is turned into the op descriptor the cost model prices.
//
// Property: rows written back (to_json, what write_rows saves) read again.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "calibration/measure/rows.hpp"
#include "fuzz/property.hpp"

namespace {

void check_rereads(const myriad::calibration::RowsFile& file) {
  const nlohmann::json written = myriad::calibration::to_json(file);
  try {
    (void)myriad::calibration::rows_from_json(written, "written.json");
  } catch (const std::exception& e) {
    myriad::fuzz::require(false, "rows written back do not read again", e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto* first = reinterpret_cast<const char*>(data);
  const auto root = nlohmann::json::parse(first, first + size, nullptr, false);
  if (root.is_discarded()) return 0;
  myriad::calibration::RowsFile file;
  try {
    file = myriad::calibration::rows_from_json(root, "fuzz.json");
    for (const auto& row : file.rows) (void)row.op();
  } catch (const std::exception&) {
    return 0;  // rejected, with a message
  }
  check_rereads(file);
  return 0;
}
