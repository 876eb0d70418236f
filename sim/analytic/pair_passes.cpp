#include "sim/analytic/pair_passes.hpp"

#include <algorithm>

namespace myriad::sim {

double PairPhase::time(double share) const { return std::max(compute + share * a2a, a2a); }

double PairPhases::time(double share) const {
  double t = 0;
  for (int i = 0; i < count; ++i) t += phase[static_cast<std::size_t>(i)].time(share);
  return t;
}

PairPhases pair_phases(models::scenario::Schedule schedule, const PassTimes& f, const PassTimes& b,
                       double share, bool delay_wgrad) {
  using enum PairA2a;
  const auto bits = [](auto... parts) {
    return static_cast<std::uint8_t>((static_cast<std::uint8_t>(parts) | ...));
  };
  PairPhases p;
  if (schedule != models::scenario::Schedule::combined_1f1b) {
    p.phase[0] = {f.forward - f.a2a_exposed_forward + b.backward - b.a2a_exposed_backward,
                  f.a2a_forward + b.a2a_backward,
                  bits(forward_first, forward_rest, backward_first, backward_rest)};
    p.count = 1;
    return p;
  }
  const double f_dispatch = f.a2a_first_forward;
  const double f_combine = f.a2a_forward - f_dispatch;
  const double b_combine = b.a2a_first_backward;  // the combine's mirror, first in backward
  const double b_dispatch = b.a2a_backward - b_combine;
  const double f_attention = f.forward - f.a2a_exposed_forward - f.inner_forward;
  const double b_attention = b.backward - b.a2a_exposed_backward - b.inner_backward;
  // The weight gradients each phase of input gradients keeps (all of them, unless
  // delayed) and the rest, which open the next phase.
  const double b_experts = b.inner_backward - (delay_wgrad ? b.inner_weight : 0);
  const double b_attention_input = b_attention - (delay_wgrad ? b.weight - b.inner_weight : 0);
  const auto room = [share](double compute, double a2a, double weight) {
    return std::clamp(a2a - compute - share * a2a, 0.0, weight);
  };
  const double experts_kept = b.inner_backward - b_experts;
  const double experts_now = room(b_experts, f_dispatch, experts_kept);
  const double attention_kept = b_attention - b_attention_input;
  const double attention_now = room(b_attention_input, f_combine, attention_kept);
  p.phase = {
      PairPhase{attention_kept - attention_now + f_attention, b_combine, bits(backward_first)},
      PairPhase{b_experts + experts_now, f_dispatch, bits(forward_first)},
      PairPhase{experts_kept - experts_now + f.inner_forward, b_dispatch, bits(backward_rest)},
      PairPhase{b_attention_input + attention_now, f_combine, bits(forward_rest)}};
  p.count = 4;
  return p;
}

double fb_time(const PassTimes& f, const PassTimes& b, double share) {
  return pair_phases(models::scenario::Schedule::dualpipe, f, b).time(share);
}

double combined_fb_time(const PassTimes& f, const PassTimes& b, double share) {
  return pair_phases(models::scenario::Schedule::combined_1f1b, f, b).time(share);
}

double pair_time(models::scenario::Schedule schedule, const PassTimes& f, const PassTimes& b,
                 double share, bool delay_wgrad) {
  return pair_phases(schedule, f, b, share, delay_wgrad).time(share);
}

}  // namespace myriad::sim
