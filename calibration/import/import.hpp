// Measurements users already have, as calibration rows (measure/rows.hpp), so
// that `calibrate fit` and `calibrate check` work on what a training stack runs
// rather than on Myriad's own kernels:
//
//   nccl-tests        the text all_reduce_perf (and the other *_perf) print: one
//                     collective row per size, the out-of-place time, the #wrong
//                     column as the row's check.
//   google-benchmark  a --benchmark_out JSON file: one row per benchmark, a sample
//                     per repetition (run_type "iteration"), FLOPs and bytes per
//                     iteration from counters named "flops" and "bytes", a GEMM's
//                     shape from counters "m", "n", "k" (and "batch"), the family
//                     of others from a "family=norm.rms.fwd" label or --family.
//   kineto            a PyTorch profiler (Kineto) trace, Chrome trace JSON: every
//                     GPU kernel linked to the ATen op that launched it (its
//                     "External id"), one row per op, shape and kernel, a sample
//                     per launch; GEMMs (mm, addmm, bmm) by their shapes, SDPA's
//                     flash attention forward (when is_causal was recorded), and
//                     memory-bound ops Myriad prices (layer norm, RMS norm, GeLU,
//                     SiLU, softmax, add, mul, copies) by the bytes of their
//                     tensors. Kernels of other ops are left out and counted.
//   xla-gemm-table    OpenXLA's GEMM performance table (xla.GemmPerfTable, protobuf
//                     text): one GEMM row per bf16 entry of one device key, a
//                     sample each, its time from the FLOP/s the table gives.
//
// Bounds (issue 43: inputs of gigabytes, or hostile): each input kind has a size
// cap (default_max_input_bytes, raised by ImportOptions::max_input_bytes, the
// command line's --max-input-size), checked before reading; JSON is read an
// element at a time (json_lists.hpp) and text a line at a time, keeping only what
// becomes rows; one import makes kMaxImportedRows rows at most; and every row is
// one `calibrate fit` reads back (measure/rows.hpp, row_problems).
//
// Imported rows have check "pass" when the source verified its result (nccl-tests'
// #wrong is 0) or says nothing of it ("not verified by the source" is recorded in
// the row's arguments), and a failed check when it counted wrong elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "calibration/measure/rows.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::calibration {

enum class ImportFormat { nccl_tests, google_benchmark, kineto, xla_gemm_table };
// "nccl-tests", "google-benchmark", "kineto", "xla-gemm-table"
std::string_view import_format_name(ImportFormat f);
std::optional<ImportFormat> import_format_from_name(std::string_view name);

// What a GPU's links carry, from a device profile (bus_ceiling_of): nccl-tests'
// bus bandwidths are checked against it.
struct BusCeiling {
  std::string profile;  // the profile's file, named in notes and errors
  std::string device;   // its GPU
  double link_Bps = 0;  // NVLink per GPU and direction
  double ring_Bps = 0;  // the most bus bandwidth the tool's ring model gives on it
};

// The profile's link rate and the peak of the ring curve the collective cost
// model prices (sim::DeviceProfile::nvlink_ring_busbw: the measured curve, capped
// at nvlink_ring_busbw_fraction of the link where it was measured with NVLS).
BusCeiling bus_ceiling_of(const sim::DeviceProfile& profile);

struct ImportOptions {
  // nccl-tests: the collective, when the output does not name it (newer versions
  // print "Collective test starting: all_reduce_perf"), and the algorithm NCCL
  // ran (the output does not say; NCCL_ALGO sets it).
  std::optional<models::CollectiveKind> collective;
  models::CollectiveAlgorithm algorithm = models::CollectiveAlgorithm::ring;
  std::optional<int> ranks;  // nccl-tests: else counted from its "#  Rank" lines
  // nccl-tests: a busbw above what these links carry is refused, one above the
  // ring's ceiling flagged (in the row's arguments and a note); unchecked without.
  std::optional<BusCeiling> bus_ceiling;
  // google-benchmark: the family of benchmarks without m, n and k counters (a
  // memory-bound family such as norm.rms.fwd, or attention.fwd).
  std::string family;
  // xla-gemm-table: the device key whose entries are read ("sm_90"); may be left
  // empty when the table holds one.
  std::string table_key;
  // The largest input read, in bytes; else default_max_input_bytes(format).
  std::optional<std::uint64_t> max_input_bytes;
};

// 4 GiB for a Kineto trace (a few GB for a training step), 64 MiB for nccl-tests
// output and Google Benchmark JSON (kilobytes).
std::uint64_t default_max_input_bytes(ImportFormat f);

// The most rows one import makes (nccl-tests' sizes, benchmarks, a trace's op
// shapes): hundreds are usual; a rows file of more is for no fit.
inline constexpr std::size_t kMaxImportedRows = 20'000;

struct Imported {
  std::vector<Row> rows;
  std::vector<std::string> notes;  // what was left out or assumed, in words
  std::string device;              // the GPU the source names (nccl-tests' rank lines, a trace's
                                   // deviceProperties), or empty
};

// Reads `text` (from `path`, named in errors) as `format`. Throws
// std::runtime_error naming the path, the line or entry, the key and what was
// expected; a file that yields no row is an error too, and so is one with a row
// `calibrate fit` would refuse.
Imported import_rows(std::string_view text, const std::string& path, ImportFormat format,
                     const ImportOptions& options);

// The same, read from the file `path` as it streams in: refused before reading
// when it is larger than its kind's cap, naming its size, the cap and
// --max-input-size; a pipe is read to the cap.
Imported import_file(const std::string& path, ImportFormat format, const ImportOptions& options);

// "1.5 GiB", "64 MiB", "12 KiB", "100 bytes": a size as caps are written.
std::string size_text(std::uint64_t bytes);

}  // namespace myriad::calibration
