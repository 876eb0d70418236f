// The pieces the tensor-core attention kernels (attention_mma.cu forward,
// attention_mma_backward.cu backward) share: mma.sync.m16n8k16 on bf16 with fp32
// accumulation, operand packing, and the keys a query may see.
//
// Fragment layouts (PTX ISA, mma.m16n8k16, .row.col): lane = 4 g + t.
//   A (16 x 16): a0 (row g, cols 2t, 2t+1), a1 (row g+8, same), a2 (row g,
//                cols 2t+8, 2t+9), a3 (row g+8, same); two bf16 per register,
//                the lower column in the lower half.
//   B (16 x 8):  b0 (rows 2t, 2t+1, col g), b1 (rows 2t+8, 2t+9, col g).
//   C (16 x 8):  c0, c1 (row g, cols 2t, 2t+1), c2, c3 (row g+8, same).
// So a row-major matrix in shared memory gives A fragments of itself and B
// fragments of its transpose as 32-bit pairs, and the accumulators of two
// adjacent n-tiles are, rounded to bf16, the A fragment of one 16-wide k-step.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/ops/attention_shape.hpp"

namespace myriad::kernels::ops::mma {

constexpr float kLog2e = 1.4426950408889634F;
constexpr float kLn2 = 0.6931471805599453F;
constexpr int kPad = 8;  // bf16 elements of padding a shared row: 8 rows, 8 bank groups

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

// The A fragment at (row m0, column k0) of a row-major matrix with `stride`
// elements a row.
__device__ inline void load_a(std::uint32_t (&a)[4], const __nv_bfloat16* x, int stride, int m0,
                              int k0, int g, int t) {
  a[0] = load_pair(x + (m0 + g) * stride + k0 + 2 * t);
  a[1] = load_pair(x + (m0 + g + 8) * stride + k0 + 2 * t);
  a[2] = load_pair(x + (m0 + g) * stride + k0 + 2 * t + 8);
  a[3] = load_pair(x + (m0 + g + 8) * stride + k0 + 2 * t + 8);
}

// A thread's place in a block of warps and in the fragments: lane = 4 g + t.
struct Lane {
  int warp, lane, g, t;
};
__device__ inline Lane this_lane() {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  return {static_cast<int>(threadIdx.x) / 32, lane, lane / 4, lane % 4};
}

// The A fragments of a warp's 16 rows of a [seq][D] matrix in global memory,
// every 16-column step: rows row[0] (g) and row[1] (g + 8), zero past the sequence.
template <int D>
__device__ inline void load_rows_as_a(std::uint32_t (&a)[D / 16][4], const __nv_bfloat16* x,
                                      const std::int64_t (&row)[2], std::int64_t seq, int t) {
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {  // a0/a1: cols 2t; a2/a3: cols 2t + 8
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int col = kk * 16 + 2 * t + 8 * half;
        a[kk][2 * half + r] = row[r] < seq ? load_pair(x + row[r] * D + col) : 0U;
      }
    }
  }
}

// k-step kt's A fragment from the accumulators c[n][4] of a 16-row product:
// n-tiles 2 kt and 2 kt + 1, rounded to bf16.
template <int kN>
__device__ inline void accumulators_as_a(std::uint32_t (&a)[4], const float (&c)[kN][4], int kt) {
  a[0] = pack_bf16(c[2 * kt][0], c[2 * kt][1]);
  a[1] = pack_bf16(c[2 * kt][2], c[2 * kt][3]);
  a[2] = pack_bf16(c[2 * kt + 1][0], c[2 * kt + 1][1]);
  a[3] = pack_bf16(c[2 * kt + 1][2], c[2 * kt + 1][3]);
}

// B fragments of two adjacent n-tiles for the 16-row k-step at k0 of B = Y, with Y
// row-major in shared memory (Y[k][n], `stride` elements a row): ldmatrix.trans
// hands each lane Y[k0 + 2t][n] and Y[k0 + 2t + 1][n] in one register, so no
// transposed copy is staged. b[0], b[1]: n-tile n0; b[2], b[3]: n-tile n0 + 8.
// Lanes 8 i .. 8 i + 7 address the rows of the i-th 8 x 8 matrix, 16 bytes each.
__device__ inline void load_b_trans(std::uint32_t (&b)[4], const __nv_bfloat16* y, int stride,
                                    int k0, int n0, int lane) {
  const int row = k0 + lane % 8 + 8 * ((lane / 8) % 2);
  const int col = n0 + 8 * (lane / 16);
  const auto addr = static_cast<std::uint32_t>(__cvta_generic_to_shared(y + row * stride + col));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(b[0]), "=r"(b[1]), "=r"(b[2]), "=r"(b[3])
               : "r"(addr));
}

