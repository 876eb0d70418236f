// fp8 E4M3 and bf16 quantization at memory speed, bit-identical to quantize.cpp:
// the scale is amax / 448 (1 when amax is 0) and each element is x / scale (a
// division, as on the CPU) rounded by __nv_cvt_float_to_fp8; amax is a maximum,
// the same in any order.
//
// One pass over x: each group is read once into registers, its amax reduced
// across the threads that hold it, then encoded from the same registers. Every
// kernel is a template on the pack width: 4 (16-byte float loads, 4 fp8 in one
// 32-bit store) when x is 16-byte aligned, q 4-byte aligned, cols a multiple of
// 4 and, per token, group too; otherwise 1 (element by element, same layout of
// threads, same results).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/float_pack.cuh"
#include "kernels/ops/launch.cuh"
#include "kernels/ops/quantize_cuda.hpp"

namespace myriad::kernels::ops {

namespace {

constexpr float kFp8Max = 448.0F;
constexpr int kWarp = 32;

using Fp8 = __nv_fp8_storage_t;

struct Groups {
  std::int64_t rows;
  std::int64_t cols;
  std::int64_t group;
  std::int64_t per_row;  // scales per row (per token)
};

Groups groups_of(const QuantShape& s) {
  const std::string why = quantize_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("quantize_cuda: " + why);
  return Groups{s.rows, s.cols, s.group, (s.cols + s.group - 1) / s.group};
}

// Whether the 4-wide kernels apply: every pack of 4 elements lies in one row and
// one group, and its loads and stores are aligned.
bool four_wide(const QuantShape& s, const void* x, const void* q) {
  return s.cols % 4 == 0 && (s.scaling == QuantScaling::per_channel || s.group % 4 == 0) &&
         aligned(x, 16) && aligned(q, 4);
}

template <int kWidth>
__device__ float abs_max(float amax, const Floats<kWidth>& f) {
#pragma unroll
  for (int j = 0; j < kWidth; ++j) amax = fmaxf(amax, fabsf(f.v[j]));
  return amax;
}

__device__ float scale_of_amax(float amax) { return amax > 0.0F ? amax / kFp8Max : 1.0F; }

// Encodes f / scale into kWidth fp8 bytes at p; element j is byte j (little endian).
template <int kWidth>
__device__ void store_fp8(Fp8* p, const Floats<kWidth>& f, const Floats<kWidth>& scale) {
  std::uint32_t bits = 0;
#pragma unroll
  for (int j = 0; j < kWidth; ++j) {
    const Fp8 b = __nv_cvt_float_to_fp8(f.v[j] / scale.v[j], __NV_SATFINITE, __NV_E4M3);
    bits |= static_cast<std::uint32_t>(b) << (8 * j);
  }
  if constexpr (kWidth == 4) {
    *reinterpret_cast<std::uint32_t*>(p) = bits;
  } else {
    *p = static_cast<Fp8>(bits);
  }
}

template <int kWidth>
__device__ Floats<kWidth> load_fp8(const Fp8* p, const Floats<kWidth>& scale) {
  std::uint32_t bits = 0;
  if constexpr (kWidth == 4) {
    bits = *reinterpret_cast<const std::uint32_t*>(p);
  } else {
    bits = *p;
  }
  Floats<kWidth> f;
#pragma unroll
  for (int j = 0; j < kWidth; ++j) {
    const auto b = static_cast<Fp8>((bits >> (8 * j)) & 0xFFU);
    f.v[j] = __half2float(__half(__nv_cvt_fp8_to_halfraw(b, __NV_E4M3))) * scale.v[j];
  }
  return f;
}

// ---- Per token: a team of kLanes adjacent lanes per group of a row ----
// Lane l of a team holds packs l, l + kLanes, ... of its group (kPacks of them in
// registers), so each load instruction of a team reads kLanes * kWidth
// contiguous floats; a group longer than kLanes * kPacks packs reads the rest
// twice. Teams walk the groups grid-stride; a team's lanes stay together.

template <int kLanes>
__device__ unsigned int team_mask() {
  if constexpr (kLanes == kWarp) {
    return 0xFFFFFFFFU;
  } else {
    const unsigned int first = (threadIdx.x % kWarp) / kLanes * kLanes;
    return ((1U << kLanes) - 1U) << first;
  }
}

template <int kLanes>
__device__ float team_max(float v, unsigned int mask) {
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(mask, v, offset, kLanes));
  }
  return v;
}

