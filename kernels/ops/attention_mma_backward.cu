// Attention backward on tensor cores: the FlashAttention-2 backward on
// mma.sync.m16n8k16 (bf16 in, fp32 accumulate), sm_80 and later, in three
// deterministic kernels, no atomics:
//
// 1. delta[i] = rowsum(dO_i * O_i), fp32, one warp a row.
// 2. dK, dV: a block of 4 warps owns 64 keys of one (batch, kv head), K and V
//    staged once in shared memory, each warp 16 of them with its dK and dV rows
//    in registers. It walks every query tile that may see its keys, of each q
//    head that reads this kv head (GQA sums there, in head order), staging Q and
//    dO row-major, the tile's log-sum-exp and delta, in two stages (cp.async:
//    the next tile loads while this one is computed on). Per tile a warp recomputes
//    S^T = K Q^T and dP^T = V dO^T (16 keys by the tile's queries), forms
//    P^T = exp(S^T scale - lse) and dS^T = P^T (dP^T - delta) in registers, and
//    adds P^T dO to dV and dS^T Q to dK, P^T and dS^T rounded to bf16 as the A
//    operands, dO and Q read as B operands by ldmatrix.trans.
// 3. dQ: a block owns 64 queries of one (batch, q head), each warp 16 with Q
//    and dO fragments in registers; per key tile (two stages, as above) it
//    recomputes S and dP and adds dS K to dQ.
//
// FlashAttention-2 accumulates dQ by atomic adds from the dK/dV pass, which
// computes S and dP once; here the dQ pass computes them again (7 products of a
// tile where FA2 has 5) so that the result does not depend on the order the
// blocks run in. Query tiles are 32 rows at head dim 128 (64 at 64), so that the
// dK and dV accumulators (2 x 64 registers a thread) leave room for the tile's
// products. Fragment layouts: mma_fragments.cuh.
#include <cuda_bf16.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/attention_mma.hpp"
#include "kernels/ops/float_pack.cuh"
#include "kernels/ops/launch.cuh"
#include "kernels/ops/mma_fragments.cuh"
#include "kernels/ops/storage.cuh"

