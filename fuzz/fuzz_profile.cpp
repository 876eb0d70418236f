// Fuzzes the device profile reader: JSON bytes in, a checked DeviceProfile or
// a std::runtime_error listing the problems out. An accepted profile is put on
// a GPU (as every scenario does) and its curves are read at sizes from 1 B to
// 16 GiB, as the cost models read them.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

#include <nlohmann/json.hpp>

#include "models/scenario/gpu_spec.hpp"
#include "sim/cost/device_profile.hpp"

namespace {

// An H100-like GPU with NVLS, so that both NVLink algorithms are priced.
myriad::models::scenario::GpuSpec gpu() {
  myriad::models::scenario::GpuSpec g;
  g.name = "fuzz";
  g.bf16_flops = 989e12;
  g.fp8_flops = 1979e12;
  g.hbm_bytes = 80e9;
  g.hbm_bw_Bps = 3.35e12;
  g.nvlink_bw_Bps = 450e9;
  g.sms = 132;
  g.nvls = true;
  return g;
}

void exercise(const myriad::sim::DeviceProfile& loaded) {
  static const auto kGpu = gpu();
  const auto p = myriad::sim::on_hardware(loaded, kGpu);
  (void)myriad::sim::nvlink_algorithm_note(p);
  (void)myriad::sim::memory_efficiency_of(p, "norm.layer.bwd");
  for (double bytes = 1; bytes <= 16.0 * (1ULL << 30); bytes *= 4) {
    (void)myriad::sim::interpolate_busbw(p.nvlink_busbw, bytes);
    (void)myriad::sim::interpolate_busbw(p.nvlink_ring_busbw, bytes);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto* first = reinterpret_cast<const char*>(data);
  const auto root = nlohmann::json::parse(first, first + size, nullptr, false);
  if (root.is_discarded()) return 0;
  try {
    exercise(myriad::sim::parse_profile(root, "fuzz.json"));
  } catch (const std::exception&) {
    // rejected, with a message
  }
  return 0;
}