// The group `sidx` of a per-token shape: first element and length (a multiple of
// kWidth).
struct TokenGroup {
  std::int64_t first;
  std::int64_t packs;
};

template <int kWidth>
__device__ TokenGroup token_group(const Groups& g, std::int64_t sidx) {
  const std::int64_t r = sidx / g.per_row;
  const std::int64_t c0 = (sidx - r * g.per_row) * g.group;
  const std::int64_t len = g.cols - c0 < g.group ? g.cols - c0 : g.group;
  return TokenGroup{r * g.cols + c0, len / kWidth};
}

template <int kWidth, int kLanes, int kPacks>
__global__ void quantize_per_token_kernel(Groups g, const float* x, float* scales, Fp8* q) {
  const int lane = static_cast<int>(threadIdx.x % kLanes);
  const unsigned int mask = team_mask<kLanes>();
  const std::int64_t count = g.rows * g.per_row;
  for (std::int64_t sidx = grid_index() / kLanes; sidx < count; sidx += grid_stride() / kLanes) {
    const TokenGroup tg = token_group<kWidth>(g, sidx);
    const float* xg = x + tg.first;
    Fp8* qg = q + tg.first;
    Floats<kWidth> v[kPacks];
    float amax = 0.0F;
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
      const std::int64_t p = lane + i * kLanes;
      v[i] = p < tg.packs ? load_floats<kWidth>(xg + p * kWidth) : uniform<kWidth>(0.0F);
      amax = abs_max(amax, v[i]);
    }
    for (std::int64_t p = lane + kPacks * kLanes; p < tg.packs; p += kLanes) {
      amax = abs_max(amax, load_floats<kWidth>(xg + p * kWidth));
    }
    const float scale = scale_of_amax(team_max<kLanes>(amax, mask));
    if (lane == 0) scales[sidx] = scale;
    const Floats<kWidth> s = uniform<kWidth>(scale);
#pragma unroll
    for (int i = 0; i < kPacks; ++i) {
      const std::int64_t p = lane + i * kLanes;
      if (p < tg.packs) store_fp8(qg + p * kWidth, v[i], s);
    }
    for (std::int64_t p = lane + kPacks * kLanes; p < tg.packs; p += kLanes) {
      store_fp8(qg + p * kWidth, load_floats<kWidth>(xg + p * kWidth), s);
    }
  }
}

template <int kWidth, int kLanes>
__global__ void dequantize_per_token_kernel(Groups g, const Fp8* q, const float* scales, float* x) {
  const int lane = static_cast<int>(threadIdx.x % kLanes);
  const std::int64_t count = g.rows * g.per_row;
  for (std::int64_t sidx = grid_index() / kLanes; sidx < count; sidx += grid_stride() / kLanes) {
    const TokenGroup tg = token_group<kWidth>(g, sidx);
    const Floats<kWidth> s = uniform<kWidth>(scales[sidx]);
#pragma unroll 4
    for (std::int64_t p = lane; p < tg.packs; p += kLanes) {
      store_floats(x + tg.first + p * kWidth, load_fp8(q + tg.first + p * kWidth, s));
    }
  }
}

// ---- Per channel: one block per tile of `group` rows by kTilePacks packs ----
// Adjacent threads take adjacent packs of columns (coalesced rows); the block's
// kSlots = 256 / kTilePacks threads down a column take rows slot, slot + kSlots,
// ... and hold kRows of them in registers (taller groups read the rest twice).
// Column amax: shuffles between the lanes of a warp on the same pack, then the
// warps' partials in shared memory.