namespace myriad::kernels::ops {
namespace {

using mma::kLog2e;
using mma::kPad;
using mma::load_pair;
using mma::mma_bf16;

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kRows = 16 * kWarps;  // keys (dK, dV) or queries (dQ) a block owns

// The rows of the other side a step takes: queries (dK, dV), keys (dQ).
template <int D>
constexpr int kStep = D == 128 ? 32 : 64;

template <int D>
__global__ void delta_kernel(std::int64_t rows, const __nv_bfloat16* o, const __nv_bfloat16* d_o,
                             float* delta) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t warps = grid_stride() / 32;
  for (std::int64_t r = grid_index() / 32; r < rows; r += warps) {
    float sum = 0.0F;
    for (int c = lane; c < D; c += 32) {
      sum += __bfloat162float(o[r * D + c]) * __bfloat162float(d_o[r * D + c]);
    }
#pragma unroll
    for (int m = 16; m > 0; m /= 2) sum += __shfl_xor_sync(0xffffffffU, sum, m);
    if (lane == 0) delta[r] = sum;
  }
}

// Shared memory of the dK/dV kernel: K, V (kRows rows), then two stages of Q,
// dO (a step's rows), all [rows][D + kPad], then two stages of the step's
// log-sum-exp (log2 domain) and delta.
template <int D>
constexpr int dkdv_shared_bytes() {
  return (2 * kRows + 4 * kStep<D>)*(D + kPad) * 2 + 4 * kStep<D> * 4;
}

template <int D>
__global__ void __launch_bounds__(kThreads)
    dkdv_kernel(AttentionShape s, float scale, float scale_log2, const __nv_bfloat16* q,
                const __nv_bfloat16* k, const __nv_bfloat16* v, const __nv_bfloat16* d_o,
                const float* lse, const float* delta, __nv_bfloat16* dk, __nv_bfloat16* dv) {
  constexpr int kQ = kStep<D>;
  constexpr int kS = D + kPad;     // shared row stride
  constexpr int kSteps = D / 16;   // k-steps over the head dimension
  constexpr int kQTiles = kQ / 8;  // n-tiles over a step's queries
  constexpr int kDTiles = D / 8;   // n-tiles over the head dimension
  extern __shared__ __align__(16) unsigned char shared[];
  __nv_bfloat16* ks = reinterpret_cast<__nv_bfloat16*>(shared);
  __nv_bfloat16* vs = ks + kRows * kS;
  __nv_bfloat16* q_stages = vs + kRows * kS;                             // per stage: Q, dO
  float* row_stages = reinterpret_cast<float*>(q_stages + 4 * kQ * kS);  // per stage: lse2, delta

  const auto [warp, lane, g, t] = mma::this_lane();
  const int m0 = warp * 16;  // this warp's keys in ks and vs
  const std::int64_t b = blockIdx.z, hk = blockIdx.y;
  const std::int64_t group = s.q_heads / s.kv_heads;
  const std::int64_t k0 = static_cast<std::int64_t>(blockIdx.x) * kRows;
  const std::int64_t key[2] = {k0 + m0 + g, k0 + m0 + g + 8};
  const std::int64_t kv = (b * s.kv_heads + hk) * s.seq * D;
  // K and V once, joining the first step's copies.
  mma::stage_rows_async<D, kRows, kThreads>(ks, k + kv, k0, s.seq);
  mma::stage_rows_async<D, kRows, kThreads>(vs, v + kv, k0, s.seq);

  float dk_acc[kDTiles][4];
  float dv_acc[kDTiles][4];
#pragma unroll
  for (int n = 0; n < kDTiles; ++n) {
#pragma unroll
    for (int e = 0; e < 4; ++e) dk_acc[n][e] = dv_acc[n][e] = 0.0F;
  }

  // Queries that may see a key of this block, a superset: the mask decides.
  const std::int64_t k_end = k0 + kRows < s.seq ? k0 + kRows : s.seq;
  std::int64_t first_q = 0;
  if (s.causal) {
    first_q = k0;
  } else if (s.window > 0) {
    first_q = k0 - s.window + 1 > 0 ? k0 - s.window + 1 : 0;
  }
  std::int64_t last_q = s.seq;
  if (s.window > 0 && k_end + s.window - 1 < s.seq) last_q = k_end + s.window - 1;

  // Steps: every query tile of every q head that reads this kv head (GQA), in
  // head order, in two stages: the next step's Q, dO, lse and delta load while
  // this one is computed on.
  const std::int64_t tiles = (last_q - first_q + kQ - 1) / kQ;
  const std::int64_t steps = group * tiles;
  const auto qrow_of = [&](std::int64_t i) {
    return (b * s.q_heads + hk * group + i / tiles) * s.seq;
  };
  const auto q0_of = [&](std::int64_t i) { return first_q + i % tiles * kQ; };
  const auto stage = [&](std::int64_t i, int buffer) {
    const std::int64_t qrow = qrow_of(i);  // the head's first row
    const std::int64_t q0 = q0_of(i);
    __nv_bfloat16* qs = q_stages + 2 * buffer * kQ * kS;
    mma::stage_rows_async<D, kQ, kThreads>(qs, q + qrow * D, q0, s.seq);
    mma::stage_rows_async<D, kQ, kThreads>(qs + kQ * kS, d_o + qrow * D, q0, s.seq);
    float* rows = row_stages + 2 * buffer * kQ;
    for (int j = static_cast<int>(threadIdx.x); j < kQ; j += kThreads) {
      const bool in = q0 + j < s.seq;
      rows[j] = in ? lse[qrow + q0 + j] * kLog2e : 0.0F;
      rows[kQ + j] = in ? delta[qrow + q0 + j] : 0.0F;
    }
    mma::cp_async_commit();
  };
  if (steps > 0) stage(0, 0);
  int buffer = 0;
  for (std::int64_t step = 0; step < steps; ++step, buffer ^= 1) {
    mma::begin_stage(step + 1 < steps, [&] { stage(step + 1, buffer ^ 1); });
    const std::int64_t q0 = q0_of(step);
    const __nv_bfloat16* qs = q_stages + 2 * buffer * kQ * kS;
    const __nv_bfloat16* dos = qs + kQ * kS;
    const float* lse2 = row_stages + 2 * buffer * kQ;
    const float* dlt = lse2 + kQ;

    // S^T = K Q^T and dP^T = V dO^T: this warp's 16 keys by the step's queries.
    float st[kQTiles][4];
    float dpt[kQTiles][4];
#pragma unroll
    for (int n = 0; n < kQTiles; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) st[n][e] = dpt[n][e] = 0.0F;
    }
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      std::uint32_t ka[4];
      std::uint32_t va[4];
      mma::load_a(ka, ks, kS, m0, kk * 16, g, t);
      mma::load_a(va, vs, kS, m0, kk * 16, g, t);
#pragma unroll
      for (int n = 0; n < kQTiles; ++n) {
        const __nv_bfloat16* qr = qs + (n * 8 + g) * kS + kk * 16 + 2 * t;
        const __nv_bfloat16* dr = dos + (n * 8 + g) * kS + kk * 16 + 2 * t;
        mma_bf16(st[n], ka, load_pair(qr), load_pair(qr + 8));
        mma_bf16(dpt[n], va, load_pair(dr), load_pair(dr + 8));
      }
    }
    // P^T and dS^T in place; masked and padded entries are 0.
#pragma unroll
    for (int n = 0; n < kQTiles; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = n * 8 + 2 * t + e % 2;  // the query, in the step
        const bool seen = mma::sees(s, q0 + i, key[e / 2]);
        const float p = seen ? exp2f(st[n][e] * scale_log2 - lse2[i]) : 0.0F;
        st[n][e] = p;
        dpt[n][e] = p * (dpt[n][e] - dlt[i]);
      }
    }
    // dV += P^T dO, dK += dS^T Q: 16 queries a k-step.
    mma::add_product(dv_acc, st, dos, kS, lane);
    mma::add_product(dk_acc, dpt, qs, kS, lane);
    __syncthreads();  // the step after next overwrites this stage
  }

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (key[r] >= s.seq) continue;
    mma::store_row(dk + kv + key[r] * D, dk_acc, r, t, scale);
    mma::store_row(dv + kv + key[r] * D, dv_acc, r, t, 1.0F);
  }
}

