// Attention forward on tensor cores: the FlashAttention-2 algorithm on
// mma.sync.m16n8k16 (bf16 in, fp32 accumulate), sm_80 and later.
//
// A block of 4 warps takes 64 query rows of one (batch, head); each warp 16 of
// them, its Q fragments in registers for the whole pass. Key and value tiles of
// 64 rows are staged in shared memory by all 128 threads, 16 bytes a load: K as
// it is (row-major, padded by 8 elements so that the 8 rows a fragment reads
// fall in different banks), V transposed (Vt[dim][key]), so that both operands
// of both products are read as 32-bit pairs. Per tile a warp computes
// S = Q K^T (16 x 64), masks it (causal, window, past the sequence), updates its
// running row maxima and sums in the log2 domain (exp2), and multiplies P,
// rounded to bf16 in registers, by V: the S accumulators are laid out as the A
// operand of the next product, so P never leaves registers. The output is
// divided by the row sums once, at the end, and the log-sum-exp saved (natural
// log, as the CPU backend's).
//
// Fragment layouts (PTX ISA, mma.m16n8k16, .row.col): lane = 4 g + t.
//   A (16 x 16): a0 (row g, cols 2t, 2t+1), a1 (row g+8, same), a2 (row g,
//                cols 2t+8, 2t+9), a3 (row g+8, same); two bf16 per register,
//                the lower column in the lower half.
//   B (16 x 8):  b0 (rows 2t, 2t+1, col g), b1 (rows 2t+8, 2t+9, col g).
//   C (16 x 8):  c0, c1 (row g, cols 2t, 2t+1), c2, c3 (row g+8, same).
#include <cuda_bf16.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/attention_mma.hpp"
#include "kernels/ops/storage.cuh"
#include "kernels/ops/vector_map.cuh"

namespace myriad::kernels::ops {
namespace {

constexpr int kWarps = 4;
constexpr int kBlockM = 16 * kWarps;  // query rows a block
constexpr int kBlockN = 64;           // keys a tile
constexpr int kPad = 8;               // bf16 elements of padding a shared row
constexpr float kLog2e = 1.4426950408889634F;
constexpr float kLn2 = 0.6931471805599453F;

__device__ inline void mma_bf16(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0,
                                std::uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ inline std::uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const std::uint32_t*>(&v);
}

__device__ inline std::uint32_t load_pair(const __nv_bfloat16* p) {
  return *reinterpret_cast<const std::uint32_t*>(p);
}

// Keys [first, last) query i may see, as attention.cpp's key_range.
struct KeyRange {
  std::int64_t first, last;
};
__device__ inline KeyRange key_range(const AttentionShape& s, std::int64_t i) {
  std::int64_t first = 0;
  std::int64_t last = s.causal ? i + 1 : s.seq;
  if (s.window > 0) {
    first = i - s.window + 1 > 0 ? i - s.window + 1 : 0;
    if (!s.causal) last = i + s.window < s.seq ? i + s.window : s.seq;
  }
  return {first, last};
}

template <int D>
__global__ void __launch_bounds__(kWarps * 32)
    mma_forward_kernel(AttentionShape s, float scale_log2, const __nv_bfloat16* q,
                       const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                       float* lse) {
  constexpr int kSteps = D / 16;  // k-steps of Q K^T
  constexpr int kTiles = D / 8;   // n-tiles of the output
  __shared__ __align__(16) __nv_bfloat16 ks[kBlockN][D + kPad];
  __shared__ __align__(16) __nv_bfloat16 vt[D][kBlockN + kPad];

  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4;
  const int t = lane % 4;
  const std::int64_t b = blockIdx.z, h = blockIdx.y;
  const std::int64_t hk = h / (s.q_heads / s.kv_heads);
  const std::int64_t q0 = static_cast<std::int64_t>(blockIdx.x) * kBlockM;
  const std::int64_t row[2] = {q0 + warp * 16 + g, q0 + warp * 16 + g + 8};
  const __nv_bfloat16* qh = q + (b * s.q_heads + h) * s.seq * D;
  const __nv_bfloat16* kh = k + (b * s.kv_heads + hk) * s.seq * D;
  const __nv_bfloat16* vh = v + (b * s.kv_heads + hk) * s.seq * D;

  // Q fragments, zero past the sequence.
  std::uint32_t qa[kSteps][4];
#pragma unroll
  for (int kk = 0; kk < kSteps; ++kk) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {  // a0/a1: cols 2t; a2/a3: cols 2t + 8
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int col = kk * 16 + 2 * t + 8 * half;
        qa[kk][2 * half + r] = row[r] < s.seq ? load_pair(qh + row[r] * D + col) : 0U;
      }
    }
  }

