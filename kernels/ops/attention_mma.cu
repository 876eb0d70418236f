// Attention forward on tensor cores: the FlashAttention-2 algorithm on
// mma.sync.m16n8k16 (bf16 in, fp32 accumulate), sm_80 and later.
//
// A block of 4 warps takes 64 query rows of one (batch, head); each warp 16 of
// them, its Q fragments in registers for the whole pass. Key and value tiles of
// 64 rows are staged in shared memory by all 128 threads with cp.async, 16 bytes
// a copy, in two stages (the next tile loads while this one is computed on),
// row-major, padded by 8 elements so that the 8 rows a fragment reads
// fall in different banks: K's B fragments (of K^T) are 32-bit pairs of a row,
// V's (of V itself) come transposed by ldmatrix.trans, where a transposed copy
// staged element by element cost 8 conflicting 2-byte stores a 16-byte load. Per
// tile a warp computes
// S = Q K^T (16 x 64), masks it (causal, window, past the sequence), updates its
// running row maxima and sums in the log2 domain (exp2), and multiplies P,
// rounded to bf16 in registers, by V: the S accumulators are laid out as the A
// operand of the next product, so P never leaves registers. The output is
// divided by the row sums once, at the end, and the log-sum-exp saved (natural
// log, as the CPU backend's).
//
// Fragment layouts: mma_fragments.cuh.
#include <cuda_bf16.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/attention_mma.hpp"
#include "kernels/ops/float_pack.cuh"
#include "kernels/ops/mma_fragments.cuh"
#include "kernels/ops/storage.cuh"

namespace myriad::kernels::ops {
namespace {

constexpr int kWarps = 4;
constexpr int kBlockM = 16 * kWarps;  // query rows a block
constexpr int kBlockN = 64;           // keys a tile
using mma::key_range;
using mma::KeyRange;
using mma::kLn2;
using mma::kLog2e;
using mma::kPad;
using mma::load_pair;
using mma::mma_bf16;

template <int D>
__global__ void __launch_bounds__(kWarps * 32)
    mma_forward_kernel(AttentionShape s, float scale_log2, const __nv_bfloat16* q,
                       const __nv_bfloat16* k, const __nv_bfloat16* v, __nv_bfloat16* o,
                       float* lse) {
  constexpr int kSteps = D / 16;       // k-steps of Q K^T
  constexpr int kTiles = D / 8;        // n-tiles of the output
  constexpr int kS = D + kPad;         // shared row stride
  constexpr int kTile = kBlockN * kS;  // elements of a K or a V tile
  extern __shared__ __align__(16) unsigned char shared[];
  __nv_bfloat16* tiles = reinterpret_cast<__nv_bfloat16*>(shared);  // K, V; K, V: two stages

  const auto [warp, lane, g, t] = mma::this_lane();
  const std::int64_t b = blockIdx.z, h = blockIdx.y;
  const std::int64_t hk = h / (s.q_heads / s.kv_heads);
  const std::int64_t q0 = static_cast<std::int64_t>(blockIdx.x) * kBlockM;
  const std::int64_t row[2] = {q0 + warp * 16 + g, q0 + warp * 16 + g + 8};
  const __nv_bfloat16* qh = q + (b * s.q_heads + h) * s.seq * D;
  const __nv_bfloat16* kh = k + (b * s.kv_heads + hk) * s.seq * D;
  const __nv_bfloat16* vh = v + (b * s.kv_heads + hk) * s.seq * D;

  // Q fragments, zero past the sequence.
  std::uint32_t qa[kSteps][4];
  mma::load_rows_as_a<D>(qa, qh, row, s.seq, t);

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

  // Tiles in two stages: the next tile's K and V load (cp.async) while this one
  // is computed on. Rows past the sequence are zeros.
  const auto stage = [&](std::int64_t n0, int buffer) {
    mma::stage_rows_async<D, kBlockN, kWarps * 32>(tiles + 2 * buffer * kTile, kh, n0, s.seq);
    mma::stage_rows_async<D, kBlockN, kWarps * 32>(tiles + (2 * buffer + 1) * kTile, vh, n0, s.seq);
    mma::cp_async_commit();
  };
  const std::int64_t first_tile = first_key / kBlockN * kBlockN;
  if (first_tile < last_key) stage(first_tile, 0);
  int buffer = 0;
  for (std::int64_t n0 = first_tile; n0 < last_key; n0 += kBlockN, buffer ^= 1) {
    mma::begin_stage(n0 + kBlockN < last_key, [&] { stage(n0 + kBlockN, buffer ^ 1); });
    const __nv_bfloat16* ks = tiles + 2 * buffer * kTile;
    const __nv_bfloat16* vs = ks + kTile;

    // S = Q K^T for this warp's 16 rows and the tile's 64 keys.
    float sc[kBlockN / 8][4];
#pragma unroll
    for (int n = 0; n < kBlockN / 8; ++n) {
      sc[n][0] = sc[n][1] = sc[n][2] = sc[n][3] = 0.0F;
#pragma unroll
      for (int kk = 0; kk < kSteps; ++kk) {
        const __nv_bfloat16* kr = ks + (n * 8 + g) * kS + kk * 16 + 2 * t;
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
    mma::add_product(acc, sc, vs, kS, lane);
    __syncthreads();  // the tile after next overwrites this buffer
  }

  // Row sums over the group's lanes, the output divided once, the log-sum-exp.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffU, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffU, l[r], 2);
    if (row[r] >= s.seq) continue;
    const float inv = l[r] > 0.0F ? 1.0F / l[r] : 0.0F;
    mma::store_row(o + ((b * s.q_heads + h) * s.seq + row[r]) * D, acc, r, t, inv);
    if (t == 0) lse[(b * s.q_heads + h) * s.seq + row[r]] = m[r] * kLn2 + logf(l[r]);
  }
}

template <int D>
void launch(const AttentionShape& s, const __nv_bfloat16* q, const __nv_bfloat16* k,
            const __nv_bfloat16* v, __nv_bfloat16* o, float* lse, cudaStream_t stream) {
  const float scale = s.scale != 0.0F ? s.scale : 1.0F / sqrtf(static_cast<float>(D));
  const dim3 grid(static_cast<unsigned int>((s.seq + kBlockM - 1) / kBlockM),
                  static_cast<unsigned int>(s.q_heads), static_cast<unsigned int>(s.batch));
  // Two stages of K and V tiles: 68 KiB at head dim 128, past the 48 KiB a
  // launch gets by default; set on every launch, as it holds for the current device.
  constexpr int kShared = 4 * kBlockN * (D + kPad) * 2;
  MYRIAD_CUDA_CHECK(cudaFuncSetAttribute(mma_forward_kernel<D>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, kShared));
  mma_forward_kernel<D><<<grid, kWarps * 32, kShared, stream>>>(s, scale * kLog2e, q, k, v, o, lse);
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
    if (!aligned(p, 16))
      throw std::invalid_argument("attention_mma_cuda: tensors must be 16-byte aligned");
  }
  if (s.head_dim == 64) {
    launch<64>(s, device_ptr(q), device_ptr(k), device_ptr(v), device_ptr(o), lse, stream);
  } else {
    launch<128>(s, device_ptr(q), device_ptr(k), device_ptr(v), device_ptr(o), lse, stream);
  }
}

}  // namespace myriad::kernels::ops