template <int kWidth, int kTilePacks>
struct ChannelTile {
  static constexpr int kSlots = kThreadsPerBlock / kTilePacks;
  std::int64_t r0, r1;  // rows of the group
  std::int64_t c;       // first column of this thread's pack
  bool active;          // the pack lies inside the matrix

  __device__ ChannelTile(const Groups& g, std::int64_t tile, std::int64_t across) {
    const std::int64_t rg = tile / across;
    r0 = rg * g.group;
    r1 = r0 + g.group < g.rows ? r0 + g.group : g.rows;
    c = ((tile - rg * across) * kTilePacks + threadIdx.x % kTilePacks) * kWidth;
    active = c < g.cols;
  }
  __device__ std::int64_t first_row() const { return r0 + threadIdx.x / kTilePacks; }
  __device__ std::int64_t scale_index(const Groups& g) const { return r0 / g.group * g.cols + c; }
};

template <int kWidth, int kTilePacks, int kRows>
__global__ void quantize_per_channel_kernel(Groups g, const float* x, float* scales, Fp8* q,
                                            std::int64_t tiles, std::int64_t across) {
  using Tile = ChannelTile<kWidth, kTilePacks>;
  constexpr int kWarps = kThreadsPerBlock / kWarp;
  __shared__ Floats<kWidth> partial[kWarps][kTilePacks];
  const unsigned int lane = threadIdx.x % kWarp;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const Tile t(g, tile, across);
    const std::int64_t first = t.first_row();
    Floats<kWidth> v[kRows];
    Floats<kWidth> amax = uniform<kWidth>(0.0F);
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const std::int64_t r = first + i * Tile::kSlots;
      v[i] =
          t.active && r < t.r1 ? load_floats<kWidth>(x + r * g.cols + t.c) : uniform<kWidth>(0.0F);
#pragma unroll
      for (int j = 0; j < kWidth; ++j) amax.v[j] = fmaxf(amax.v[j], fabsf(v[i].v[j]));
    }
    for (std::int64_t r = first + kRows * Tile::kSlots; t.active && r < t.r1; r += Tile::kSlots) {
      const Floats<kWidth> w = load_floats<kWidth>(x + r * g.cols + t.c);
#pragma unroll
      for (int j = 0; j < kWidth; ++j) amax.v[j] = fmaxf(amax.v[j], fabsf(w.v[j]));
    }
#pragma unroll
    for (int j = 0; j < kWidth; ++j) {
#pragma unroll
      for (int offset = kTilePacks; offset < kWarp; offset *= 2) {
        amax.v[j] = fmaxf(amax.v[j], __shfl_xor_sync(0xFFFFFFFFU, amax.v[j], offset));
      }
    }
    if (lane < kTilePacks) partial[threadIdx.x / kWarp][lane] = amax;
    __syncthreads();
    Floats<kWidth> s = partial[0][threadIdx.x % kTilePacks];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) {
#pragma unroll
      for (int j = 0; j < kWidth; ++j) {
        s.v[j] = fmaxf(s.v[j], partial[w][threadIdx.x % kTilePacks].v[j]);
      }
    }
#pragma unroll
    for (int j = 0; j < kWidth; ++j) s.v[j] = scale_of_amax(s.v[j]);
    if (t.active && first == t.r0) {
#pragma unroll
      for (int j = 0; j < kWidth; ++j) scales[t.scale_index(g) + j] = s.v[j];
    }
#pragma unroll
    for (int i = 0; i < kRows; ++i) {
      const std::int64_t r = first + i * Tile::kSlots;
      if (t.active && r < t.r1) store_fp8(q + r * g.cols + t.c, v[i], s);
    }
    for (std::int64_t r = first + kRows * Tile::kSlots; t.active && r < t.r1; r += Tile::kSlots) {
      store_fp8(q + r * g.cols + t.c, load_floats<kWidth>(x + r * g.cols + t.c), s);
    }
    __syncthreads();  // `partial` is reused by the next tile
  }
}