  float acc[kTiles][4];
#pragma unroll
  for (int n = 0; n < kTiles; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0F;
  float m[2] = {-INFINITY, -INFINITY};  // running maxima, log2 domain
  float l[2] = {0.0F, 0.0F};            // running sums, this thread's columns

  // The keys any row of the block may see.
  const std::int64_t last_row = q0 + kBlockM - 1 < s.seq ? q0 + kBlockM - 1 : s.seq - 1;
  const std::int64_t first_key = key_range(s, q0).first;
  const std::int64_t last_key = key_range(s, last_row).last;
  const KeyRange range[2] = {key_range(s, row[0]), key_range(s, row[1])};

  for (std::int64_t n0 = first_key / kBlockN * kBlockN; n0 < last_key; n0 += kBlockN) {
    // Stage the tile: K as it is, V transposed; rows past the sequence are zeros.
    constexpr int kChunks = kBlockN * D / 8;
    for (int c = static_cast<int>(threadIdx.x); c < kChunks; c += kWarps * 32) {
      const int r = c / (D / 8);
      const int col = (c % (D / 8)) * 8;
      Pack<__nv_bfloat16> kp{};
      Pack<__nv_bfloat16> vp{};
      if (n0 + r < s.seq) {
        kp = *reinterpret_cast<const Pack<__nv_bfloat16>*>(kh + (n0 + r) * D + col);
        vp = *reinterpret_cast<const Pack<__nv_bfloat16>*>(vh + (n0 + r) * D + col);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) kp.v[e] = vp.v[e] = __float2bfloat16_rn(0.0F);
      }
      *reinterpret_cast<Pack<__nv_bfloat16>*>(&ks[r][col]) = kp;
#pragma unroll
      for (int e = 0; e < 8; ++e) vt[col + e][r] = vp.v[e];
    }
    __syncthreads();

    // S = Q K^T for this warp's 16 rows and the tile's 64 keys.
    float sc[kBlockN / 8][4];
#pragma unroll
    for (int n = 0; n < kBlockN / 8; ++n) {
      sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0.0F;
#pragma unroll
      for (int kk = 0; kk < kSteps; ++kk) {
        const __nv_bfloat16* kr = &ks[n * 8 + g][kk * 16 + 2 * t];
        mma_bf16(sc[n], qa[kk], load_pair(kr), load_pair(kr + 8));
      }
    }
    // Mask, scale into the log2 domain, and the tile's row maxima.
    float tile_max[2] = {-INFINITY, -INFINITY};
#pragma unroll
    for (int n = 0; n < kBlockN / 8; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int r = e / 2;
        const std::int64_t key = n0 + n * 8 + 2 * t + (e % 2);
        const bool seen = key >= range[r].first && key < range[r].last && key < s.seq;
        sc[n][e] = seen ? sc[n][e] * scale_log2 : -INFINITY;
        tile_max[r] = fmaxf(tile_max[r], sc[n][e]);
      }
    }
    float correction[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      // The four lanes of a row group hold its 64 columns between them.
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffU, tile_max[r], 1));
      tile_max[r] = fmaxf(tile_max[r], __shfl_xor_sync(0xffffffffU, tile_max[r], 2));
      const float m_new = fmaxf(m[r], tile_max[r]);
      // A row that has seen no key yet keeps a base of 0: no -inf - -inf.
      const float base = m_new == -INFINITY ? 0.0F : m_new;
      correction[r] = exp2f(m[r] - base);  // 0 when m was -inf
      m[r] = m_new;
      l[r] *= correction[r];
#pragma unroll
      for (int n = 0; n < kBlockN / 8; ++n) {
        sc[n][2 * r] = exp2f(sc[n][2 * r] - base);
        sc[n][2 * r + 1] = exp2f(sc[n][2 * r + 1] - base);
        l[r] += sc[n][2 * r] + sc[n][2 * r + 1];
      }
    }
