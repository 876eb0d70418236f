#include <initializer_list>
#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/block_reduce.cuh"
#include "kernels/ops/column_sum.cuh"
#include "kernels/ops/norm_cuda.hpp"
#include "kernels/ops/storage.cuh"
#include "kernels/ops/vector_map.cuh"

namespace myriad::kernels::ops {

namespace {

// Rows are read 16 bytes a load and outputs written 16 bytes a store when `vec`
// (every row aligned). With kCached a block first copies its row (forward: x;
// backward: dy and x) into shared memory and reduces over it there, so that each
// row is read from memory once (x was read three times forward, dy and x twice
// backward); rows too long for shared memory are read where they are. Each
// thread sums the same elements in the same order either way, so the results
// are the same bit for bit.
template <typename T>
__device__ void load_row(const T* src, T* dst, std::int64_t hidden, bool vec) {
  constexpr int kE = kPackElements<T>;
  const std::int64_t packs = vec ? hidden / kE : 0;
  for (std::int64_t k = threadIdx.x; k < packs; k += blockDim.x) {
    reinterpret_cast<Pack<T>*>(dst)[k] = reinterpret_cast<const Pack<T>*>(src)[k];
  }
  for (std::int64_t j = packs * kE + threadIdx.x; j < hidden; j += blockDim.x) dst[j] = src[j];
}

// Writes out[j] = f(j) for j < hidden, 16 bytes a store when `vec`.
template <typename T, typename F>
__device__ void store_row(T* out, std::int64_t hidden, bool vec, F f) {
  constexpr int kE = kPackElements<T>;
  const std::int64_t packs = vec ? hidden / kE : 0;
  for (std::int64_t k = threadIdx.x; k < packs; k += blockDim.x) {
    Pack<T> p;
#pragma unroll
    for (int e = 0; e < kE; ++e) p.v[e] = from_float<T>(f(k * kE + e));
    reinterpret_cast<Pack<T>*>(out)[k] = p;
  }
  for (std::int64_t j = packs * kE + threadIdx.x; j < hidden; j += blockDim.x) {
    out[j] = from_float<T>(f(j));
  }
}

// Shared memory for `rows` rows of `hidden` elements, each row 16-byte aligned.
template <typename T>
__host__ __device__ std::size_t row_bytes(std::int64_t hidden, int rows) {
  const std::int64_t padded = (hidden + kPackElements<T> - 1) / kPackElements<T> * kPackElements<T>;
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(padded) * sizeof(T);
}

// The row `src` as the kernel reads it: copied into `cache` (kCached) or in place.
template <bool kCached, typename T>
__device__ const T* row_of(const T* src, T* cache, std::int64_t hidden, bool vec) {
  if constexpr (kCached) {
    load_row(src, cache, hidden, vec);
    return cache;
  } else {
    return src;
  }
}

// mean == nullptr: RMSNorm (no centring, no beta).
template <typename T, bool kCached>
__global__ void norm_forward_kernel(NormShape s, const T* x, const float* gamma, const float* beta,
                                    T* y, float* mean, float* rstd, bool vec) {
  extern __shared__ __align__(16) unsigned char cache[];
  __shared__ float shared[kThreadsPerBlock];
  const auto h = static_cast<float>(s.hidden);
  for (std::int64_t r = blockIdx.x; r < s.rows; r += gridDim.x) {
    const T* xr = row_of<kCached>(x + r * s.hidden, reinterpret_cast<T*>(cache), s.hidden, vec);
    if constexpr (kCached) __syncthreads();
    float mu = 0.0F;
    if (mean != nullptr) {
      float sum = 0.0F;
      for (std::int64_t j = threadIdx.x; j < s.hidden; j += blockDim.x) sum += to_float(xr[j]);
      mu = block_sum(sum, shared) / h;
    }
    float sq = 0.0F;
    for (std::int64_t j = threadIdx.x; j < s.hidden; j += blockDim.x) {
      const float c = to_float(xr[j]) - mu;
      sq += c * c;
    }
    const float rs = 1.0F / sqrtf(block_sum(sq, shared) / h + s.eps);
    store_row(y + r * s.hidden, s.hidden, vec, [&](std::int64_t j) {
      const float v = (to_float(xr[j]) - mu) * rs * gamma[j];
      return beta != nullptr ? v + beta[j] : v;
    });
    if (threadIdx.x == 0) {
      if (mean != nullptr) mean[r] = mu;
      rstd[r] = rs;
    }
    if constexpr (kCached) __syncthreads();  // the next row overwrites the cache
  }
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma; no mean(g) for RMSNorm.
template <typename T, bool kCached>
__global__ void norm_dx_kernel(NormShape s, const T* dy, const T* x, const float* gamma,
                               const float* mean, const float* rstd, T* dx, bool vec) {
  extern __shared__ __align__(16) unsigned char cache[];
  __shared__ float shared[kThreadsPerBlock];
  const auto h = static_cast<float>(s.hidden);
  for (std::int64_t r = blockIdx.x; r < s.rows; r += gridDim.x) {
    const std::int64_t base = r * s.hidden;
    const T* dyr = row_of<kCached>(dy + base, reinterpret_cast<T*>(cache), s.hidden, vec);
    const T* xr = row_of<kCached>(x + base, reinterpret_cast<T*>(cache + row_bytes<T>(s.hidden, 1)),
                                  s.hidden, vec);
    if constexpr (kCached) __syncthreads();
    const float mu = mean != nullptr ? mean[r] : 0.0F;
    const float rs = rstd[r];
    float gx = 0.0F;
    float gs = 0.0F;
    for (std::int64_t j = threadIdx.x; j < s.hidden; j += blockDim.x) {
      const float g = to_float(dyr[j]) * gamma[j];
      gx += g * (to_float(xr[j]) - mu) * rs;
      gs += g;
    }
    const float c1 = block_sum(gx, shared) / h;
    const float c2 = mean != nullptr ? block_sum(gs, shared) / h : 0.0F;
    store_row(dx + base, s.hidden, vec, [&](std::int64_t j) {
      const float xhat = (to_float(xr[j]) - mu) * rs;
      return rs * (to_float(dyr[j]) * gamma[j] - c2 - xhat * c1);
    });
    if constexpr (kCached) __syncthreads();
  }
}

// Whether `bytes` of dynamic shared memory can run `kernel`, asking for more
// than the default 48 KiB where the GPU allows it.
bool shared_fits(const void* kernel, std::size_t bytes) {
  constexpr std::size_t kDefault = 48 * 1024;
  const std::size_t static_bytes = sizeof(float) * kThreadsPerBlock;
  if (bytes + static_bytes <= kDefault) return true;
  int device = 0;
  int optin = 0;
  MYRIAD_CUDA_CHECK(cudaGetDevice(&device));
  MYRIAD_CUDA_CHECK(
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (bytes + static_bytes > static_cast<std::size_t>(optin)) return false;
  MYRIAD_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(bytes)));
  return true;
}

// Rows can be moved 16 bytes at a time: every row starts aligned.
template <typename T>
bool rows_vectorized(const NormShape& s, std::initializer_list<const void*> pointers) {
  if (s.hidden % kPackElements<T> != 0) return false;
  for (const void* p : pointers) {
    if (!aligned16(p)) return false;
  }
  return true;
}

// dgamma = sum_r dy * xhat and dbeta = sum_r dy (when asked), in two stages so
// that the rows are spread over the whole GPU: block (c, chunk) sums its chunk
// of rows for 256 columns into partial[chunk][column]; column_sum_kernel adds
// the chunks of each column in order (deterministic: no atomics). One thread per
// column over every row, the first version, ran at 2-6 % of the copy bandwidth
// on an H200 (2026-11-30): 16 to 32 blocks for the whole GPU.
template <typename T>
__global__ void norm_dparams_partial_kernel(NormShape s, std::int64_t rows_per_chunk, const T* dy,
                                            const T* x, const float* mean, const float* rstd,
                                            float* partial_g, float* partial_b) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= s.hidden) return;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.y) * rows_per_chunk;
  const std::int64_t r1 = r0 + rows_per_chunk < s.rows ? r0 + rows_per_chunk : s.rows;
  float dg = 0.0F;
  float db = 0.0F;
  for (std::int64_t r = r0; r < r1; ++r) {
    const float mu = mean != nullptr ? mean[r] : 0.0F;
    const float d = to_float(dy[r * s.hidden + j]);
    dg += d * (to_float(x[r * s.hidden + j]) - mu) * rstd[r];
    db += d;
  }
  partial_g[blockIdx.y * s.hidden + j] = dg;
  if (partial_b != nullptr) partial_b[blockIdx.y * s.hidden + j] = db;
}

