// Internal to the step engine (sim/step/step_engine.cpp, step_traffic.cpp): the
// state the actors share as they play the lowering, and the traffic they play.
// Includes SimGrid: no header outside sim/step's sources includes this one.
#pragma once

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/program/critical_path.hpp"
#include "sim/step/link_monitor.hpp"
#include "sim/step/step_engine.hpp"
#include "sim/step/step_lowering.hpp"
#include "sim/topology/fat_tree_platform.hpp"

namespace myriad::sim::step_detail {

namespace sg4 = simgrid::s4u;

// Identifies a message, so that a receiver can check it got what it waited for.
struct Tag {
  int chunk = 0;
  int micro_batch = 0;
};

// A task another of the rank group's streams waits for (its start, or its end):
// when it started, and whether it has started or ended (each semaphore released
// once then, and given back by every waiter).
struct Signal {
  sg4::SemaphorePtr started;
  sg4::SemaphorePtr done;
  double start_s = 0;
};

// One simulated rank group (an actor): where it and its mirrors sit on the
// platform, and what it has done so far.
struct ActorState {
  std::vector<Signal> signals;  // [Plan::signal_of[stage][task]]
  int host = -1;                // its platform host
  int ghost = -1;               // its ring neighbour's mirror (one replica simulated)
  std::vector<int> ep_ghosts;   // its expert-parallel partners' mirrors
  int group_ghost = -1;         // its rank group's second node (groups spanning nodes)
  // Every replica or class simulated: its ring edges' ports (class mode: the
  // edges inside the class, of its weight less one, and the edge to the next
  // class, of weight 1; else its host), and its readiness for its predecessor's.
  int ring_self = -1;
  int ring_out = -1;
  // A class's expert all-to-alls between its own members: a port of their pairs' weight.
  int ep_self = -1;
  sg4::SemaphorePtr ring_ready;
  int ep_played = 0;            // all-to-alls so far
  std::vector<Span> timeline;   // what it did, in order
  std::vector<double> sent_at;  // [direction * v * m + chunk * m + mb]: when each output left
  double wait_s = 0;            // blocked on inputs and on blocking sends
  sg4::MutexPtr dp_stream;      // its data-parallel communicator: one collective at a time
};

// The lowering and what the actors change as they play it, owned by simulate_step.
struct Plan : StepLowering {
  explicit Plan(StepLowering lowering) : StepLowering(std::move(lowering)) {}

  [[nodiscard]] std::size_t index(int row, int stage) const {
    return static_cast<std::size_t>(row) * static_cast<std::size_t>(pp) +
           static_cast<std::size_t>(stage);
  }
  ActorState& actor(int row, int stage) { return actors[index(row, stage)]; }

  std::vector<Tag> tags;  // payloads: tags[chunk * m + micro_batch]
  // [stage][task]: the task's signal in its actor's `signals`, -1 when no other
  // stream of the rank group waits for it.
  std::vector<std::vector<int>> signal_of;
  std::unique_ptr<FatTreePlatform> platform;
  std::unique_ptr<LinkMonitor> monitor;
  std::vector<ActorState> actors;  // [row * pp + stage]
  std::vector<TraceEvent> events;  // replica 0
  std::size_t flows = 0;           // one thread: SimGrid actors take turns
  // [stage], every replica simulated: a ring's phase ends for all its members at once
  std::vector<sg4::BarrierPtr> dp_ring_done;
};

// Index into a row-major table of `columns` columns.
inline std::size_t at(int row, int columns, int column) {
  return static_cast<std::size_t>(row) * static_cast<std::size_t>(columns) +
         static_cast<std::size_t>(column);
}

inline std::string mailbox(const char* kind, int replica, int stage) {
  return fmt::format("{}.{}.{}", kind, replica, stage);
}

// Keeps the span on the rank group's timeline and, for row 0 (replica 0), in the trace.
void record(Plan& p, int row, int stage, Activity a, double start, const std::string& name,
            int from_group = -1, double sent = 0);
// One flow between two platform hosts, waited for; the monitor sees it.
void transfer(Plan& p, int from, int to, const sg4::CommPtr& comm, double bytes);
// The data-parallel collectives of a fraction `share` of the stage's parameters.
void dp_collectives(Plan& p, int row, int stage, double share, bool gather);
// Compute for `seconds` on the actor's host.
void compute_for(const Plan& p, double seconds);
// dp_collectives beside compute, in turn on the rank's data-parallel communicator;
// their kernels take the profile's overlap_compute_share of the host's rate.
void dp_beside_compute(Plan& p, int row, int stage, double share, bool gather);
// Runs `work` beside the stage's own actor, on its host: traffic that overlaps.
sg4::ActorPtr beside(const std::string& name, const std::function<void()>& work);
// A layer's expert all-to-all, and a tp or cp collective between a rank group's nodes.
void expert_all_to_all(Plan& p, int row, int stage, const LayerCollective& e, bool beside = false);
void group_flows(Plan& p, int row, int stage, const LayerCollective& c);

}  // namespace myriad::sim::step_detail
