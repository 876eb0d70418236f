// Device memory owned by one object: n elements of T on one GPU, freed with its
// owner. CUDA builds only (it includes the CUDA runtime): the NCCL executor's
// rank buffers, the calibration's CUDA cases and the CUDA backend tests use it.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/device/cuda_check.hpp"

namespace myriad::kernels {

// What a new buffer holds: what cudaMalloc left there, or every bit set (a NaN in
// fp32 and bf16), so that an element a kernel fails to write shows.
enum class DeviceFill { none, poison };

// The device argument meaning "the calling thread's current device".
inline constexpr int kCurrentDevice = -1;

template <typename T>
class DeviceBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "device buffers hold trivially copyable values");

 public:
  // Holds nothing: allocated() is false.
  DeviceBuffer() = default;

  // n elements on `device`, which is left current (as cudaSetDevice leaves it);
  // kCurrentDevice allocates on the current device. Throws CudaError.
  explicit DeviceBuffer(std::size_t n, DeviceFill fill = DeviceFill::none,
                        int device = kCurrentDevice)
      : n_(n) {
    if (device != kCurrentDevice) MYRIAD_CUDA_CHECK(cudaSetDevice(device));
    void* p = nullptr;
    MYRIAD_CUDA_CHECK(cudaMalloc(&p, allocation_bytes()));
    p_ = static_cast<T*>(p);
    if (fill == DeviceFill::poison) {
      try {
        poison();
      } catch (...) {
        release();
        throw;
      }
    }
  }

  // host.size() elements holding a copy of `host`.
  explicit DeviceBuffer(const std::vector<T>& host, int device = kCurrentDevice)
      : DeviceBuffer(host.size(), DeviceFill::none, device) {
    upload(host);
  }

  ~DeviceBuffer() { release(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  [[nodiscard]] T* get() const noexcept { return p_; }
  [[nodiscard]] bool allocated() const noexcept { return p_ != nullptr; }
  [[nodiscard]] std::size_t size() const noexcept { return n_; }
  [[nodiscard]] std::size_t bytes() const noexcept { return n_ * sizeof(T); }
  // The address `offset` bytes into the buffer.
  [[nodiscard]] char* byte_at(std::ptrdiff_t offset) const noexcept {
    return reinterpret_cast<char*>(p_) + offset;
  }

  // Copies `host` (size() elements) to the device.
  void upload(const std::vector<T>& host) const {
    if (host.size() != n_) {
      throw std::invalid_argument("DeviceBuffer::upload: " + std::to_string(host.size()) +
                                  " elements into a buffer of " + std::to_string(n_));
    }
    MYRIAD_CUDA_CHECK(cudaMemcpy(p_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }

  // Waits for all work on the current device, then copies the buffer to the host.
  [[nodiscard]] std::vector<T> download() const {
    MYRIAD_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<T> host(n_);
    MYRIAD_CUDA_CHECK(cudaMemcpy(host.data(), p_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

  // Sets every bit of the allocation (see DeviceFill::poison); nothing when empty.
  void poison() const {
    if (p_ != nullptr) MYRIAD_CUDA_CHECK(cudaMemset(p_, 0xFF, allocation_bytes()));
  }

 private:
  // At least one element and 4 bytes: get() is a real address even for n == 0.
  [[nodiscard]] std::size_t allocation_bytes() const noexcept {
    return std::max(std::max<std::size_t>(n_, 1) * sizeof(T), std::size_t{4});
  }
  void release() noexcept {
    if (p_ != nullptr) (void)cudaFree(p_);
    p_ = nullptr;
    n_ = 0;
  }

  T* p_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace myriad::kernels
