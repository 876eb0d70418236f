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
#include "sim/step/replica_modes.hpp"
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

// What a kind of layer traffic keeps for one simulated rank group: the hosts
// mirroring its partners (one replica simulated), a port of its own (a class's
// traffic between its members, of their pairs' weight), and how many collectives
// it has played (mailboxes alternate by parity).
struct TrafficState {
  std::vector<int> ghosts;
  int self_port = -1;
  int played = 0;
};

// One simulated rank group (an actor): where it and its mirrors sit on the
// platform, and what it has done so far.
struct ActorState {
  std::vector<Signal> signals;  // [StepState::signal_of[stage][task]]
  int host = -1;                // its platform host
  int ghost = -1;               // its ring neighbour's mirror (one replica simulated)
  // What each kind of layer traffic added for it and keeps as it plays
  // ([StepLowering::traffic index]), and the hosts they added.
  std::vector<TrafficState> traffic;
  int traffic_hosts = 0;
  // Every replica or class simulated: its ring edges' ports (class mode: the
  // edges inside the class, of its weight less one, and the edge to the next
  // class, of weight 1; else its host), and its readiness for its predecessor's.
  int ring_self = -1;
  int ring_out = -1;
  sg4::SemaphorePtr ring_ready;
  std::vector<Span> timeline;        // what it did, in order
  std::vector<double> sent_at;       // [direction * v * m + chunk * m + mb]: when each output left
  std::vector<double> task_sent_at;  // a traced workload's: [task], when its send left
  double wait_s = 0;                 // blocked on inputs and on blocking sends
  bool finished = false;             // played its stage's program to the end
  sg4::MutexPtr dp_stream;           // its data-parallel communicator: one collective at a time
};

// The lowering and what the actors change as they play it, owned by simulate_step.
struct StepState : StepLowering {
  explicit StepState(StepLowering lowering)
      : StepLowering(std::move(lowering)), replicas(replica_mode(all_replicas, classes)) {}

  [[nodiscard]] std::size_t index(int row, int stage) const {
    return static_cast<std::size_t>(row) * static_cast<std::size_t>(pp) +
           static_cast<std::size_t>(stage);
  }
  ActorState& actor(int row, int stage) { return actors[index(row, stage)]; }

  // How the replicas are instantiated: it plays the traffic between them.
  std::unique_ptr<const ReplicaMode> replicas;
  std::vector<Tag> tags;  // payloads: tags[chunk * m + micro_batch]
  // A traced workload's: [stage][task], the stage that receives the send (-1: none).
  std::vector<std::vector<int>> traced_receiver;
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
void record(StepState& p, int row, int stage, Activity a, double start, const std::string& name,
            int from_group = -1, double sent = 0);
// One flow between two platform hosts, waited for; the monitor sees it.
void transfer(StepState& p, int from, int to, const sg4::CommPtr& comm, double bytes);
// The data-parallel collectives of a fraction `share` of the stage's parameters.
void dp_collectives(StepState& p, int row, int stage, double share, bool gather);
// `share` of one collective of `bytes` a GPU, as its DpPhase says.
void play_dp_phase(StepState& p, int row, int stage, const DpPhase& d, double bytes, double share);
// A dp_collective task: its share of the stage's, or a traced workload's collective.
void collective_task(StepState& p, int row, int stage, const StepTask& t);
// Compute for `seconds` on the actor's host.
void compute_for(const StepState& p, double seconds);
// An F&B pass (step_pairs.cpp): its phases (sim/analytic/pair_passes.hpp), each
// with its all-to-alls played as flows beside its compute.
void run_pair(StepState& p, int row, int stage, const StepTask& t, double slow);
// dp_collectives beside compute, in turn on the rank's data-parallel communicator;
// their kernels take the profile's overlap_compute_share of the host's rate.
void dp_beside_compute(StepState& p, int row, int stage, const StepTask& t);
// Runs `work` beside the stage's own actor, on its host: traffic that overlaps.
sg4::ActorPtr beside(const std::string& name, const std::function<void()>& work);

// Whom an actor's flows of one collective go to and come from: the partners
// themselves, every replica simulated (a message to the mailbox each reads, and
// one from each in the actor's own), or ghosts mirroring them (a flow out to each
// and an equal one back, at once). Each kind of traffic names its peers;
// `exchange` plays them either way.
struct Peers {
  std::vector<std::pair<int, sg4::Mailbox*>> real;  // a partner's host and the mailbox it reads
  sg4::Mailbox* inbox = nullptr;                    // where the real partners' messages arrive
  std::vector<int> ghosts;                          // the mirrored partners' hosts
};
// `out_bytes[k]` to the k-th peer (real partners, then ghosts) and, from each
// ghost, `in_bytes` back (a real partner sends its own), all at once; returns when
// all are in.
void exchange(StepState& p, int self, const Peers& peers, const std::vector<double>& out_bytes,
              double in_bytes);
// A flow of `weight` members' traffic from `from` to `to` (ports whose links
// bound it to their members' NIC rate); not waited for.
sg4::CommPtr weighted_flow(StepState& p, int from, int to, double bytes, int weight);
// A slice of replica 0's trace inside its task's: a layer collective played as flows.
void trace_layer_collective(StepState& p, int row, int stage, const models::Collective& c,
                            double start);
// The traffic state kind `kind` keeps for the rank group.
TrafficState& traffic_state(StepState& p, int row, int stage, const LayerTraffic& kind);

}  // namespace myriad::sim::step_detail
