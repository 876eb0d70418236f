// Which GPUs this process can use, and what CUDA this build has. Without a
// CUDA build, or without a device, the report says so instead of failing.
#pragma once

#include <string>
#include <vector>

namespace myriad::kernels {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int compute_major = 0;  // compute capability, e.g. 9.0 for H100/H200
  int compute_minor = 0;
  double memory_bytes = 0;
  int multiprocessors = 0;
  double l2_bytes = 0;  // cudaDeviceProp::l2CacheSize: its last-level cache
};

struct DeviceReport {
  bool cuda_built = false;     // this build has the CUDA backends
  std::string cuda_runtime;    // "13.0", or empty
  std::string cuda_driver;     // "13.0", or empty when no driver
  std::string compiled_archs;  // "sm_80 sm_90"
  std::vector<DeviceInfo> devices;
  std::string note;  // why there are no devices, when there are none
};

DeviceReport query_devices();

// Runs a tiny kernel on `device` and checks what it wrote: proves that the
// build's architectures load and run there. Throws CudaError on failure, and
// std::logic_error in a build without CUDA.
void run_probe_kernel(int device);

}  // namespace myriad::kernels