template <int kWidth, int kTilePacks>
__global__ void dequantize_per_channel_kernel(Groups g, const Fp8* q, const float* scales, float* x,
                                              std::int64_t tiles, std::int64_t across) {
  using Tile = ChannelTile<kWidth, kTilePacks>;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const Tile t(g, tile, across);
    if (!t.active) continue;
    Floats<kWidth> s;
#pragma unroll
    for (int j = 0; j < kWidth; ++j) s.v[j] = scales[t.scale_index(g) + j];
#pragma unroll 4
    for (std::int64_t r = t.first_row(); r < t.r1; r += Tile::kSlots) {
      store_floats(x + r * g.cols + t.c, load_fp8(q + r * g.cols + t.c, s));
    }
  }
}

// Launch shapes: per token, 8 lanes x 4 packs of 4 (or 32 lanes x 4 elements) hold
// a 128-element group; per channel, tiles of 64 columns (16 packs x 16 rows at a
// time, 8 rows a thread) or 32 columns (32 x 8 rows, 16 a thread) hold 128 rows.
constexpr int kTokenLanes4 = 8;
constexpr int kTokenLanes1 = 32;
constexpr int kTokenPacks = 4;
constexpr int kChannelPacks4 = 16;
constexpr int kChannelPacks1 = 32;
constexpr int kChannelRows4 = 8;
constexpr int kChannelRows1 = 16;

unsigned int blocks_of(std::int64_t tiles) {
  return static_cast<unsigned int>(tiles < 65535 ? tiles : 65535);
}

template <int kWidth, int kTilePacks>
std::int64_t tiles_across(const Groups& g) {
  return (g.cols + kTilePacks * kWidth - 1) / (kTilePacks * kWidth);
}