template <int D>
__global__ void __launch_bounds__(kThreads)
    dq_kernel(AttentionShape s, float scale, float scale_log2, const __nv_bfloat16* q,
              const __nv_bfloat16* k, const __nv_bfloat16* v, const __nv_bfloat16* d_o,
              const float* lse, const float* delta, __nv_bfloat16* dq) {
  constexpr int kK = kStep<D>;
  constexpr int kS = D + kPad;
  constexpr int kSteps = D / 16;
  constexpr int kKTiles = kK / 8;  // n-tiles over a step's keys
  constexpr int kDTiles = D / 8;
  __shared__ __align__(16) __nv_bfloat16 tiles[4 * kK * kS];  // K, V; K, V: two stages

  const auto [warp, lane, g, t] = mma::this_lane();
  const std::int64_t b = blockIdx.z, h = blockIdx.y;
  const std::int64_t hk = h / (s.q_heads / s.kv_heads);
  const std::int64_t q0 = static_cast<std::int64_t>(blockIdx.x) * kRows;
  const std::int64_t row[2] = {q0 + warp * 16 + g, q0 + warp * 16 + g + 8};
  const std::int64_t qrow = (b * s.q_heads + h) * s.seq;
  const __nv_bfloat16* qh = q + qrow * D;
  const __nv_bfloat16* doh = d_o + qrow * D;
  const __nv_bfloat16* kh = k + (b * s.kv_heads + hk) * s.seq * D;
  const __nv_bfloat16* vh = v + (b * s.kv_heads + hk) * s.seq * D;

  // Q and dO fragments, zero past the sequence; the rows' lse (log2) and delta.
  std::uint32_t qa[kSteps][4];
  std::uint32_t oa[kSteps][4];
  mma::load_rows_as_a<D>(qa, qh, row, s.seq, t);
  mma::load_rows_as_a<D>(oa, doh, row, s.seq, t);
  float lse2[2];
  float dlt[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    lse2[r] = row[r] < s.seq ? lse[qrow + row[r]] * kLog2e : 0.0F;
    dlt[r] = row[r] < s.seq ? delta[qrow + row[r]] : 0.0F;
  }

  float dq_acc[kDTiles][4];
#pragma unroll
  for (int n = 0; n < kDTiles; ++n)
    dq_acc[n][0] = dq_acc[n][1] = dq_acc[n][2] = dq_acc[n][3] = 0.0F;

  // The keys any row of the block may see.
  const std::int64_t last_row = q0 + kRows - 1 < s.seq ? q0 + kRows - 1 : s.seq - 1;
  const std::int64_t first_key = mma::key_range(s, q0).first;
  const std::int64_t last_key = mma::key_range(s, last_row).last;

  // Key tiles in two stages: the next one loads while this one is computed on.
  const auto stage = [&](std::int64_t n0, int buffer) {
    mma::stage_rows_async<D, kK, kThreads>(tiles + 2 * buffer * kK * kS, kh, n0, s.seq);
    mma::stage_rows_async<D, kK, kThreads>(tiles + (2 * buffer + 1) * kK * kS, vh, n0, s.seq);
    mma::cp_async_commit();
  };
  if (first_key < last_key) stage(first_key, 0);
  int buffer = 0;
  for (std::int64_t n0 = first_key; n0 < last_key; n0 += kK, buffer ^= 1) {
    mma::begin_stage(n0 + kK < last_key, [&] { stage(n0 + kK, buffer ^ 1); });
    const __nv_bfloat16* ks = tiles + 2 * buffer * kK * kS;
    const __nv_bfloat16* vs = ks + kK * kS;

    // S = Q K^T and dP = dO V^T: this warp's 16 queries by the tile's keys.
    float sc[kKTiles][4];
    float dp[kKTiles][4];
#pragma unroll
    for (int n = 0; n < kKTiles; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) sc[n][e] = dp[n][e] = 0.0F;
#pragma unroll
      for (int kk = 0; kk < kSteps; ++kk) {
        const __nv_bfloat16* kr = ks + (n * 8 + g) * kS + kk * 16 + 2 * t;
        const __nv_bfloat16* vr = vs + (n * 8 + g) * kS + kk * 16 + 2 * t;
        mma_bf16(sc[n], qa[kk], load_pair(kr), load_pair(kr + 8));
        mma_bf16(dp[n], oa[kk], load_pair(vr), load_pair(vr + 8));
      }
    }
    // dS = P (dP - delta) in place of dP.
#pragma unroll
    for (int n = 0; n < kKTiles; ++n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int r = e / 2;
        const bool seen = mma::sees(s, row[r], n0 + n * 8 + 2 * t + e % 2);
        const float p = seen ? exp2f(sc[n][e] * scale_log2 - lse2[r]) : 0.0F;
        dp[n][e] = p * (dp[n][e] - dlt[r]);
      }
    }
    // dQ += dS K: 16 keys a k-step, K read as B by ldmatrix.trans.
    mma::add_product(dq_acc, dp, ks, kS, lane);
    __syncthreads();  // the tile after next overwrites this stage
  }

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    if (row[r] >= s.seq) continue;
    mma::store_row(dq + (qrow + row[r]) * D, dq_acc, r, t, scale);
  }
}

