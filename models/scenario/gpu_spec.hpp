// A GPU type as its datasheet gives it. Achievable efficiencies are not here:
// they are measured, and live in device profiles (calibration/profiles/), which
// the engines put on this hardware (sim/cost/device_profile.hpp, on_hardware).
#pragma once

#include <string>

namespace myriad::models::scenario {

struct GpuSpec {
  std::string preset;  // hardware preset it came from, or empty
  std::string name;
  std::string source;        // where the figures come from
  double bf16_flops = 0;     // dense peak, FLOP/s (also fp16)
  double fp8_flops = 0;      // dense peak, FLOP/s; 0 when the GPU has no fp8 tensor cores
  double hbm_bytes = 0;      // memory capacity
  double hbm_bw_Bps = 0;     // memory bandwidth
  double nvlink_bw_Bps = 0;  // NVLink bandwidth per GPU and direction
  int sms = 0;               // streaming multiprocessors; 0: the device profile's
  // The link to the host's memory, per direction (PCIe, or NVLink-C2C on Grace
  // superchips), and the host memory each GPU may use: what activation offload
  // (parallelism.offload_layers) moves activations over and keeps them in. 0: not
  // given (offload is then refused).
  double host_link_bw_Bps = 0;
  double host_memory_bytes = 0;
  // Whether that link is also the GPU's way to its NICs: a PCIe GPU reaches host
  // memory and, by GPUDirect RDMA through its PCIe switch, its NICs over its one
  // x16 link, so activation offload's copies share it with the GPU's network
  // traffic (sim/analytic/activation_offload.hpp). Not on Grace superchips, whose
  // host link is NVLink-C2C.
  bool host_link_carries_network = false;
  // NVLink SHARP: the NVSwitch reduces in the switch, and NCCL runs all-reduce
  // inside a node as NVLS (Hopper and Blackwell NVSwitch systems).
  bool nvls = false;
  // The device profile whose achieved rates this GPU takes: a name in
  // calibration/profiles/; empty: the profile named after the hardware preset.
  std::string profile;
};

}  // namespace myriad::models::scenario
