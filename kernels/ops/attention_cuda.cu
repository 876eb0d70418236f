#include <cmath>
#include <stdexcept>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/attention_cuda.hpp"
#include "kernels/ops/storage.cuh"

namespace myriad::kernels::ops {

namespace {

constexpr int kRowsPerBlock = 128;
constexpr int kKeyTile = 16;
constexpr int kMaxDim = static_cast<int>(kAttentionCudaMaxHeadDim);

// Shape in device-friendly form: offsets of [batch, heads, seq, head_dim] rows.
struct Geometry {
  AttentionShape s;
  float scale;
  __device__ std::int64_t q_row(std::int64_t b, std::int64_t h, std::int64_t i) const {
    return ((b * s.q_heads + h) * s.seq + i) * s.head_dim;
  }
  __device__ std::int64_t kv_row(std::int64_t b, std::int64_t h, std::int64_t j) const {
    return ((b * s.kv_heads + h) * s.seq + j) * s.head_dim;
  }
  __device__ std::int64_t stat(std::int64_t b, std::int64_t h, std::int64_t i) const {
    return (b * s.q_heads + h) * s.seq + i;
  }
  // Keys [first, last) that query i may see: the CPU backend's key_range.
  __device__ std::int64_t first_key(std::int64_t i) const {
    return s.window > 0 ? (i - s.window + 1 > 0 ? i - s.window + 1 : 0) : 0;
  }
  __device__ std::int64_t last_key(std::int64_t i) const {
    if (s.causal) return i + 1;
    if (s.window > 0) return i + s.window < s.seq ? i + s.window : s.seq;
    return s.seq;
  }
  __device__ bool allowed(std::int64_t i, std::int64_t j) const {
    return j >= first_key(i) && j < last_key(i);
  }
};

template <typename A, typename B>
__device__ float dot(const A* a, const B* b, std::int64_t n) {
  float acc = 0.0F;
  for (std::int64_t d = 0; d < n; ++d) acc += to_float(a[d]) * to_float(b[d]);
  return acc;
}

// Cooperative copy of key/value rows [t0, t1) of one kv head into shared memory.
template <typename T>
__device__ void stage_tile(const Geometry& g, const T* k, const T* v, std::int64_t kv0,
                           std::int64_t t0, std::int64_t t1, float* ks, float* vs) {
  const std::int64_t count = (t1 - t0) * g.s.head_dim;
  for (std::int64_t e = threadIdx.x; e < count; e += blockDim.x) {
    ks[e] = to_float(k[kv0 + t0 * g.s.head_dim + e]);
    vs[e] = to_float(v[kv0 + t0 * g.s.head_dim + e]);
  }
}

// grid: (query blocks, q_heads, batch); one thread per query row.
template <typename T>
__global__ void forward_kernel(Geometry g, const T* q, const T* k, const T* v, T* o, float* lse) {
  extern __shared__ float tile[];  // keys then values: 2 * kKeyTile * head_dim
  float* ks = tile;
  float* vs = tile + kKeyTile * g.s.head_dim;
  const std::int64_t b = blockIdx.z, h = blockIdx.y;
  const std::int64_t i0 = static_cast<std::int64_t>(blockIdx.x) * blockDim.x;
  const std::int64_t i = i0 + threadIdx.x;
  const bool active = i < g.s.seq;
  const std::int64_t i_last = (i0 + blockDim.x < g.s.seq ? i0 + blockDim.x : g.s.seq) - 1;
  const std::int64_t kv0 = g.kv_row(b, h / (g.s.q_heads / g.s.kv_heads), 0);
  float qi[kMaxDim];
  float acc[kMaxDim];
  for (std::int64_t d = 0; d < g.s.head_dim; ++d) {
    qi[d] = active ? to_float(q[g.q_row(b, h, i) + d]) : 0.0F;
    acc[d] = 0.0F;
  }
  float m = -INFINITY;
  float l = 0.0F;
  for (std::int64_t t0 = g.first_key(i0); t0 < g.last_key(i_last); t0 += kKeyTile) {
    const std::int64_t t1 = t0 + kKeyTile < g.last_key(i_last) ? t0 + kKeyTile : g.last_key(i_last);
    __syncthreads();
    stage_tile(g, k, v, kv0, t0, t1, ks, vs);
    __syncthreads();
    for (std::int64_t j = t0; active && j < t1; ++j) {
      if (!g.allowed(i, j)) continue;
      const float* kj = ks + (j - t0) * g.s.head_dim;
      const float* vj = vs + (j - t0) * g.s.head_dim;
      const float sc = g.scale * dot(qi, kj, g.s.head_dim);
      const float m_new = fmaxf(m, sc);
      const float correction = expf(m - m_new);
      const float p = expf(sc - m_new);
      l = l * correction + p;
      for (std::int64_t d = 0; d < g.s.head_dim; ++d) acc[d] = acc[d] * correction + p * vj[d];
      m = m_new;
    }
  }
  if (!active) return;
  for (std::int64_t d = 0; d < g.s.head_dim; ++d)
    o[g.q_row(b, h, i) + d] = from_float<T>(acc[d] / l);
  lse[g.stat(b, h, i)] = m + logf(l);
}

// grid: (query blocks, q_heads, batch); dq and delta = rowsum(dO * O) per query row.
template <typename T>
__global__ void dq_kernel(Geometry g, const T* q, const T* k, const T* v, const T* o,
                          const float* lse, const T* dout, T* dq, float* delta) {
  const std::int64_t b = blockIdx.z, h = blockIdx.y;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= g.s.seq) return;
  const std::int64_t r = g.q_row(b, h, i);
  const std::int64_t kv0 = g.kv_row(b, h / (g.s.q_heads / g.s.kv_heads), 0);
  const float di = dot(dout + r, o + r, g.s.head_dim);
  const float li = lse[g.stat(b, h, i)];
  float acc[kMaxDim];
  for (std::int64_t d = 0; d < g.s.head_dim; ++d) acc[d] = 0.0F;
  for (std::int64_t j = g.first_key(i); j < g.last_key(i); ++j) {
    const T* kj = k + kv0 + j * g.s.head_dim;
    const float p = expf(g.scale * dot(q + r, kj, g.s.head_dim) - li);
    const float ds = p * (dot(dout + r, v + kv0 + j * g.s.head_dim, g.s.head_dim) - di);
    for (std::int64_t d = 0; d < g.s.head_dim; ++d) acc[d] += g.scale * ds * to_float(kj[d]);
  }
  for (std::int64_t d = 0; d < g.s.head_dim; ++d) dq[r + d] = from_float<T>(acc[d]);
  delta[g.stat(b, h, i)] = di;
}

// grid: (key blocks, kv_heads, batch); dk, dv per key row over every query that sees it.
template <typename T>
__global__ void dkdv_kernel(Geometry g, const T* q, const T* k, const T* v, const float* lse,
                            const T* dout, const float* delta, T* dk, T* dv) {
  const std::int64_t b = blockIdx.z, hk = blockIdx.y;
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= g.s.seq) return;
  const std::int64_t kr = g.kv_row(b, hk, j);
  const std::int64_t group = g.s.q_heads / g.s.kv_heads;
  float dka[kMaxDim];
  float dva[kMaxDim];
  for (std::int64_t d = 0; d < g.s.head_dim; ++d) dka[d] = dva[d] = 0.0F;
  for (std::int64_t h = hk * group; h < (hk + 1) * group; ++h) {
    for (std::int64_t i = 0; i < g.s.seq; ++i) {
      if (!g.allowed(i, j)) continue;
      const std::int64_t r = g.q_row(b, h, i);
      const float p = expf(g.scale * dot(q + r, k + kr, g.s.head_dim) - lse[g.stat(b, h, i)]);
      const float ds = p * (dot(dout + r, v + kr, g.s.head_dim) - delta[g.stat(b, h, i)]);
      for (std::int64_t d = 0; d < g.s.head_dim; ++d) {
        dva[d] += p * to_float(dout[r + d]);
        dka[d] += g.scale * ds * to_float(q[r + d]);
      }
    }
  }
  for (std::int64_t d = 0; d < g.s.head_dim; ++d) {
    dk[kr + d] = from_float<T>(dka[d]);
    dv[kr + d] = from_float<T>(dva[d]);
  }
}