unsigned int row_blocks(const NormShape& s) {
  const std::string why = norm_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("norm_cuda: " + why);
  return static_cast<unsigned int>(s.rows < 65535 ? s.rows : 65535);
}

template <typename T>
void norm_forward(const NormShape& s, const T* x, const float* gamma, const float* beta, T* y,
                  float* mean, float* rstd, cudaStream_t stream) {
  const unsigned int blocks = row_blocks(s);
  const std::size_t bytes = row_bytes<T>(s.hidden, 1);
  const bool vec = rows_vectorized<T>(s, {x, y});
  if (shared_fits(reinterpret_cast<const void*>(&norm_forward_kernel<T, true>), bytes)) {
    norm_forward_kernel<T, true>
        <<<blocks, kThreadsPerBlock, bytes, stream>>>(s, x, gamma, beta, y, mean, rstd, vec);
  } else {
    norm_forward_kernel<T, false>
        <<<blocks, kThreadsPerBlock, 0, stream>>>(s, x, gamma, beta, y, mean, rstd, vec);
  }
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void norm_backward(const NormShape& s, const T* dy, const T* x, const float* gamma,
                   const float* mean, const float* rstd, T* dx, float* dgamma, float* dbeta,
                   cudaStream_t stream) {
  const unsigned int blocks = row_blocks(s);
  const std::size_t bytes = row_bytes<T>(s.hidden, 2);
  const bool vec = rows_vectorized<T>(s, {dy, x, dx});
  if (shared_fits(reinterpret_cast<const void*>(&norm_dx_kernel<T, true>), bytes)) {
    norm_dx_kernel<T, true>
        <<<blocks, kThreadsPerBlock, bytes, stream>>>(s, dy, x, gamma, mean, rstd, dx, vec);
  } else {
    norm_dx_kernel<T, false>
        <<<blocks, kThreadsPerBlock, 0, stream>>>(s, dy, x, gamma, mean, rstd, dx, vec);
  }
  MYRIAD_CUDA_CHECK(cudaGetLastError());
  const std::int64_t chunks = column_chunks(s.rows);
  const std::int64_t rows_per_chunk = (s.rows + chunks - 1) / chunks;
  const std::int64_t params = dbeta != nullptr ? 2 : 1;
  float* partial = nullptr;  // stream-ordered: the pool hands the same memory back next call
  MYRIAD_CUDA_CHECK(cudaMallocAsync(
      reinterpret_cast<void**>(&partial),
      sizeof(float) * static_cast<std::size_t>(params * chunks * s.hidden), stream));
  float* partial_b = dbeta != nullptr ? partial + chunks * s.hidden : nullptr;
  const dim3 grid(static_cast<unsigned int>((s.hidden + kThreadsPerBlock - 1) / kThreadsPerBlock),
                  static_cast<unsigned int>(chunks));
  norm_dparams_partial_kernel<<<grid, kThreadsPerBlock, 0, stream>>>(s, rows_per_chunk, dy, x, mean,
                                                                     rstd, partial, partial_b);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
  column_sum_kernel<<<blocks_for(s.hidden), kThreadsPerBlock, 0, stream>>>(chunks, s.hidden,
                                                                           partial, dgamma);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
  if (partial_b != nullptr) {
    column_sum_kernel<<<blocks_for(s.hidden), kThreadsPerBlock, 0, stream>>>(chunks, s.hidden,
                                                                             partial_b, dbeta);
    MYRIAD_CUDA_CHECK(cudaGetLastError());
  }
  MYRIAD_CUDA_CHECK(cudaFreeAsync(partial, stream));
}

}  // namespace

