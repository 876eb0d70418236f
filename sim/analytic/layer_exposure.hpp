// What a layer's phase exposes of its tensor-, context-, expert- and (ZeRO-3)
// data-parallel traffic when it overlaps the phase's compute: the closed form's
// rule, which the step program's passes take through stage_costs.
#pragma once

#include <array>

#include "models/plan/collective.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/analytic/group_times.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

// Times of a phase of one layer (or of the embedding or head) for one micro-batch.
struct PhaseTime {
  double compute = 0;
  double gemm = 0;    // the part of compute that collectives can hide behind
  double weight = 0;  // the part of gemm that is weight gradients
  GroupTimes comm;    // by group; dp: ZeRO-3's gathers and reductions, layer by layer
  // By group: each collective's time times the share of the compute rate its
  // kernels take when it overlaps compute chunk by chunk (overlap_share).
  GroupTimes sm_share;
  double host_issue = 0;  // the host's time to issue its kernels and collectives (host_wait.hpp)
  // Where the phase's expert collectives split it (an MoE layer's dispatch and
  // combine; in backward their mirrors): the compute between the first and the
  // last (the experts'), and the expert collectives' time at the first (the
  // rest at the last). What combined 1F1B pairs (combined_fb_time).
  double ep_inner = 0;
  double ep_first = 0;
  // Of ep_inner, the weight gradients (the experts'), which delayed weight
  // gradients run beside the backward's dispatch.
  double ep_inner_weight = 0;
};

// Which layer collectives the scenario overlaps with the GEMMs: chunk by chunk
// (inter-operator) or fused into them tile by tile (intra-operator: tp and ep
// collectives, which sit beside a GEMM).
struct LayerOverlap {
  std::array<bool, kGroupKinds.size()> chunked{};  // by group: overlapped chunk by chunk
  bool fused = false;
  bool dp = false;           // ZeRO-3's layer gathers prefetched beside the layer before
  double fused_exposed = 0;  // share of a fused collective left exposed
  // A zero-bubble schedule runs the weight gradients in passes of their own: they
  // are no cover for the collectives of the backward they were split from.
  bool split_weight = false;
  // Combined 1F1B's delayed weight gradients (parallelism.delay_wgrad_compute):
  // a backward's expert all-to-alls not otherwise overlapped run beside them.
  bool delay_weight = false;

  LayerOverlap(const models::scenario::OverlapSpec& o, const DeviceProfile& p,
               bool split_weight_gradients = false, bool delay_weight_gradients = false)
      : fused(o.fused),
        dp(o.dp),
        fused_exposed(p.fused_overlap_exposed),
        split_weight(split_weight_gradients),
        delay_weight(delay_weight_gradients) {
    chunked[static_cast<std::size_t>(models::GroupKind::tp)] = o.tp;
    chunked[static_cast<std::size_t>(models::GroupKind::cp)] = o.cp;
    chunked[static_cast<std::size_t>(models::GroupKind::ep)] = o.ep;
  }
  // The layer collectives a GEMM can carry tile by tile: tp, cp and ep.
  [[nodiscard]] static bool layer_group(models::GroupKind g) {
    return g == models::GroupKind::tp || g == models::GroupKind::cp || g == models::GroupKind::ep;
  }
  [[nodiscard]] bool fuses(models::GroupKind g) const { return fused && layer_group(g); }
  [[nodiscard]] bool of(models::GroupKind g) const {
    return fuses(g) || (layer_group(g) && chunked[static_cast<std::size_t>(g)]);
  }
};

// The exposed tp, cp and ep time of a phase. The overlapped collectives share the
// phase's GEMMs as cover: together, what the GEMMs cannot hide stays exposed,
// shared out in proportion, and no less than chunked pipelining's fill and drain
// (a quarter of a chunked collective) and a fused one's first or last tile (the
// profile's fused_overlap_exposed); plus what hiding the rest costs the GEMMs: each
// chunked collective's kernels take their share of the compute rate while they run
// (overlap_share: NCCL's channels, or userbuffers' SMs), ZeRO-3's gathers `share`.
// With delayed weight gradients, a backward's expert all-to-alls that nothing
// else overlaps run beside them, each all-to-all's kernels taking `share` of the
// compute rate (Megatron-Core's model_chunk_schedule_plan.py issue order): the
// dispatch's mirror beside the experts' weight gradients, the combine's mirror
// beside the attention's (the layer's after it, taken alike); what that hides
// leaves the exposed ep time. Combined 1F1B's backward passes run alone so, its
// F&B passes as pair_phases says.
PhaseTime exposed(const PhaseTime& t, const LayerOverlap& overlap, double share);

}  // namespace myriad::sim
