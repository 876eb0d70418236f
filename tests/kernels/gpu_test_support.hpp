// Helpers for the CUDA backend tests (CUDA builds only): the device buffer
// (kernels/device/device_buffer.hpp), whether a GPU is there, and conversions
// between fp32, bf16 and float64 for comparisons against the CPU backend.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/device/cuda_check.hpp"
#include "kernels/device/device_buffer.hpp"
#include "kernels/device/device_query.hpp"
#include "kernels/ops/attention_shape.hpp"
#include "kernels/ops/bf16.hpp"
#include "ops_test_support.hpp"

namespace myriad::kernels::ops::testing {

// Device buffers: the tests create their outputs poisoned (DeviceFill::poison:
// all bits set, NaN for floats), so an element a kernel fails to write shows.
using kernels::DeviceBuffer;

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

// Sizes and random bf16 inputs of an attention: q and k in [-2, 2), v in [-1, 1).
struct AttentionInputs {
  std::size_t nq, nkv, nl;
  std::vector<Bf16> q, k, v;
};
inline AttentionInputs attention_inputs(std::mt19937_64& rng, const AttentionShape& s) {
  AttentionInputs in;
  in.nq = static_cast<std::size_t>(s.batch * s.q_heads * s.seq * s.head_dim);
  in.nkv = static_cast<std::size_t>(s.batch * s.kv_heads * s.seq * s.head_dim);
  in.nl = static_cast<std::size_t>(s.batch * s.q_heads * s.seq);
  in.q = random_bf16(rng, in.nq, -2.0F, 2.0F);
  in.k = random_bf16(rng, in.nkv, -2.0F, 2.0F);
  in.v = random_bf16(rng, in.nkv);
  return in;
}

// An attention's shape, for a test's trace.
inline std::string describe(const AttentionShape& s) {
  return "batch " + std::to_string(s.batch) + " heads " + std::to_string(s.q_heads) + "/" +
         std::to_string(s.kv_heads) + " seq " + std::to_string(s.seq) + " d " +
         std::to_string(s.head_dim) + " causal " + std::to_string(s.causal) + " window " +
         std::to_string(s.window) + " scale " + std::to_string(s.scale);
}

// A gradient within 1 % of the CPU's largest element plus 1 % of each element.
inline void expect_gradient_close(const DeviceBuffer<Bf16>& got, const std::vector<Bf16>& want,
                                  const char* name) {
  const std::vector<double> w = widen(widen_bf16(want));
  const double largest = std::accumulate(
      w.begin(), w.end(), 0.0, [](double m, double x) { return std::max(m, std::fabs(x)); });
  expect_close(widen_bf16(got.download()), w, 1e-2 * largest, 1e-2, name);
}

}  // namespace myriad::kernels::ops::testing