void layer_norm_forward_cuda(const NormShape& s, const float* x, const float* gamma,
                             const float* beta, float* y, float* mean, float* rstd,
                             cudaStream_t stream) {
  norm_forward(s, x, gamma, beta, y, mean, rstd, stream);
}

void layer_norm_forward_cuda(const NormShape& s, const Bf16* x, const float* gamma,
                             const float* beta, Bf16* y, float* mean, float* rstd,
                             cudaStream_t stream) {
  norm_forward(s, device_ptr(x), gamma, beta, device_ptr(y), mean, rstd, stream);
}

void layer_norm_backward_cuda(const NormShape& s, const float* dy, const float* x,
                              const float* gamma, const float* mean, const float* rstd, float* dx,
                              float* dgamma, float* dbeta, cudaStream_t stream) {
  norm_backward(s, dy, x, gamma, mean, rstd, dx, dgamma, dbeta, stream);
}

void layer_norm_backward_cuda(const NormShape& s, const Bf16* dy, const Bf16* x, const float* gamma,
                              const float* mean, const float* rstd, Bf16* dx, float* dgamma,
                              float* dbeta, cudaStream_t stream) {
  norm_backward(s, device_ptr(dy), device_ptr(x), gamma, mean, rstd, device_ptr(dx), dgamma, dbeta,
                stream);
}

void rms_norm_forward_cuda(const NormShape& s, const float* x, const float* gamma, float* y,
                           float* rstd, cudaStream_t stream) {
  norm_forward(s, x, gamma, static_cast<const float*>(nullptr), y, nullptr, rstd, stream);
}

void rms_norm_forward_cuda(const NormShape& s, const Bf16* x, const float* gamma, Bf16* y,
                           float* rstd, cudaStream_t stream) {
  norm_forward(s, device_ptr(x), gamma, static_cast<const float*>(nullptr), device_ptr(y), nullptr,
               rstd, stream);
}

void rms_norm_backward_cuda(const NormShape& s, const float* dy, const float* x, const float* gamma,
                            const float* rstd, float* dx, float* dgamma, cudaStream_t stream) {
  norm_backward(s, dy, x, gamma, nullptr, rstd, dx, dgamma, nullptr, stream);
}

void rms_norm_backward_cuda(const NormShape& s, const Bf16* dy, const Bf16* x, const float* gamma,
                            const float* rstd, Bf16* dx, float* dgamma, cudaStream_t stream) {
  norm_backward(s, device_ptr(dy), device_ptr(x), gamma, nullptr, rstd, device_ptr(dx), dgamma,
                nullptr, stream);
}

}  // namespace myriad::kernels::ops
