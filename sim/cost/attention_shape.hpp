// A fused attention kernel's rate by head dim and sequence (FlashAttention-3 and
// cuDNN's fused attention as they run on Hopper), in place of one flat efficiency.
//
// The kernel walks tiles of 128 queries by 128 keys (FlashAttention-3,
// arXiv:2407.08608 s3). Three costs besides the matrix products set its rate:
//   - softmax work per score (the exponential on the special-function units, 16
//     a clock per SM against 4,096 bf16 tensor FLOPs on Hopper, CUDA C++
//     Programming Guide's throughput table), which the kernel hides only in part
//     and which does not shrink with the head dim while the products do: the
//     profile gives its share of the time at head dim 128, at most 1 - the
//     efficiency (the products no faster than the tensor cores' peak);
//   - each row of query tiles' fixed work (loading Q, writing O and its
//     statistics; the backward's dQ), worth `row_tiles` key tiles;
//   - the causal diagonal: each diagonal tile computes all of its scores for half
//     of them, and masks, `diagonal_tiles` more.
// Context parallelism runs ring attention with its sequence load-balanced over
// 2 cp chunks (Transformer Engine's): the rank's own keys causally, then each other
// rank's keys for half of its rows on average (every row one step, half on the
// others), so each extra step pays the rows' fixed work again.
#pragma once

#include "models/ops/op.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

// Tokens a tile spans on each side.
inline constexpr double kAttentionTile = 128;

// The fraction of the bf16 peak the attention op runs at: the profile's efficiency,
// flat, or with its attention shape parameters scaled by head dim and shape.
double attention_efficiency(const models::Op& op, const DeviceProfile& p);

// What the shape keeps of the long-sequence rate: the tiles of scores the op
// needs over those the kernel walks, each row's fixed work and the diagonal counted.
double attention_shape_factor(const models::AttentionShape& a, double row_tiles,
                              double diagonal_tiles);

}  // namespace myriad::sim
