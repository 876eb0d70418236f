// The device query of a build without CUDA.
#include <stdexcept>

#include "kernels/device/device_query.hpp"

namespace myriad::kernels {

DeviceReport query_devices() {
  DeviceReport r;
  r.note = "built without CUDA (configure with -DMYRIAD_CUDA=ON or AUTO where nvcc is found)";
  return r;
}

void run_probe_kernel(int /*device*/) {
  throw std::logic_error("run_probe_kernel: this build has no CUDA backend");
}

}  // namespace myriad::kernels
