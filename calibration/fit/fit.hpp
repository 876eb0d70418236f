// Fits a device profile to calibration rows (`myriad calibrate fit`).
//
//   ceilings      the fastest copy measured gives hbm_bandwidth_Bps, the fastest
//                 GEMM the peak (unless a base profile supplies datasheet values);
//                 both are recorded beside the datasheet's (provenance.ceilings).
//   memory-bound  t = bytes / (hbm * efficiency_family) + kernel_overhead_s, by
//                 weighted least squares (relative error) over every streaming
//                 kernel: one efficiency per family ("norm.layer.bwd"), one
//                 overhead for all; then one per coarse family ("norm") over all
//                 its rows, for ops named less precisely (the model's).
//   GEMM          gemm_efficiency, gemm_k_half and gemm_latency_s (the fixed cost
//                 of a call) minimising the squared log error of the cost
//                 model's own prediction (sim/cost/compute_cost), so the fit is
//                 what `estimate` will predict.
//   attention     forward and backward efficiency, least squares.
//   collectives   t = steps * latency + factor * bytes / busbw(size), latency
//                 shared, one bus bandwidth per size (the profile's curve), by
//                 weighted least squares over the ring all-reduce rows (the one
//                 curve of the profile; other collectives are judged by check).
//   host          with a concurrent ceiling (the CPU backend: a grid GEMM on N
//                 threads at once), how much slower each thread computes then
//                 than the same GEMM alone: provenance.host, which the check's
//                 multi-rank composites need.
// Every parameter carries origin "measured" with its residuals, or says where
// it came from when the rows cannot measure it (base profile, or assumption).
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

#include "calibration/measure/rows.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::calibration {

struct FitOptions {
  std::string device;                       // the profile's device name; default: from the rows
  std::optional<std::string> base_profile;  // datasheet values and unmeasured parameters
  // Fit the rows that passed their check, naming the others in the profile's
  // provenance; by default a failed row stops the fit.
  bool leave_out_failed = false;
  // The attention kernel the profile describes, by its rows' family ("attention",
  // the SIMT kernel; "attention.mma", tensor cores; an imported one). Empty: the
  // fastest measured, direction by direction.
  std::string attention_family;
  // "cudnn": describe cuDNN's fused attention where it was measured (the fastest
  // measured otherwise); "myriad": the fastest of Myriad's own kernels
  // (own_attention_family), leaving a production reference to the rows; empty:
  // the fastest measured. Not with attention_family.
  std::string attention_reference;
};

// Whether a rows' family is one of Myriad's own attention kernels: the SIMT
// kernel ("attention") or the tensor-core one ("attention.mma").
inline bool own_attention_family(const std::string& family) {
  return family == "attention" || family == "attention.mma";
}
// The family of the attention kernel the composites `calibrate check` times run
// (calibration/check): the SIMT kernel, on the CPU and on the GPU.
inline constexpr const char* kCompositeAttentionFamily = "attention";
// The family of cuDNN's fused attention, the production reference (`--reference cudnn`).
inline constexpr const char* kCudnnAttentionFamily = "attention.cudnn";

struct ParameterResidual {
  std::string parameter;
  int rows = 0;          // rows that determined it
  double rms_error = 0;  // relative error of the fitted model on those rows
  double max_error = 0;
};

struct FitResult {
  nlohmann::json profile;  // loadable by sim::load_profile
  std::vector<ParameterResidual> residuals;
  double latency_per_step_s = 0;  // the collective transport's fitted latency
  // Ranks sharing the host (rows with a concurrent GEMM; else 1 thread, 1x).
  int concurrent_threads = 1;
  double concurrent_slowdown = 1;     // each thread's time, all at once vs alone
  std::vector<std::string> left_out;  // rows that failed their check (leave_out_failed)
  // Per ceiling ("gemm", "copy"): the fastest rate any row of the family measured,
  // that row, and the datasheet's (the base profile's) beside it; the profile's
  // provenance.ceilings.
  nlohmann::json ceilings = nlohmann::json::object();
};

// Throws std::runtime_error when the rows lack what a parameter needs (naming it)
// or a row failed its check (unless options.leave_out_failed).
FitResult fit_profile(const RowsFile& rows, const FitOptions& options);

// The cost model's prediction of one row under `profile` (kernel or collective),
// with the transport latency for collectives.
double predict_row(const Row& row, const sim::DeviceProfile& profile, double latency_per_step_s);

}  // namespace myriad::calibration
