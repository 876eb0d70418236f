#include "sim/analytic/pair_passes.hpp"

#include <algorithm>

namespace myriad::sim {

double PairPhase::time(double share) const { return std::max(compute + share * a2a, a2a); }

double PairPhases::time(double share) const {
  double t = 0;
  for (int i = 0; i < count; ++i) t += phase[static_cast<std::size_t>(i)].time(share);
  return t;
}

PairPhases pair_phases(models::scenario::Schedule schedule, const PassTimes& f,
                       const PassTimes& b) {
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
  p.phase = {PairPhase{f_attention, b_combine, bits(backward_first)},
             PairPhase{b.inner_backward, f_dispatch, bits(forward_first)},
             PairPhase{f.inner_forward, b_dispatch, bits(backward_rest)},
             PairPhase{b_attention, f_combine, bits(forward_rest)}};
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
                 double share) {
  return pair_phases(schedule, f, b).time(share);
}

}  // namespace myriad::sim