Geometry geometry(const AttentionShape& s) {
  const std::string why = attention_cuda_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("attention_cuda: " + why);
  const float scale = s.scale != 0.0F ? s.scale : 1.0F / std::sqrt(static_cast<float>(s.head_dim));
  return Geometry{s, scale};
}

dim3 grid(const AttentionShape& s, std::int64_t heads) {
  return dim3(static_cast<unsigned int>((s.seq + kRowsPerBlock - 1) / kRowsPerBlock),
              static_cast<unsigned int>(heads), static_cast<unsigned int>(s.batch));
}

}  // namespace

std::string attention_cuda_can_implement(const AttentionShape& s) {
  std::string why = attention_can_implement(s);
  if (!why.empty()) return why;
  if (s.head_dim > kAttentionCudaMaxHeadDim) return "head_dim above the CUDA kernels' 256";
  if (s.batch > 65535 || s.q_heads > 65535) return "batch and q_heads must fit a CUDA grid (65535)";
  return {};
}

namespace {

template <typename T>
void forward(const AttentionShape& s, const T* q, const T* k, const T* v, T* o, float* lse,
             cudaStream_t stream) {
  const Geometry g = geometry(s);
  const auto shared = static_cast<std::size_t>(2 * kKeyTile * s.head_dim) * sizeof(float);
  forward_kernel<<<grid(s, s.q_heads), kRowsPerBlock, shared, stream>>>(g, q, k, v, o, lse);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void backward(const AttentionShape& s, const T* q, const T* k, const T* v, const T* o,
              const float* lse, const T* do_, T* dq, T* dk, T* dv, float* delta,
              cudaStream_t stream) {
  const Geometry g = geometry(s);
  dq_kernel<<<grid(s, s.q_heads), kRowsPerBlock, 0, stream>>>(g, q, k, v, o, lse, do_, dq, delta);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
  dkdv_kernel<<<grid(s, s.kv_heads), kRowsPerBlock, 0, stream>>>(g, q, k, v, lse, do_, delta, dk,
                                                                 dv);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void attention_forward_cuda(const AttentionShape& s, const float* q, const float* k, const float* v,
                            float* o, float* lse, cudaStream_t stream) {
  forward(s, q, k, v, o, lse, stream);
}

void attention_forward_cuda(const AttentionShape& s, const Bf16* q, const Bf16* k, const Bf16* v,
                            Bf16* o, float* lse, cudaStream_t stream) {
  forward(s, device_ptr(q), device_ptr(k), device_ptr(v), device_ptr(o), lse, stream);
}

void attention_backward_cuda(const AttentionShape& s, const float* q, const float* k,
                             const float* v, const float* o, const float* lse, const float* do_,
                             const AttentionCudaGrads& grads, cudaStream_t stream) {
  backward(s, q, k, v, o, lse, do_, grads.dq, grads.dk, grads.dv, grads.delta, stream);
}

void attention_backward_cuda(const AttentionShape& s, const Bf16* q, const Bf16* k, const Bf16* v,
                             const Bf16* o, const float* lse, const Bf16* do_,
                             const AttentionCudaGradsBf16& grads, cudaStream_t stream) {
  backward(s, device_ptr(q), device_ptr(k), device_ptr(v), device_ptr(o), lse, device_ptr(do_),
           device_ptr(grads.dq), device_ptr(grads.dk), device_ptr(grads.dv), grads.delta, stream);
}

}  // namespace myriad::kernels::ops
