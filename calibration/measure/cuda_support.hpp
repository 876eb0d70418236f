// Internal to calibration/, compiled only with CUDA: shared device buffers, the
// stream and events every CUDA case shares, and the builders of the CUDA cases,
// for the kernel grid (measure/cuda_backend.cpp), the collectives
// (measure/cuda_collectives.cpp) and the layer composite (check/cuda_composite.cpp).
#pragma once

#ifdef MYRIAD_HAVE_CUDA

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "calibration/measure/cases.hpp"
#include "kernels/device/cuda_check.hpp"
#include "kernels/device/device_buffer.hpp"
#include "kernels/ops/bf16.hpp"
#include "kernels/ops/gemm_cuda.hpp"

namespace myriad::calibration::cuda_detail {

namespace ops = kernels::ops;

using kernels::DeviceBuffer;
using kernels::DeviceFill;

// A device buffer shared by the closures of a case, freed with its last owner.
template <typename T>
using Buf = std::shared_ptr<DeviceBuffer<T>>;

inline std::size_t count(std::int64_t a, std::int64_t b = 1, std::int64_t c = 1) {
  return static_cast<std::size_t>(a) * static_cast<std::size_t>(b) * static_cast<std::size_t>(c);
}

inline Buf<float> random_floats(std::size_t n, std::uint32_t seed) {
  return std::make_shared<DeviceBuffer<float>>(uniform_floats(n, seed));
}

// Storage types: fp32, or bf16 (fp32 compute inside the kernel).
template <typename T>
T from_float(float x) {
  if constexpr (std::is_same_v<T, float>) {
    return x;
  } else {
    return T::from_float(x);
  }
}

template <typename T>
float to_float(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return x;
  } else {
    return x.to_float();
  }
}

template <typename T>
constexpr const char* dtype_name() {
  return std::is_same_v<T, float> ? "fp32" : "bf16";
}

// Families of bf16 rows end in ".bf16": the profile keeps both storage types apart.
template <typename T>
std::string typed(const std::string& family) {
  return std::is_same_v<T, float> ? family : family + ".bf16";
}

// Random values in storage type T, and their host copy.
template <typename T>
std::vector<T> uniform_values(std::size_t n, std::uint32_t seed) {
  if constexpr (std::is_same_v<T, float>) {
    return uniform_floats(n, seed);
  } else {
    const std::vector<float> f = uniform_floats(n, seed);
    std::vector<T> host(n);
    std::transform(f.begin(), f.end(), host.begin(), [](float x) { return from_float<T>(x); });
    return host;
  }
}

template <typename T>
Buf<T> random_values(std::size_t n, std::uint32_t seed) {
  return std::make_shared<DeviceBuffer<T>>(uniform_values<T>(n, seed));
}

// All bits set: a NaN in fp32 and in bf16, written by the device in no time.
template <typename T>
Buf<T> poisoned_values(std::size_t n) {
  return std::make_shared<DeviceBuffer<T>>(n, DeviceFill::poison);
}

template <typename T>
std::string finite_values(const Buf<T>& d) {
  const std::vector<T> host = d->download();
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (!std::isfinite(to_float(host[i]))) {
      return fmt::format("element {} of {} is not finite", i, host.size());
    }
  }
  return "pass";
}

inline Buf<float> poisoned(std::size_t n) { return poisoned_values<float>(n); }

// What the reference checks (measure/reference.hpp) read: a device buffer's
// values, and random_values' host copy, as floats (bf16 widens exactly).
template <typename T>
std::vector<float> host_floats(const Buf<T>& d) {
  const std::vector<T> host = d->download();
  std::vector<float> out(host.size());
  std::transform(host.begin(), host.end(), out.begin(), [](T x) { return to_float(x); });
  return out;
}

template <typename T>
std::vector<float> uniform_as_floats(std::size_t n, std::uint32_t seed) {
  const std::vector<T> values = uniform_values<T>(n, seed);
  std::vector<float> out(n);
  std::transform(values.begin(), values.end(), out.begin(), [](T x) { return to_float(x); });
  return out;
}

