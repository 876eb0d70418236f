// The critical path of a simulated step: the chain of activities that, had any
// of them taken longer, would have made the step longer.
//
// Every rank group keeps its timeline as spans (compute, sends, waits, data-
// parallel phases, optimizer). The walk starts where the step ends (the rank
// group that finished last) and goes back in time along that group's spans;
// when it meets a wait for a pipeline message that its sender sent after the
// wait began, the sender was the one holding things up: the message's transit
// counts as pp and the walk continues on the sender from the moment it sent.
// Otherwise the span is the group's own and counts under its activity (a wait
// for a message already under way counts as pp: the transfer held it up).
// Data-parallel phases count as dp on the group walked: a ring waits on its
// neighbours, but the lowering into one phase does not say on which.
#pragma once

#include <string>
#include <vector>

#include "sim/analytic/estimator.hpp"

namespace myriad::sim {

enum class Activity { forward, backward, pp, wait, dp, optimizer };

const char* activity_name(Activity a);

struct Span {
  double start_s = 0;
  double end_s = 0;
  Activity activity = Activity::forward;
  int from_group = -1;  // a wait for a message: the rank group that sent it
  double sent_s = 0;    // and when it sent it
};

// Throws std::runtime_error, an internal error, unless the step ended at a
// finite time with every rank group's timeline ending in its optimizer step (a
// group blocked forever, which SimGrid reports as a deadlock, never finishes).
void require_finished(const std::vector<std::vector<Span>>& timelines, double step_s);

struct CriticalPath {
  struct Stop {
    int stage = 0;
    int replica = 0;
    double seconds = 0;  // time of the path spent on this rank group
  };
  std::vector<BreakdownPart> by_activity;  // forward, backward, pp, wait, dp, optimizer
  std::vector<Stop> groups;                // rank groups on the path, most time first
  int hops = 0;                            // times the path moved to another rank group
};

// timelines[g]: rank group g's spans in time order, g = row * pp + stage.
CriticalPath critical_path(const std::vector<std::vector<Span>>& timelines, int pp);

// The shares of a rank group's forward and backward passes that are exposed
// communication, by group (as the analytic engine prices the passes; dp: ZeRO-3's
// layer gathers and reductions), and waits for activation offload's copies.
struct PassShares {
  GroupTimes comm;
  double offload = 0;
  double host = 0;  // waits for the host to issue kernels (PassTimes::host)
  [[nodiscard]] double total() const { return comm.total() + offload + host; }
};

// The step as the analytic engine breaks it down, from the timeline of the rank
// group that computes the most (the slowest stage): its passes split into
// compute, exposed tp, cp, ep, offload and host waits by `shares`; its blocking pipeline sends
// (pp), data-parallel and optimizer time; the bubble is the rest of the step (waiting for inputs,
// and idle once done while others finish). The parts sum to step_s.
std::vector<BreakdownPart> timeline_breakdown(const std::vector<Span>& spans, double step_s,
                                              const PassShares& shares);

// A stage's layers by kind: `layers` of StageCosts::layer, `dense` more of an
// MoE model's dense layers; of them, `again` and `dense_again` recomputed under
// partial recomputation.
struct StageLayers {
  double layers = 0;
  double dense = 0;
  double again = 0;
  double dense_again = 0;
};

// The shares of a stage's passes (its layers, with the embedding on the first
// stage and the head on the last) that are exposed layer communication.
PassShares pass_shares(const StageCosts& costs, const StageLayers& n, bool first, bool last);

// The step as `estimate` breaks it down, from the rank group that computes the
// most (the slowest stage, whose passes the analytic engine counts m times);
// timelines[g], g = row * pp + stage; shares by stage.
std::vector<BreakdownPart> step_breakdown(const std::vector<std::vector<Span>>& timelines, int pp,
                                          const std::vector<PassShares>& shares, double step_s);

}  // namespace myriad::sim
