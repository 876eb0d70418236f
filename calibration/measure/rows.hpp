// Result rows of a calibration run: what was measured, on what, and how long
// it took. Rows are self-describing JSON (units in the key names) so that the
// fit, the check and a person reading them need nothing else:
//
//   {"format": "myriad-calibration-rows/2", "backend": "cpu", "grid": "small",
//    "environment": {...}, "date": "2026-11-29T21:00:00Z",
//    "rows": [{"name": "gemm.nt m=256 n=768 k=256", "kind": "kernel", "family": "gemm",
//              "op_class": "gemm", "arguments": {...}, "flops": ..., "bytes": ...,
//              "gemm": {"m":..,"n":..,"k":..,"batch":..}, "backward": false,
//              "times_s": [...], "best_s": ..., "check": "pass"}, ...]}
//
// times_s holds one sample per pass over the grid (each the mean of a timed
// loop); best_s is the fastest, which is what the fit reads: interference from
// a shared machine only ever adds time, and on the 2-vCPU machines this project
// runs on it comes in phases of about a second that slow a kernel by up to 45%
// (see calibration/measure/runner.hpp).
//
// kind: "ceiling" (the large copy and GEMM the others are judged against, and
// on the CPU a grid GEMM on N threads at once: what ranks sharing the host cost
// each other),
// "kernel" (a compute kernel: flops and bytes from its op descriptor) or
// "collective" (a schedule run by an executor: kind, algorithm, ranks, bytes
// as nccl-tests counts them).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/ops/op.hpp"
#include "models/plan/collective.hpp"

namespace myriad::calibration {

enum class RowKind {
  ceiling,     // the large copy and GEMM the others are judged against
  kernel,      // a compute kernel
  collective,  // a collective schedule run by an executor
  composite,   // a layer or a step of several kernels (calibrate check only)
};

std::string_view row_kind_name(RowKind k);
std::optional<RowKind> row_kind_from_name(std::string_view name);

struct CollectiveRun {
  // Written "all_reduce", "ring" (models::collective_key, algorithm_name).
  models::CollectiveKind collective = models::CollectiveKind::all_reduce;
  models::CollectiveAlgorithm algorithm = models::CollectiveAlgorithm::ring;
  // Every rank on one device, its bytes moved by copies (written "ring.device_copy"):
  // such rows measure no interconnect, so the fit leaves them out of the curve.
  bool device_copy = false;
  int ranks = 0;
  double bytes = 0;         // nccl-tests "size"
  double busbw_factor = 0;  // nccl-tests' bus bandwidth factor
  double steps = 0;         // sequential steps per rank (the latency term's multiplier)
};

struct Row {
  std::string name;  // unique in a file: kernel and arguments, "gemm.nt m=256 n=768 k=256"
  RowKind kind = RowKind::kernel;
  std::string family;  // what the fit groups by: gemm, attention, norm, activation, ..., copy
  models::OpClass op_class = models::OpClass::elementwise;
  nlohmann::json arguments = nlohmann::json::object();
  double flops = 0;
  double bytes = 0;
  models::GemmShape gemm;  // gemm rows
  bool backward = false;
  CollectiveRun collective;     // collective rows
  std::vector<double> times_s;  // one per pass (each the mean over its iterations)
  double best_s = 0;            // the fastest of times_s
  std::string check;            // "pass", or what was wrong with the result

  // The descriptor the cost model prices, named after the family (so that a
  // profile's per-family efficiency applies); it points into this row.
  [[nodiscard]] models::Op op() const;
};

struct RowsFile {
  std::string backend;  // cpu | cuda
  std::string grid;     // small | full
  std::string date;     // UTC, ISO 8601
  nlohmann::json environment = nlohmann::json::object();
  std::vector<Row> rows;
};

nlohmann::json to_json(const RowsFile& file);
// One row as the file holds it.
nlohmann::json row_json(const Row& r);
// What rows_from_json would say of `r` once written ("row.m: expected a number >=
// 1", ...): nothing for a row `calibrate fit` reads back.
std::vector<std::string> row_problems(const Row& r);
// Throws std::runtime_error naming `path`, the row and the key for every problem.
RowsFile rows_from_json(const nlohmann::json& j, const std::string& path);
RowsFile read_rows(const std::string& path);
void write_rows(const RowsFile& file, const std::string& path);

double median(std::vector<double> values);

// A row's best time as a rate, for reports: "812.3 TFLOP/s" (GEMMs and
// attention), "2581 GB/s" (memory-bound), "391.5 GB/s busbw" (collectives).
std::string rate_text(const Row& r);
// How far its slowest sample is above its fastest: "+4.2 % over 5", or "1 sample".
std::string spread_text(const Row& r);

}  // namespace myriad::calibration
