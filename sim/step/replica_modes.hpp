// How the step engine instantiates a step's data-parallel replicas (the
// lowering chooses, lower_step; `myriad simulate` says which and why):
//   every replica   a row of actors each (no contention, no stragglers need it:
//                   `--all-replicas`; expert groups coupled by stragglers);
//   classes         a row per class of replicas that share every uplink alike
//                   (contention), its host, flows and NICs weighted by its members;
//   some replicas   replica 0 and those holding a straggler, each partner that is
//                   not simulated mirrored by a ghost host at its place.
// The traffic between replicas is the mode's business: the data-parallel rings
// and the kinds of layer traffic (layer_traffic.hpp) say whom a rank group
// exchanges with and how much, and the mode plays it with real partners, a
// class's weighted flows or ghosts. Nothing else in the engine asks which mode runs.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "models/scenario/scenario.hpp"

namespace myriad::sim::step_detail {

struct StepState;
struct TrafficState;

// One exchange in a group of consecutive actors of a stage (an expert-parallel
// group): each member sends every other one `pair_bytes` times the receiver's
// share (`receive_share[k]` for the group's k-th member; all 1 when empty).
struct GroupExchange {
  const char* tag = "ep";  // names its hosts and mailboxes
  int actors = 1;          // consecutive actors of the group
  double pair_bytes = 0;
  const std::vector<double>* receive_share = nullptr;
};

class ReplicaMode {
 public:
  ReplicaMode() = default;
  ReplicaMode(const ReplicaMode&) = delete;
  ReplicaMode& operator=(const ReplicaMode&) = delete;
  virtual ~ReplicaMode() = default;

  [[nodiscard]] virtual std::string_view name() const = 0;
  // The rank group's data-parallel ring edges: its ports, beside its host (added
  // right after it), and mirrors of its ring neighbours (after every rank group's).
  virtual void add_ring_ports(StepState& p, int row, int stage, const std::string& name) const;
  virtual int add_ring_mirrors(StepState& p, const models::scenario::Scenario& s, int row,
                               int stage) const = 0;
  // One phase of a stage's data-parallel ring: `bytes` on each edge between
  // neighbouring replicas; returns when this rank group's edges are done.
  virtual void ring_phase(StepState& p, int row, int stage, double bytes) const = 0;
  // What a group exchange of the rank group needs beside it; returns the hosts added.
  virtual int add_group_hosts(StepState& p, const models::scenario::Scenario& s, int row, int stage,
                              const GroupExchange& g, TrafficState& state) const = 0;
  // One such exchange; returns when every flow to and from this rank group is done.
  virtual void group_exchange(StepState& p, int row, int stage, const GroupExchange& g,
                              TrafficState& state) const = 0;
};

// The mode the lowering chose (StepLowering::all_replicas, classes).
std::unique_ptr<const ReplicaMode> replica_mode(bool all_replicas, bool classes);

}  // namespace myriad::sim::step_detail
