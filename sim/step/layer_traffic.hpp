// The kinds of layer traffic the step engine plays as flows between rank groups
// (a registry): a tensor-, context- or expert-parallel collective of a layer is
// priced inside the layer's time unless a kind claims it, and each kind that
// claims it plays its part, in the registry's order (a collective may take
// several hops). A kind is one class, with its own parameters, that says what it
// claims (lowering, without SimGrid), what hosts it needs beside each simulated
// rank group, and how it plays one collective. Adding a kind is its class (in a
// file of its own) and one line in layer_traffic.cpp's table; nothing else in the
// engine names a kind. How replicas are instantiated (every one, classes, some
// with ghosts) is not a kind's business: traffic between replicas goes through
// the replica mode (replica_modes.hpp), which plays it for every kind.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/analytic/estimator.hpp"

namespace myriad::sim {

namespace step_detail {
struct StepState;
}
struct StepLowering;

// How a collective is played: exposed (its latency, then its flows, on the rank
// group's timeline), beside the layer's compute (an overlapped one: its flows
// only, its latency and NVLink part inside the layer's time), or in an F&B
// pass's phase (pair_passes.hpp: exposed's timing, inside the pass's span).
enum class Played { exposed, beside, in_pair };

class LayerTraffic {
 public:
  LayerTraffic() = default;
  LayerTraffic(const LayerTraffic&) = delete;
  LayerTraffic& operator=(const LayerTraffic&) = delete;
  virtual ~LayerTraffic() = default;

  [[nodiscard]] virtual std::string_view name() const = 0;
  // Whether it plays `c`: a collective left exposed (`beside` false), or an
  // overlapped one played beside the layer's compute (true).
  [[nodiscard]] virtual bool claims(const LayerCollective& c, bool beside) const = 0;
  // The part of an exposed collective's time it plays itself (taken out of the
  // layer's local time).
  [[nodiscard]] virtual double played_s(const LayerCollective& c) const = 0;
  // Consecutive actors of a stage one of its groups spans (expert groups): classes
  // of replicas keep such groups whole, and past one they couple replicas.
  [[nodiscard]] virtual int group_actors() const { return 1; }
  // Hosts and ports it needs for the simulated rank group (row, stage), added to
  // the platform after the rank groups' own; returns how many hosts it added.
  virtual int add_hosts(step_detail::StepState& p, const models::scenario::Scenario& s, int row,
                        int stage) const = 0;
  // Plays its part of `c` for the rank group (row, stage), as `how` says.
  virtual void play(step_detail::StepState& p, int row, int stage, const LayerCollective& c,
                    Played how) const = 0;
};

using LayerTrafficPtr = std::shared_ptr<const LayerTraffic>;

// The kinds that apply to the scenario, in the registry's order; `p` has the
// lowering's actors, costs and rates.
std::vector<LayerTrafficPtr> layer_traffic(const StepLowering& p,
                                           const models::scenario::Scenario& s);

}  // namespace myriad::sim