// The reference checks' relative tolerance for outputs stored as T.
template <typename T>
constexpr double storage_tolerance() {
  return std::is_same_v<T, float> ? 1e-4 : 1e-2;
}

// Shared by every case: the stream, the events and the cuBLASLt handle.
struct Context {
  cudaStream_t stream = nullptr;
  cudaEvent_t begin = nullptr;
  cudaEvent_t end = nullptr;
  ops::GemmCuda gemm;
  Context() {
    MYRIAD_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    MYRIAD_CUDA_CHECK(cudaEventCreate(&begin));
    MYRIAD_CUDA_CHECK(cudaEventCreate(&end));
  }
  ~Context() {
    cudaEventDestroy(begin);
    cudaEventDestroy(end);
    cudaStreamDestroy(stream);
  }
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  Context(Context&&) = delete;
  Context& operator=(Context&&) = delete;

  double time(int iterations, const std::function<void()>& run) const {
    MYRIAD_CUDA_CHECK(cudaEventRecord(begin, stream));
    for (int i = 0; i < iterations; ++i) run();
    MYRIAD_CUDA_CHECK(cudaEventRecord(end, stream));
    MYRIAD_CUDA_CHECK(cudaEventSynchronize(end));
    float ms = 0;
    MYRIAD_CUDA_CHECK(cudaEventElapsedTime(&ms, begin, end));
    return static_cast<double>(ms) / 1e3;
  }
  void sync() const { MYRIAD_CUDA_CHECK(cudaStreamSynchronize(stream)); }
};

using Ctx = std::shared_ptr<Context>;

// The one context of this process (first GPU); throws without a device.
Ctx shared_context();

// Cases on the first GPU; `T` is float or ops::Bf16 (storage; fp32 compute).
// An instance that runs on the context's stream, timed by its events, checked
// by `verify` after one more run.
Instance device_instance(const Ctx& ctx, const std::function<void()>& run,
                         const std::function<std::string()>& verify);

Case gemm_case(const Ctx& ctx, ops::GemmLayout layout, std::int64_t m, std::int64_t n,
               std::int64_t k, bool ceiling = false);
Case copy_case(const Ctx& ctx, std::int64_t bytes, bool ceiling = false);
template <typename T>
Case norm_case(const Ctx& ctx, bool rms, bool backward, std::int64_t rows, std::int64_t hidden);
template <typename T>
Case activation_case(const Ctx& ctx, bool swiglu, bool backward, std::int64_t n);
template <typename T>
Case attention_case(const Ctx& ctx, bool backward, std::int64_t heads, std::int64_t seq,
                    std::int64_t head_dim);
// The tensor-core attention, forward or backward (bf16, causal), family
// "attention.mma".
Case attention_mma_case(const Ctx& ctx, bool backward, std::int64_t heads, std::int64_t seq,
                        std::int64_t head_dim);
// cuDNN's fused attention, forward or backward (bf16, causal), family
// "attention.cudnn"; attention_cudnn_missing() is empty where it can run, else why not.
Case attention_cudnn_case(const Ctx& ctx, bool backward, std::int64_t heads, std::int64_t seq,
                          std::int64_t head_dim);
std::string attention_cudnn_missing();
Case optimizer_case(const Ctx& ctx, bool lion, std::int64_t n);
Case quantize_case(const Ctx& ctx, std::int64_t rows, std::int64_t cols);
Case reduce_case(const Ctx& ctx, std::int64_t n);
Case permute_case(const Ctx& ctx, std::int64_t tokens, std::int64_t experts, std::int64_t hidden);

// All-reduce, all-gather and reduce-scatter through the NCCL executor, when built.
void append_collective_cases(std::vector<Case>& cases);

}  // namespace myriad::calibration::cuda_detail

#endif
