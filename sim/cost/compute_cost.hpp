// The time of one compute op on one GPU: a roofline over the device profile.
//   GEMM:      FLOPs / (peak * gemm_efficiency * wave * depth), where wave is the
//              fraction of SMs the output tiles keep busy over all waves (for the
//              best of the profile's tiles) and depth is k / (k + k_half); or
//              bytes / sustained bandwidth if larger; plus gemm_latency_s, the
//              fixed cost of a GEMM call (the library's prologue and epilogue,
//              which dominate GEMMs of a few microseconds).
//   attention: FLOPs / (peak * attention efficiency, forward or backward).
//   others:    bytes / (HBM bandwidth * memory_efficiency), or the efficiency the
//              profile measured for the op's family (memory_bound_kernels).
// Compute-bound times are divided by the sustained clock fraction (GPUs under
// training load run below the clock their peaks are quoted at). Each kernel
// also pays kernel_overhead_s.
#pragma once

#include <string_view>

#include "models/ops/op.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

struct ComputeCost {
  double time_s = 0;
  double efficiency = 0;  // achieved FLOP/s over the peak it ran against
  bool memory_bound = false;
};

ComputeCost compute_cost(const models::Op& op, const DeviceProfile& profile);

}  // namespace myriad::sim
