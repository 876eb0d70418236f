// A device profile: what a GPU type achieves, as the cost models read it.
// Profiles are JSON files under calibration/profiles/ (ARCHITECTURE.md
// principle 5: calibrated constants are data). Every parameter records its
// origin: "datasheet", "measured" (by Myriad's calibration), "published" (a
// measurement someone published, with its source), "derived" (from published or
// measured facts by a stated rule), "fitted" (to the published tables of
// scenarios/validation, with how) or "assumption" (an engineering estimate
// awaiting measurement).
//
// A profile holds achieved rates relative to the hardware they were achieved
// on: efficiencies over peaks, and the NVLink bus bandwidth curve over the link
// rate. That hardware (its peaks, HBM and NVLink bandwidth) is written in the
// profile as its reference; the hardware a job runs on is the scenario's.
// `on_hardware` puts the profile on the scenario's GPU: the rates the cost
// models price against become the scenario's, the curve scales with its link
// rate, and the efficiencies stay. So every hardware what-if takes effect, and
// a GPU without a profile of its own borrows another's.
#pragma once

#include <algorithm>

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/scenario/gpu_spec.hpp"

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
  std::string origin;  // datasheet | measured | published | derived | fitted | assumption
  std::string note;
};

// The rates a profile's efficiencies and curves are relative to.
struct HardwareRates {
  double bf16_flops = 0;     // dense peak, FLOP/s
  double fp8_flops = 0;      // dense peak, FLOP/s; 0 without fp8
  double hbm_bw_Bps = 0;     // memory bandwidth
  double nvlink_bw_Bps = 0;  // NVLink per GPU and direction
  double sms = 0;            // streaming multiprocessors (wave quantization)
};

struct DeviceProfile {
  std::string file;
  std::string device;  // the GPU its rates were achieved on, as its hardware preset names it
  std::string kind;    // e.g. "datasheet+published": how the profile was made
  // The GPU the cost models price against: the profile's own device when loaded,
  // the scenario's after on_hardware.
  std::string hardware;

  // What the profile's rates are relative to, as the profile gives it.
  HardwareRates reference;

  // The rates the cost models price against: `reference` when loaded, the
  // scenario's GPU after on_hardware.
  double bf16_flops = 0;             // dense peak
  double fp8_flops = 0;              // dense peak; 0 without fp8
  double hbm_bw_Bps = 0;             // memory bandwidth
  double nvlink_bw_Bps = 0;          // per GPU and direction
  double gemm_efficiency = 0;        // sustained fraction of the bf16 peak on large GEMMs
  double gemm_fp8_efficiency = 0;    // sustained fraction of the fp8 peak on large GEMMs
  double gemm_k_half = 0;            // a GEMM of reduction depth k runs at k / (k + k_half) of it
  double gemm_latency_s = 0;         // fixed time of a GEMM call beyond kernel_overhead_s
  double sms = 0;                    // streaming multiprocessors (wave quantization)
  std::vector<GemmTile> gemm_tiles;  // the library picks the best for each shape
  // Fused attention, fraction of the bf16 peak: flat, or with the shape parameters
  // below at head dim 128 in the long-sequence limit (sim/cost/attention_shape.hpp).
  double attention_fwd_efficiency = 0;
  double attention_bwd_efficiency = 0;
  // The attention kernel's shape (all given or none, attention_shape): the share of
  // its time at head dim 128 spent on softmax work the tensor cores do not hide
  // (it does not shrink with the head dim, the matrix products do), the fixed work
  // of each row of query tiles in key tiles (loading Q, writing O; the backward's
  // dQ), and the extra cost of a causal diagonal tile in tiles.
  bool attention_shape = false;
  double attention_fwd_softmax_share = 0;
  double attention_bwd_softmax_share = 0;
  double attention_fwd_row_tiles = 0;
  double attention_bwd_row_tiles = 0;
  double attention_diagonal_tiles = 0;
  double memory_efficiency = 0;  // sustained fraction of HBM bandwidth for streaming kernels
  double sustained_clock = 1;    // clock under sustained load over the clock of the peaks
  double kernel_overhead_s = 0;  // launch and tail per kernel
  // The host's time to issue one kernel from the training framework (Python,
  // PyTorch and Transformer Engine's module code, the driver's launch): where a
  // layer's kernels are short the GPU waits for it (host_wait in
  // sim/analytic/host_wait.hpp). 0: never waits (a profile without it).
  double host_launch_s = 0;
  // All-reduce inside a node, by size, at the rates priced against (the profile's
  // curve times nvlink_bw_Bps over the reference link rate), by the algorithm NCCL
  // would run on the hardware priced against: NVLS where both the hardware and the
  // profile's measurement have it, else ring.
  std::vector<BusBandwidthPoint> nvlink_busbw;
  // The same for ring algorithms (all-gather, reduce-scatter, all-to-all, and
  // all-reduce without NVLS): the curve capped at ring_busbw_fraction of the link.
  std::vector<BusBandwidthPoint> nvlink_ring_busbw;
  // The curve as the profile gives it, on the reference link rate.
  std::vector<BusBandwidthPoint> reference_nvlink_busbw;
  // The curve was measured with NVLink SHARP (NVLS): the switch reduces, so its
  // all-reduce bus bandwidth passes what a ring reaches. Then the profile also
  // gives the ring's large-message bus bandwidth over the link rate.
  bool busbw_nvls = false;
  double ring_busbw_fraction = 0;
  // The hardware priced against has NVLS (scenario key cluster.gpu.nvls).
  bool nvls = false;
  // Intra-node all-reduce runs NVLS (hardware and measurement both have it).
  [[nodiscard]] bool all_reduce_nvls() const { return nvls && busbw_nvls; }
  double nic_efficiency = 0;  // inter-node busbw per NIC over its line rate
  // The channels NCCL runs a collective on, each a thread block on an SM of its
  // own for as long as it runs (0: communication takes no SMs).
  double nccl_channels = 0;
  // nccl_channels / sms: the fraction of the compute rate NCCL's kernels take
  // while they overlap compute, which runs beside them at 1 - this
  // (sim/cost/overlap_share.hpp has the tensor-parallel userbuffers' share).
  [[nodiscard]] double overlap_compute_share() const {
    return sms > 0 ? std::min(1.0, nccl_channels / sms) : 0.0;
  }
  // A sparse GEMM's rate on the work it keeps, relative to a dense GEMM's on the same
  // shape (2:4 runs at twice the dense peak times this); 0 where the profile gives none.
  double sparse_gemm_efficiency = 0;
  // Pinned-memory copies between the GPU and its host over
  // GpuSpec::host_link_bw_Bps, as fractions of the link's rate per direction
  // (activation offload); 0 where the profile gives none.
  double host_to_device_efficiency = 0;
  double device_to_host_efficiency = 0;
  // The device's last-level cache (an NVIDIA GPU's L2), for the calibration fit:
  // a copy whose bytes fit in it measures the cache, not HBM. 0 where not given.
  double last_level_cache_bytes = 0;
  // The experts' grouped GEMMs (one kernel over a rank's experts, with their
  // routing metadata) relative to a dense GEMM of one expert's shape; 0 where the
  // profile gives none (priced as dense).
  double grouped_gemm_efficiency = 0;
  // Intra-operator (tile-level fused) overlap: the share of a fused collective that
  // stays exposed (its first or last tiles' worth, before or after the GEMM).
  double fused_overlap_exposed = 0;
  // Memory a training process cannot use for the model: the CUDA context, library
  // workspaces and NCCL's buffers (bytes), and the caching allocator's
  // fragmentation (a fraction added to what the model allocates).
  double memory_reserved_bytes = 0;
  double memory_fragmentation = 0;

