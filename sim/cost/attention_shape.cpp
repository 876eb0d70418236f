#include "sim/cost/attention_shape.hpp"

#include "models/transformer/layer_program.hpp"

namespace myriad::sim {

double attention_shape_factor(const models::AttentionShape& a, double row_tiles,
                              double diagonal_tiles) {
  const double tile_pairs = kAttentionTile * kAttentionTile;
  const double rows = a.seq / a.cp / kAttentionTile;  // query tiles of this rank
  if (!a.causal) {  // every row over every key, on every ring step
    const double needed = a.seq * a.seq / a.cp / tile_pairs;
    return needed / (needed + a.cp * rows * row_tiles);
  }
  const double needed = models::attended_pairs(a.seq, a.window) / a.cp / tile_pairs;
  // The own step: every row once, with its diagonal (half of it wasted, plus the
  // mask); each further ring step: half of the rows on average.
  const double extra =
      rows * (row_tiles + diagonal_tiles + 0.5) + 0.75 * (a.cp - 1) * rows * row_tiles;
  return needed / (needed + extra);
}

double attention_efficiency(const models::Op& op, const DeviceProfile& p) {
  const bool backward = op.backward;
  const double base = backward ? p.attention_bwd_efficiency : p.attention_fwd_efficiency;
  if (!p.attention_shape || op.attention.head_dim <= 0 || op.attention.seq <= 0) return base;
  // At head dim d the products take d/128 of their time at 128; the softmax the same.
  const double softmax = backward ? p.attention_bwd_softmax_share : p.attention_fwd_softmax_share;
  const double head = base / ((1 - softmax) + softmax * 128 / op.attention.head_dim);
  const double rows = backward ? p.attention_bwd_row_tiles : p.attention_fwd_row_tiles;
  return head * attention_shape_factor(op.attention, rows, p.attention_diagonal_tiles);
}

}  // namespace myriad::sim
