#include "sim/analytic/dp_exposure.hpp"

#include <algorithm>

namespace myriad::sim {

DpCost exposed_dp(double gather, double reduce, const DpWindows& w, double share) {
  const double b = w.buckets;
  // Gathers: the first bucket before anything; beside the first forward, the
  // rest: the forward slowed while they run, and what it loses hidden when they
  // outlast it.
  const double first_rest = gather * (1 - 1 / b);
  const double stall =
      gather / b + std::max(first_rest, w.forward + share * first_rest) - w.forward;
  // Reductions, from the end of the last backward's first bucket (time 0 is its
  // end, at the full rate): its buckets but the last beside it, the last after
  // it. A collective beside compute takes `share` of its rate for as long as both
  // run: a compute pass with W seconds left at full rate, beside a collective of
  // D seconds, loses share x min(D, W / (1 - share)).
  const double early_part = reduce * (1 - 1 / b);
  const double start = -w.backward + w.backward / b;
  const double beside = share < 1 ? std::min(early_part, -start / (1 - share)) : early_part;
  const double loss = share * beside;
  const double queue = std::max(start + early_part, loss) + reduce / b;
  DpCost cost;
  cost.compute = loss;
  cost.bubble = (w.stages - 1) * loss;
  cost.exposed = stall + queue - loss;
  return cost;
}

}  // namespace myriad::sim