#pragma unroll
    for (int n = 0; n < kTiles; ++n) {
      acc[n][0] *= correction[0];
      acc[n][1] *= correction[0];
      acc[n][2] *= correction[1];
      acc[n][3] *= correction[1];
    }
    // O += P V: P's accumulators are the A operand, 16 keys a step.
#pragma unroll
    for (int kt = 0; kt < kBlockN / 16; ++kt) {
      const std::uint32_t pa[4] = {pack_bf16(sc[2 * kt][0], sc[2 * kt][1]),
                                   pack_bf16(sc[2 * kt][2], sc[2 * kt][3]),
                                   pack_bf16(sc[2 * kt + 1][0], sc[2 * kt + 1][1]),
                                   pack_bf16(sc[2 * kt + 1][2], sc[2 * kt + 1][3])};
#pragma unroll
      for (int n = 0; n < kTiles; ++n) {
        const __nv_bfloat16* vr = &vt[n * 8 + g][kt * 16 + 2 * t];
        mma_bf16(acc[n], pa, load_pair(vr), load_pair(vr + 8));
      }
    }
    __syncthreads();  // the next tile overwrites ks and vt
  }

  // Row sums over the group's lanes, the output divided once, the log-sum-exp.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffU, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffU, l[r], 2);
    if (row[r] >= s.seq) continue;
    const float inv = l[r] > 0.0F ? 1.0F / l[r] : 0.0F;
    __nv_bfloat16* out = o + ((b * s.q_heads + h) * s.seq + row[r]) * D;
#pragma unroll
    for (int n = 0; n < kTiles; ++n) {
      *reinterpret_cast<std::uint32_t*>(out + n * 8 + 2 * t) =
          pack_bf16(acc[n][2 * r] * inv, acc[n][2 * r + 1] * inv);
    }
    if (t == 0) lse[(b * s.q_heads + h) * s.seq + row[r]] = m[r] * kLn2 + logf(l[r]);
  }
}

template <int D>
void launch(const AttentionShape& s, const __nv_bfloat16* q, const __nv_bfloat16* k,
            const __nv_bfloat16* v, __nv_bfloat16* o, float* lse, cudaStream_t stream) {
  const float scale = s.scale != 0.0F ? s.scale : 1.0F / sqrtf(static_cast<float>(D));
  const dim3 grid(static_cast<unsigned int>((s.seq + kBlockM - 1) / kBlockM),
                  static_cast<unsigned int>(s.q_heads), static_cast<unsigned int>(s.batch));
  mma_forward_kernel<D><<<grid, kWarps * 32, 0, stream>>>(s, scale * kLog2e, q, k, v, o, lse);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

std::string attention_mma_can_implement(const AttentionShape& s) {
  std::string why = attention_can_implement(s);
  if (!why.empty()) return why;
  if (s.head_dim != 64 && s.head_dim != 128)
    return "the tensor-core kernel takes head_dim 64 or 128";
  if (s.batch > 65535 || s.q_heads > 65535) return "batch and heads must be at most 65535 each";
  if ((s.seq + kBlockM - 1) / kBlockM > 2147483647LL) return "sequence too long";
  return "";
}

void attention_forward_mma_cuda(const AttentionShape& s, const Bf16* q, const Bf16* k,
                                const Bf16* v, Bf16* o, float* lse, cudaStream_t stream) {
  const std::string why = attention_mma_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("attention_mma_cuda: " + why);
  for (const void* p : {static_cast<const void*>(q), static_cast<const void*>(k),
                        static_cast<const void*>(v), static_cast<const void*>(o)}) {
    if (!aligned16(p))
      throw std::invalid_argument("attention_mma_cuda: tensors must be 16-byte aligned");
  }
  if (s.head_dim == 64) {
    launch<64>(s, device_ptr(q), device_ptr(k), device_ptr(v), device_ptr(o), lse, stream);
  } else {
    launch<128>(s, device_ptr(q), device_ptr(k), device_ptr(v), device_ptr(o), lse, stream);
  }
}

}  // namespace myriad::kernels::ops
