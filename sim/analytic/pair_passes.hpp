// An F&B pass (DualPipe's, combined 1F1B's): the forward of one micro-batch and
// the backward of another run together on a stage, each one's expert
// all-to-alls beside the other's compute. Both engines read one description of
// it, its phases (pair_phases): in each, the compute stream runs some compute
// while the communication stream runs some all-to-alls, and the phase lasts the
// longer of the compute (slowed by the share of the compute rate the
// communication kernels take while they run) and the all-to-alls. The analytic
// engine sums the phases' times (pair_time); the step engine plays each phase,
// its all-to-alls as flows that share the network with everything else.
#pragma once

#include <array>
#include <cstdint>

#include "models/plan/pipeline_schedule.hpp"
#include "sim/analytic/pass_times.hpp"

namespace myriad::sim {

// Which of a pair's expert all-to-alls a phase runs, by pass and by where they
// sit in it (PhaseTime::ep_first): the forward's first (its dispatch) or the
// rest (its combine), the backward's first (the combine's mirror) or the rest
// (the dispatch's mirror, and what recomputation runs again).
enum class PairA2a : std::uint8_t {
  forward_first = 1,
  forward_rest = 2,
  backward_first = 4,
  backward_rest = 8,
};
// Whether `part` is of the forward pass.
[[nodiscard]] constexpr bool of_forward(PairA2a part) {
  return part == PairA2a::forward_first || part == PairA2a::forward_rest;
}

struct PairPhase {
  double compute = 0;      // on the compute stream, at the full compute rate
  double a2a = 0;          // the all-to-alls beside it, priced
  std::uint8_t parts = 0;  // which ones (PairA2a bits)
  [[nodiscard]] bool runs(PairA2a part) const {
    return (parts & static_cast<std::uint8_t>(part)) != 0;
  }
  // Whether it runs any of the forward's (backward's) all-to-alls.
  [[nodiscard]] bool runs_forward() const {
    return runs(PairA2a::forward_first) || runs(PairA2a::forward_rest);
  }
  [[nodiscard]] bool runs_backward() const {
    return runs(PairA2a::backward_first) || runs(PairA2a::backward_rest);
  }
  // The longer of the compute, slowed by `share` of the compute rate while the
  // all-to-alls run, and the all-to-alls.
  [[nodiscard]] double time(double share) const;
};

struct PairPhases {
  std::array<PairPhase, 4> phase{};
  int count = 0;
  [[nodiscard]] double time(double share) const;
};

// The phases of `schedule`'s F&B pass of `f`'s forward and `b`'s (whole) backward:
//   DualPipe (DeepSeek-V3 s3.2.1): one phase, the two passes' compute without
//     their exposed all-to-alls beside all four all-to-alls.
//   Combined 1F1B (Megatron-Core's combined_1f1b; the issue order of its guide,
//     "Combined 1F1B: Expert-Parallel All-to-All Overlap"): layer by layer, the
//     compute stream runs F.attention, B.experts, F.experts, B.attention while
//     the communication stream runs B.combine, F.dispatch, B.dispatch, F.combine,
//     each waiting for what it needs of the other: four phases. With alike
//     layers the sum over a chunk's layers is the same rule on the chunk's sums,
//     which is what is priced; a dense layer's compute counts as the attention's.
//     With delayed weight gradients (`delay_wgrad`, Megatron-Core's
//     --delay-wgrad-compute; model_chunk_schedule_plan.py) the compute stream
//     runs B.experts' input gradients, then their weight gradients, then
//     F.experts, and B.attention's input gradients, then its weight gradients,
//     then the next layer's F.attention, while B.dispatch (B.combine) waits only
//     for the input gradients: each weight gradient starts in the phase of its
//     input gradients as far as that phase's all-to-all leaves room (with `share`
//     of the compute rate taken while it runs), the rest opens the next phase.
//     The attention's that open a layer's first phase are the layer's before it,
//     taken alike.
[[nodiscard]] PairPhases pair_phases(models::scenario::Schedule schedule, const PassTimes& f,
                                     const PassTimes& b, double share = 0,
                                     bool delay_wgrad = false);

// DualPipe's F&B pass time.
[[nodiscard]] double fb_time(const PassTimes& f, const PassTimes& b, double share);
// Combined 1F1B's F&B pass time.
[[nodiscard]] double combined_fb_time(const PassTimes& f, const PassTimes& b, double share);
// The F&B pass time of `schedule`: its phases' times summed.
[[nodiscard]] double pair_time(models::scenario::Schedule schedule, const PassTimes& f,
                               const PassTimes& b, double share, bool delay_wgrad = false);

}  // namespace myriad::sim
