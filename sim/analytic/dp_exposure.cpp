#include "sim/analytic/dp_exposure.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace myriad::sim {

DpCost exposed_dp(double gather, double reduce, double v, const DpWindows& w, double share) {
  const double b = w.buckets;
  const int chunks = std::max(1, static_cast<int>(std::lround(v)));
  const double gather_c = gather / v;
  const double reduce_c = reduce / v;
  // Gathers: stalls of the forward pass, from the step's start. Beside the first
  // forward, the rest of chunk 0's: the forward slowed while they run, and what it
  // loses hidden when they outlast it.
  const double first_rest = gather_c * (1 - 1 / b);
  double stall = gather_c / b + std::max(first_rest, w.forward + share * first_rest) - w.forward;
  double link = gather_c;  // when the link is done with the chunks asked for so far
  for (int k = 1; k < chunks; ++k) {
    link += gather_c;
    const double at =
        w.gather_at.empty() ? k * w.gather_stride : w.gather_at[static_cast<std::size_t>(k)];
    stall = std::max(stall, link - at);
  }
  // The other chunks' gathers beside the forwards that follow.
  const double gathers_beside = std::max(0.0, link - gather_c - (stall - gather_c / b));
  // Reductions, chunk by chunk from the last: chunk k's last backward ends k strides
  // before the end of the last backward (time 0), later by what collectives beside
  // compute have slowed it so far (`shift`); its buckets but the last are reduced
  // from the end of that backward's first bucket, its last after it, one
  // collective after another on the link. A collective beside compute takes `share`
  // of its rate for as long as both run: a compute pass with W seconds left at full
  // rate, beside a collective of D seconds, loses share x min(D, W / (1 - share)).
  // A reduction beside a last backward slows it on every stage, and the last
  // micro-batch's backward passes through each stage's last backward of the chunk
  // in turn: that slowdown is paid once a stage. Beside the backwards that follow
  // (chunks k > 0), it slows them; beside nothing (the first stage's last backward
  // done, its link still busy), it costs nothing.
  double queue = -std::numeric_limits<double>::infinity();
  DpCost cost;
  cost.compute = share * gathers_beside;
  double shift = 0;
  const double early_part = reduce_c * (1 - 1 / b);
  for (int k = chunks - 1; k >= 0; --k) {
    const double end =
        (w.reduce_at.empty() ? -k * w.reduce_stride : w.reduce_at[static_cast<std::size_t>(k)]) +
        shift;
    const double start = std::max(queue, end - w.backward + w.backward / b);
    const double left = std::max(0.0, end - start);
    const double beside = share < 1 ? std::min(early_part, left / (1 - share)) : early_part;
    const double loss = share * beside;
    const double compute_end = end + loss;
    queue = std::max(start + early_part, compute_end) + reduce_c / b;
    cost.bubble += (w.stages - 1) * loss;
    cost.compute += loss;
    shift += loss;
    if (k > 0) {
      const double spill = share * std::max(0.0, std::min(queue, shift) - compute_end);
      cost.compute += spill;
      shift += spill;
    } else {
      // The first stage's own last backward, slowed, ends before its last bucket.
      cost.exposed = stall + queue - compute_end;
    }
  }
  return cost;
}

}  // namespace myriad::sim