  // Sustained fraction of HBM bandwidth per family of memory-bound kernels, when
  // measured. Families are dotted names ("norm", "norm.layer", "norm.layer.bwd");
  // an op takes the longest family its name starts with, else memory_efficiency.
  // Above 1 where a kernel's working set stays in cache (CPUs).
  std::map<std::string, double, std::less<>> memory_bound_efficiency;  // looked up by view

  std::map<std::string, ProfileParameter> parameters;  // everything, with origins

  // True when the hardware priced against is not the one the rates were achieved on.
  [[nodiscard]] bool borrowed() const { return hardware != device; }
};

// The scalar parameters of a profile: the key each is written under in its
// "parameters" ({"gemm_efficiency": {"value": ..., "origin": ..., "note": ...}}),
// the member it sets, and the range a valid profile keeps it in. The reader and
// calibration's fit share this one table, so a key is spelled once.
struct ProfileScalar {
  std::string_view key;
  double DeviceProfile::*member;
  double min;
  double max;
  bool required = true;  // else only some profiles carry it
};
std::span<const ProfileScalar> profile_scalars();
// The origins a parameter may have, from the firmest: datasheet, measured,
// published, derived, fitted, assumption.
std::span<const char* const> profile_origins();
// The key `member` is written under; std::logic_error for a member that is not one.
std::string_view profile_key(double DeviceProfile::*member);

// The profile put on `gpu`: peaks, HBM and NVLink bandwidth (and SM count, where
// the GPU gives one) are the GPU's; efficiencies stay, and the NVLink curve keeps
// its shape as a fraction of the link rate. All-reduce runs NVLS where the GPU has
// it and the curve was measured with it; ring everywhere else. Idempotent.
DeviceProfile on_hardware(const DeviceProfile& profile, const models::scenario::GpuSpec& gpu);
// Whether `profile` is already priced on `gpu` (on_hardware would change nothing).
bool is_on_hardware(const DeviceProfile& profile, const models::scenario::GpuSpec& gpu);

// How collectives inside a node are priced, in a sentence for reports: the
// all-reduce algorithm and why, and the ring's ceiling.
std::string nvlink_algorithm_note(const DeviceProfile& p);

// The streaming efficiency of memory-bound ops of a family (models::kernel_family):
// the longest measured prefix of it, else the profile's memory_efficiency.
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
