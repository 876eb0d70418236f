// A device profile: what a GPU type achieves, as the cost models read it.
// Profiles are JSON files under calibration/profiles/ (ARCHITECTURE.md
// principle 5: calibrated constants are data). Every parameter records its
// origin: "datasheet", "measured" (by Myriad's calibration), "published" (a
// measurement someone published, with its source) or "assumption" (an
// engineering estimate awaiting measurement).
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace myriad::sim {

struct BusBandwidthPoint {
  double bytes = 0;      // message size as nccl-tests counts it
  double busbw_Bps = 0;  // nccl-tests bus bandwidth
};

// An output tile a GEMM kernel may use, with its throughput relative to the best.
struct GemmTile {
  double m = 0;
  double n = 0;
  double relative = 1;
};

struct ProfileParameter {
  double value = 0;
  std::string origin;  // datasheet | measured | published | assumption
  std::string note;
};

struct DeviceProfile {
  std::string file;
  std::string device;  // GPU name, as the hardware preset gives it
  std::string kind;    // e.g. "datasheet+published": how the profile was made

  double bf16_flops = 0;             // dense peak
  double fp8_flops = 0;              // dense peak; 0 without fp8
  double hbm_bw_Bps = 0;             // datasheet
  double gemm_efficiency = 0;        // sustained fraction of the bf16 peak on large GEMMs
  double gemm_fp8_efficiency = 0;    // sustained fraction of the fp8 peak on large GEMMs
  double gemm_k_half = 0;            // a GEMM of reduction depth k runs at k / (k + k_half) of it
  double sms = 0;                    // streaming multiprocessors (wave quantization)
  std::vector<GemmTile> gemm_tiles;  // the library picks the best for each shape
  double attention_fwd_efficiency = 0;  // fused attention forward, fraction of the bf16 peak
  double attention_bwd_efficiency = 0;
  double memory_efficiency = 0;  // sustained fraction of HBM bandwidth for streaming kernels
  double sustained_clock = 1;    // clock under sustained load over the clock of the peaks
  double kernel_overhead_s = 0;  // launch and tail per kernel
  std::vector<BusBandwidthPoint> nvlink_busbw;  // all-reduce inside a node, by size
  double nic_efficiency = 0;                    // inter-node busbw per NIC over its line rate
  // Fraction of the compute rate communication kernels take while they overlap
  // compute (NCCL's channels occupy SMs): compute beside them runs at 1 - this.
  double overlap_compute_share = 0;

  // Sustained fraction of HBM bandwidth per family of memory-bound kernels, when
  // measured. Families are dotted names ("norm", "norm.layer", "norm.layer.bwd");
  // an op takes the longest family its name starts with, else memory_efficiency.
  // Above 1 where a kernel's working set stays in cache (CPUs).
  std::map<std::string, double> memory_bound_efficiency;

  std::map<std::string, ProfileParameter> parameters;  // everything, with origins
};

// The streaming efficiency of a memory-bound op named `op_name`.
double memory_efficiency_of(const DeviceProfile& profile, std::string_view op_name);

// Reads and checks a profile; throws std::runtime_error naming the file, the key
// and what was expected, listing every problem.
DeviceProfile load_profile(const std::string& path);
// The same from parsed JSON; `path` names it in messages.
DeviceProfile parse_profile(const nlohmann::json& root, const std::string& path);

// Bus bandwidth at `bytes`: interpolated in log(size) between measured points
// and flat beyond either end; latency is added apart (see comm_cost.hpp).
double interpolate_busbw(const std::vector<BusBandwidthPoint>& curve, double bytes);

}  // namespace myriad::sim