// acc (16 x 8 kN) += C Y, where C (16 x 8 kC) is the accumulators c of an earlier
// product, rounded to bf16 as the A operand, and Y (8 kC x 8 kN) is row-major in
// shared memory, read by ldmatrix.trans: the second product of attention (P V,
// P^T dO, dS^T Q, dS K), whose first product's result never leaves registers.
template <int kN, int kC>
__device__ inline void add_product(float (&acc)[kN][4], const float (&c)[kC][4],
                                   const __nv_bfloat16* y, int stride, int lane) {
#pragma unroll
  for (int kt = 0; kt < kC / 2; ++kt) {
    std::uint32_t a[4];
    accumulators_as_a(a, c, kt);
#pragma unroll
    for (int n = 0; n < kN; n += 2) {
      std::uint32_t b[4];
      load_b_trans(b, y, stride, kt * 16, n * 8, lane);
      mma_bf16(acc[n], a, b[0], b[1]);
      mma_bf16(acc[n + 1], a, b[2], b[3]);
    }
  }
}

// Row r (0: row g, 1: row g + 8) of accumulators acc[kN][4] times `factor`, as
// bf16 pairs from `out`, the row's first element in global memory.
template <int kN>
__device__ inline void store_row(__nv_bfloat16* out, const float (&acc)[kN][4], int r, int t,
                                 float factor) {
#pragma unroll
  for (int n = 0; n < kN; ++n) {
    *reinterpret_cast<std::uint32_t*>(out + n * 8 + 2 * t) =
        pack_bf16(acc[n][2 * r] * factor, acc[n][2 * r + 1] * factor);
  }
}

// Starts copying rows [r0, r0 + kR) of a [seq][D] matrix into x[kR][D + kPad]
// with cp.async, 16 bytes a copy straight into shared memory, so that the next
// tile loads while the block computes on this one; rows past the sequence are
// zero-filled (a source size of 0 reads nothing). Padded rows keep the 8 rows a
// fragment or an ldmatrix reads in different banks. Then cp_async_commit(), and
// before reading: cp_async_wait<tiles still in flight>() and __syncthreads().
template <int D, int kR, int kThreads>
__device__ inline void stage_rows_async(__nv_bfloat16* x, const __nv_bfloat16* src, std::int64_t r0,
                                        std::int64_t seq) {
  constexpr int kChunks = kR * D / 8;
  for (int c = static_cast<int>(threadIdx.x); c < kChunks; c += kThreads) {
    const int r = c / (D / 8);
    const int col = (c % (D / 8)) * 8;
    const bool in = r0 + r < seq;
    const __nv_bfloat16* from = in ? src + (r0 + r) * D + col : src;
    const auto to = static_cast<std::uint32_t>(__cvta_generic_to_shared(x + r * (D + kPad) + col));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(from),
                 "r"(in ? 16 : 0));
  }
}
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int kInFlight>
__device__ inline void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kInFlight));
}

// Before a two-stage cp.async pipeline computes on its current stage: starts the
// next stage's copies into the other buffer (`stage_next`, when there is one),
// waits for the current stage's alone, and syncs the block. The block syncs
// again after computing, before the stage after next overwrites this buffer.
template <typename Stage>
__device__ inline void begin_stage(bool more, const Stage& stage_next) {
  if (more) {
    stage_next();
    cp_async_wait<1>();
  } else {
    cp_async_wait<0>();
  }
  __syncthreads();
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

// Whether query i sees key j (both inside the sequence).
__device__ inline bool sees(const AttentionShape& s, std::int64_t i, std::int64_t j) {
  if (i >= s.seq || j >= s.seq) return false;
  const KeyRange r = key_range(s, i);
  return j >= r.first && j < r.last;
}

}  // namespace myriad::kernels::ops::mma