template <int D>
void launch_backward(const AttentionShape& s, const __nv_bfloat16* q, const __nv_bfloat16* k,
                     const __nv_bfloat16* v, const __nv_bfloat16* o, const float* lse,
                     const __nv_bfloat16* d_o, __nv_bfloat16* dq, __nv_bfloat16* dk,
                     __nv_bfloat16* dv, float* delta, cudaStream_t stream) {
  const float scale = s.scale != 0.0F ? s.scale : 1.0F / sqrtf(static_cast<float>(D));
  const std::int64_t rows = s.batch * s.q_heads * s.seq;
  delta_kernel<D><<<blocks_for(rows * 32), kThreadsPerBlock, 0, stream>>>(rows, o, d_o, delta);
  MYRIAD_CUDA_CHECK(cudaGetLastError());

  const auto tiles = static_cast<unsigned int>((s.seq + kRows - 1) / kRows);
  constexpr int kShared = dkdv_shared_bytes<D>();
  // Past the 48 KiB a launch gets by default; set on every launch, as it holds
  // for the current device only.
  MYRIAD_CUDA_CHECK(
      cudaFuncSetAttribute(dkdv_kernel<D>, cudaFuncAttributeMaxDynamicSharedMemorySize, kShared));
  dkdv_kernel<D>
      <<<dim3(tiles, static_cast<unsigned int>(s.kv_heads), static_cast<unsigned int>(s.batch)),
         kThreads, kShared, stream>>>(s, scale, scale * kLog2e, q, k, v, d_o, lse, delta, dk, dv);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
  dq_kernel<D>
      <<<dim3(tiles, static_cast<unsigned int>(s.q_heads), static_cast<unsigned int>(s.batch)),
         kThreads, 0, stream>>>(s, scale, scale * kLog2e, q, k, v, d_o, lse, delta, dq);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void attention_backward_mma_cuda(const AttentionShape& s, const Bf16* q, const Bf16* k,
                                 const Bf16* v, const Bf16* o, const float* lse, const Bf16* do_,
                                 const AttentionCudaGradsBf16& grads, cudaStream_t stream) {
  const std::string why = attention_mma_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("attention_backward_mma_cuda: " + why);
  for (const void* p : {static_cast<const void*>(q), static_cast<const void*>(k),
                        static_cast<const void*>(v), static_cast<const void*>(o),
                        static_cast<const void*>(do_), static_cast<const void*>(grads.dq),
                        static_cast<const void*>(grads.dk), static_cast<const void*>(grads.dv)}) {
    if (!aligned(p, 16)) {
      throw std::invalid_argument("attention_backward_mma_cuda: tensors must be 16-byte aligned");
    }
  }
  if (s.head_dim == 64) {
    launch_backward<64>(s, device_ptr(q), device_ptr(k), device_ptr(v), device_ptr(o), lse,
                        device_ptr(do_), device_ptr(grads.dq), device_ptr(grads.dk),
                        device_ptr(grads.dv), grads.delta, stream);
  } else {
    launch_backward<128>(s, device_ptr(q), device_ptr(k), device_ptr(v), device_ptr(o), lse,
                         device_ptr(do_), device_ptr(grads.dq), device_ptr(grads.dk),
                         device_ptr(grads.dv), grads.delta, stream);
  }
}

}  // namespace myriad::kernels::ops