template <int kWidth, int kLanes, int kTilePacks, int kRows>
void quantize(const QuantShape& s, const Groups& g, const float* x, Fp8* q, float* scales,
              cudaStream_t stream) {
  if (s.scaling == QuantScaling::per_token) {
    quantize_per_token_kernel<kWidth, kLanes, kTokenPacks>
        <<<blocks_for(g.rows * g.per_row * kLanes), kThreadsPerBlock, 0, stream>>>(g, x, scales, q);
  } else {
    const std::int64_t across = tiles_across<kWidth, kTilePacks>(g);
    const std::int64_t tiles = (g.rows + g.group - 1) / g.group * across;
    quantize_per_channel_kernel<kWidth, kTilePacks, kRows>
        <<<blocks_of(tiles), kThreadsPerBlock, 0, stream>>>(g, x, scales, q, tiles, across);
  }
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

template <int kWidth, int kLanes, int kTilePacks>
void dequantize(const QuantShape& s, const Groups& g, const Fp8* q, const float* scales, float* x,
                cudaStream_t stream) {
  if (s.scaling == QuantScaling::per_token) {
    dequantize_per_token_kernel<kWidth, kLanes>
        <<<blocks_for(g.rows * g.per_row * kLanes), kThreadsPerBlock, 0, stream>>>(g, q, scales, x);
  } else {
    const std::int64_t across = tiles_across<kWidth, kTilePacks>(g);
    const std::int64_t tiles = (g.rows + g.group - 1) / g.group * across;
    dequantize_per_channel_kernel<kWidth, kTilePacks>
        <<<blocks_of(tiles), kThreadsPerBlock, 0, stream>>>(g, q, scales, x, tiles, across);
  }
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

// ---- bf16: 8 elements a thread per step, two 16-byte float loads and one 16-byte
// bf16 store (or the reverse), grid-stride; the tail and unaligned views one by one.

constexpr int kBf16Pack = 8;

__device__ std::uint32_t bf16_pair(float lo, float hi) {
  return static_cast<std::uint32_t>(__bfloat16_as_ushort(__float2bfloat16_rn(lo))) |
         static_cast<std::uint32_t>(__bfloat16_as_ushort(__float2bfloat16_rn(hi))) << 16U;
}

// bf16 to fp32 is exact: the 16 bits on top of a float.
__device__ float bf16_low(std::uint32_t pair) { return __uint_as_float(pair << 16U); }
__device__ float bf16_high(std::uint32_t pair) { return __uint_as_float(pair & 0xFFFF0000U); }

__global__ void to_bf16_kernel(const float* x, __nv_bfloat16* q, std::int64_t n,
                               std::int64_t packs) {
  for (std::int64_t k = grid_index(); k < packs; k += grid_stride()) {
    const float4 a = reinterpret_cast<const float4*>(x)[2 * k];
    const float4 b = reinterpret_cast<const float4*>(x)[2 * k + 1];
    reinterpret_cast<uint4*>(q)[k] = make_uint4(bf16_pair(a.x, a.y), bf16_pair(a.z, a.w),
                                                bf16_pair(b.x, b.y), bf16_pair(b.z, b.w));
  }
  for (std::int64_t i = packs * kBf16Pack + grid_index(); i < n; i += grid_stride()) {
    q[i] = __float2bfloat16_rn(x[i]);
  }
}

__global__ void from_bf16_kernel(const __nv_bfloat16* q, float* x, std::int64_t n,
                                 std::int64_t packs) {
  for (std::int64_t k = grid_index(); k < packs; k += grid_stride()) {
    const uint4 u = reinterpret_cast<const uint4*>(q)[k];
    reinterpret_cast<float4*>(x)[2 * k] =
        make_float4(bf16_low(u.x), bf16_high(u.x), bf16_low(u.y), bf16_high(u.y));
    reinterpret_cast<float4*>(x)[2 * k + 1] =
        make_float4(bf16_low(u.z), bf16_high(u.z), bf16_low(u.w), bf16_high(u.w));
  }
  for (std::int64_t i = packs * kBf16Pack + grid_index(); i < n; i += grid_stride()) {
    x[i] = __bfloat162float(q[i]);
  }
}

std::int64_t bf16_packs(const void* a, const void* b, std::int64_t n) {
  return aligned(a, 16) && aligned(b, 16) ? n / kBf16Pack : 0;
}

}  // namespace

void quantize_fp8_cuda(const QuantShape& s, const float* x, Fp8E4M3* q, float* scales,
                       cudaStream_t stream) {
  static_assert(sizeof(Fp8E4M3) == sizeof(Fp8), "Fp8E4M3 stores one byte");
  const Groups g = groups_of(s);
  Fp8* dq = reinterpret_cast<Fp8*>(q);
  if (four_wide(s, x, q)) {
    quantize<4, kTokenLanes4, kChannelPacks4, kChannelRows4>(s, g, x, dq, scales, stream);
  } else {
    quantize<1, kTokenLanes1, kChannelPacks1, kChannelRows1>(s, g, x, dq, scales, stream);
  }
}

void dequantize_fp8_cuda(const QuantShape& s, const Fp8E4M3* q, const float* scales, float* x,
                         cudaStream_t stream) {
  const Groups g = groups_of(s);
  const Fp8* dq = reinterpret_cast<const Fp8*>(q);
  if (four_wide(s, x, q)) {
    dequantize<4, kTokenLanes4, kChannelPacks4>(s, g, dq, scales, x, stream);
  } else {
    dequantize<1, kTokenLanes1, kChannelPacks1>(s, g, dq, scales, x, stream);
  }
}

void quantize_bf16_cuda(const float* x, Bf16* q, std::int64_t n, cudaStream_t stream) {
  static_assert(sizeof(Bf16) == sizeof(__nv_bfloat16), "Bf16 stores the bits of a bfloat16");
  if (n <= 0) return;
  const std::int64_t packs = bf16_packs(x, q, n);
  to_bf16_kernel<<<blocks_for(packs > 0 ? packs : n), kThreadsPerBlock, 0, stream>>>(
      x, reinterpret_cast<__nv_bfloat16*>(q), n, packs);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void dequantize_bf16_cuda(const Bf16* q, float* x, std::int64_t n, cudaStream_t stream) {
  if (n <= 0) return;
  const std::int64_t packs = bf16_packs(x, q, n);
  from_bf16_kernel<<<blocks_for(packs > 0 ? packs : n), kThreadsPerBlock, 0, stream>>>(
      reinterpret_cast<const __nv_bfloat16*>(q), x, n, packs);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

}  // namespace myriad::kernels::ops
