// Helpers for the CUDA backend tests (CUDA builds only): a device buffer that is
// poisoned (all bits set: NaN for floats) on creation, and conversions between
// fp32, bf16 and float64 for comparisons against the CPU backend.
#pragma once

#include <cuda_runtime_api.h>

#include <random>
#include <vector>

#include "kernels/device/cuda_check.hpp"
#include "kernels/device/device_query.hpp"
#include "kernels/ops/bf16.hpp"
#include "ops_test_support.hpp"

namespace myriad::kernels::ops::testing {

// A device buffer of n elements, filled with all-ones bits (NaN for floats) on creation.
template <typename T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    MYRIAD_CUDA_CHECK(cudaMalloc(&ptr_, n * sizeof(T)));
    MYRIAD_CUDA_CHECK(cudaMemset(ptr_, 0xFF, n * sizeof(T)));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) {
    MYRIAD_CUDA_CHECK(cudaMemcpy(ptr_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~DeviceBuffer() { (void)cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&&) = delete;
  DeviceBuffer& operator=(DeviceBuffer&&) = delete;

  T* get() { return static_cast<T*>(ptr_); }
  [[nodiscard]] std::vector<T> download() const {
    MYRIAD_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> host(n_);
    MYRIAD_CUDA_CHECK(cudaMemcpy(host.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t n_ = 0;
};

inline bool have_gpu() { return !query_devices().devices.empty(); }

inline std::vector<double> widen(const std::vector<float>& x) { return {x.begin(), x.end()}; }

inline std::vector<float> widen_bf16(const std::vector<Bf16>& x) {
  std::vector<float> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i].to_float();
  return out;
}

inline std::vector<Bf16> to_bf16(const std::vector<float>& x) {
  std::vector<Bf16> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = Bf16::from_float(x[i]);
  return out;
}

inline std::vector<Bf16> random_bf16(std::mt19937_64& rng, std::size_t n, float lo = -1.0F,
                                     float hi = 1.0F) {
  return to_bf16(random_floats(rng, n, lo, hi));
}

}  // namespace myriad::kernels::ops::testing
