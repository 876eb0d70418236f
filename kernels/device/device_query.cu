// The device query of a CUDA build.
#include <cuda_runtime.h>

#include <vector>

#include "kernels/device/cuda_check.hpp"
#include "kernels/device/device_query.hpp"

namespace myriad::kernels {
namespace {

std::string version_text(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

// Each thread writes its global index, scrambled so that a stale buffer cannot pass.
__global__ void probe_kernel(unsigned* out, unsigned n) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * 2654435761u + 12345u;
}

}  // namespace

DeviceReport query_devices() {
  DeviceReport r;
  r.cuda_built = true;
  r.compiled_archs = MYRIAD_CUDA_ARCHS;
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess) r.cuda_runtime = version_text(runtime);
  int driver = 0;
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0) {
    r.cuda_driver = version_text(driver);
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    r.note = std::string("no usable GPU: ") + cudaGetErrorString(status);
    cudaGetLastError();  // clear the sticky error for later calls
    return r;
  }
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    r.devices.push_back(DeviceInfo{i, p.name, p.major, p.minor,
                                   static_cast<double>(p.totalGlobalMem), p.multiProcessorCount,
                                   static_cast<double>(p.l2CacheSize)});
  }
  if (r.devices.empty()) r.note = "no GPU visible to this process";
  return r;
}

void run_probe_kernel(int device) {
  constexpr unsigned kN = 1u << 20;
  MYRIAD_CUDA_CHECK(cudaSetDevice(device));
  unsigned* buffer = nullptr;
  MYRIAD_CUDA_CHECK(cudaMalloc(&buffer, kN * sizeof(unsigned)));
  std::vector<unsigned> host(kN, 0);
  try {
    MYRIAD_CUDA_CHECK(cudaMemset(buffer, 0xff, kN * sizeof(unsigned)));  // poison
    probe_kernel<<<(kN + 255) / 256, 256>>>(buffer, kN);
    MYRIAD_CUDA_CHECK(cudaGetLastError());
    MYRIAD_CUDA_CHECK(
        cudaMemcpy(host.data(), buffer, kN * sizeof(unsigned), cudaMemcpyDeviceToHost));
  } catch (...) {
    cudaFree(buffer);
    throw;
  }
  MYRIAD_CUDA_CHECK(cudaFree(buffer));
  for (unsigned i = 0; i < kN; ++i) {
    if (host[i] != i * 2654435761u + 12345u) {
      throw CudaError("probe kernel wrote a wrong value at index " + std::to_string(i));
    }
  }
}

}  // namespace myriad::kernels
