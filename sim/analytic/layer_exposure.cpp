#include "sim/analytic/layer_exposure.hpp"

#include <algorithm>

namespace myriad::sim {

using models::GroupKind;

PhaseTime exposed(const PhaseTime& t, const LayerOverlap& overlap, double share) {
  double chunked = 0;
  double chunked_share = 0;  // the chunked collectives' time, each times its share
  double fused = 0;
  for (const GroupKind g : kGroupKinds) {
    if (overlap.fuses(g)) {
      fused += t.comm[g];
    } else if (overlap.of(g)) {
      chunked += t.comm[g];
      chunked_share += t.sm_share[g];
    }
  }
  const double hideable = chunked + fused;
  double kept = 1;  // fraction of an overlapped collective left exposed, with the cost of hiding
  if (hideable > 0) {
    const double floor = chunked / 4 + fused * overlap.fused_exposed;
    const double cover = t.gemm - (overlap.split_weight ? t.weight : 0);
    const double out = std::max(floor, hideable - cover);
    // Only the chunked collectives run kernels of their own beside the GEMMs; a
    // fused one moves its tiles from inside the GEMM's (its cost is its exposure).
    kept = (out + (hideable - out) * chunked_share / hideable) / hideable;
  }
  PhaseTime e = t;
  for (const GroupKind g : kGroupKinds) {
    if (overlap.of(g)) e.comm[g] = t.comm[g] * kept;
  }
  // Delayed weight gradients: only the backward has them and splits at its
  // expert collectives (ep_first is the combine's mirror's time).
  if (overlap.delay_weight && !overlap.of(GroupKind::ep) && t.weight > 0 && t.ep_first > 0) {
    const double combine = t.ep_first;
    const double dispatch = t.comm[GroupKind::ep] - combine;
    const double experts = t.ep_inner_weight;
    const double attention = t.weight - experts;
    e.comm[GroupKind::ep] -=
        std::min(experts, dispatch * (1 - share)) + std::min(attention, combine * (1 - share));
  }
  // ZeRO-3's gathers go over the NICs, not NVLink: prefetched, a layer's runs
  // beside the layer before it, its whole compute as cover (the next phase's
  // all the same), and what the compute cannot hide stays exposed; hiding the
  // rest costs the compute `share` of its rate.
  const double dp = t.comm[GroupKind::dp];
  if (dp > 0 && overlap.dp) {
    const double out = std::max(0.0, dp - t.compute);
    e.comm[GroupKind::dp] = out + share * (dp - out);
  }
  return e;
}

}  // namespace myriad::sim
