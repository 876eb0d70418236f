// The step engine: one training step played as events on SimGrid. What is
// played (actors, replicas simulated, how each collective is lowered) is decided
// first, without SimGrid, by sim/step/step_lowering.hpp.
//
// Platform: the scenario's fat tree (sim/topology/fat_tree_platform.hpp): one
// host per rank group, its nodes' NICs aggregated into one link (NICs x rate x
// the profile's efficiency), in the star zone of its leaf group; subtrees
// joined by aggregated uplinks that carry the tier's oversubscription; every
// route has the latency of the hop that joins the whole cluster (equal
// latencies, equal bandwidth shares: see there). With 1:1 everywhere it is
// non-blocking.
// Actors: one per pipeline stage and data-parallel replica (the TP x CP ranks of
// a stage and replica act together; collectives inside a node are priced inside
// the compute times by the cost models, ARCHITECTURE.md principle 3). Exposed
// layer collectives (no tp overlap) that leave the node are flows, layer by
// layer, their latency priced:
//   - an expert all-to-all, when a group's ranks fill whole actors of one node
//     each: its NVLink part priced, then a flow to and from every other node of
//     the group (the analytic engine's remote part);
//   - a tp or cp collective of a rank group spanning nodes (cp 2 at tp 8): a
//     flow to and from a ghost at the group's second node, taking the analytic
//     bandwidth term at the group's NIC rate.
// On the node's NICs and the tree with everything else, they contend and slow
// with a degraded link. Overlapped, they stay inside the layer's time. Each plays its stage's
// Megatron order (models/plan/pipeline_schedule.hpp): waits for its input,
// spends the forward or backward time of the chunk, sends its output to the
// neighbouring stage as one flow of the node's activations, blocking unless
// pipeline overlap is on. Data-parallel collectives are played as the algorithm
// the analytic engine picked for them: a ring (flows on the edges between
// consecutive replicas, the 2(n-1) or n-1 hops' latency added analytically), a
// double binary tree (the same flows, the model giving it the ring's bus
// bandwidth, and the tree's log-depth latency) or hierarchical (intra-node
// reduce-scatter and all-gather priced, the ring of shards across nodes as
// flows); with DP overlap, a chunk's gradients are reduced as soon
// as its last backward is done and parameters of chunks after the first are
// gathered during the forward passes.
//
// Replicas: without contention or stragglers every data-parallel replica lives
// the same step, so by default one replica per stage is simulated and its ring
// neighbours are mirrored by a ghost host per stage, placed where the next
// replica sits (a flow out to it and an equal one back in, at the same moment);
// all_replicas simulates every one (a test holds the two to 1e-4). With
// stragglers, replica 0 and each replica holding one are simulated, each
// mirrored so: a data-parallel phase starts for a replica when it arrives (its
// neighbours' data is already under way), so each lives its own step and the
// slowest sets it (a test holds this to every replica simulated). When
// traffic can contend (a tier below the one joining the whole job is
// oversubscribed) every replica is played, as classes (step_lowering.hpp,
// replica_classes): replicas under the same subtrees at every stage share every
// uplink alike, so one is played per class, its host's NICs the class's
// together and its flows carrying the class's bytes with as many max-min
// shares (fat_tree_platform.hpp, weighted platforms); a ring phase's edges
// inside the class are one flow from the class to itself, its edge to the next
// class one flow of weight 1 (a test holds classes to every replica played,
// to 1e-6, with and without stragglers). Each replica is played when expert
// all-to-alls between nodes are flows under contention or with stragglers (the
// all-to-alls couple a group's replicas layer by layer: a slow node slows its
// partners).
//
// Rank groups smaller than a node (tp x cp dividing it, e.g. Mixtral's tp 2 on
// 8-GPU nodes): the node's rank groups are consecutive replicas of one stage
// (Megatron's order: data parallelism next to tensor), which run in lockstep,
// so one actor on the node's host plays all of them and its flows carry their
// traffic together; the data-parallel ring's node-crossing edges are the flows
// between nodes. dp must be a multiple of the rank groups per node. Replicas
// are reported by the first of each actor's.
//
// Stragglers (sim/step/stragglers.hpp): a slow GPU's rank group spends its
// slowdown times the compute and optimizer time; a slow link's rank group has
// its NICs' bandwidth divided by it.
//
// What only the simulation knows, reported beside the step time: the step in
// estimate's categories, from the timeline of the rank group that computes the
// most (compute, exposed tp/cp/ep, pp sends, bubble, dp, optimizer;
// critical_path.hpp), waiting per rank group, the
// critical path (walked back from the step's end through the pipeline
// messages, sim/program/critical_path.hpp) and per-link mean utilization
// (sim/step/link_monitor.hpp).
//
// SimGrid allows one engine per process: simulate_step runs once per process.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/cost/device_profile.hpp"
#include "sim/program/critical_path.hpp"
#include "sim/step/link_load.hpp"
#include "sim/step/stragglers.hpp"

namespace myriad::sim {

// A span of simulated time on one stage (replica 0), for traces.
struct TraceEvent {
  int stage = 0;
  std::string name;      // "fwd c0 mb3", "send", "wait", "data-parallel", "optimizer",
                         // a layer collective played as flows ("ep.dispatch", inside its task)
  std::string category;  // forward, backward, pp, wait, dp, optimizer; tp, cp, ep
  double start_s = 0;
  double duration_s = 0;
};

// One simulated rank group (the tp x cp GPUs of one stage and replica).
struct RankGroupTime {
  int stage = 0;
  int replica = 0;
  double wait_s = 0;    // blocked on inputs and on blocking sends
  double finish_s = 0;  // end of its optimizer step
  double slowdown = 1;  // its slowest node's GPU straggler factor
};

struct StepSimulation {
  double step_time_s = 0;
  bool all_replicas = false;  // every replica simulated (else some, neighbours mirrored)
  std::vector<int> replicas;  // the replicas simulated (the first of each actor's)
  // Classes of replicas played as one (traffic that can contend): replicas[i]
  // stands for class_sizes[i] replicas from it on; outside classes all 1 (x the
  // replicas per actor).
  bool classes = false;
  std::vector<int> class_sizes;
  int replicas_per_actor = 1;  // more than 1 with rank groups smaller than a node
  std::vector<TraceEvent> events;
  std::vector<double> wait_s;         // per stage: time replica 0 waited on inputs and sends
  std::vector<RankGroupTime> groups;  // every simulated rank group, [row * pp + stage]
  // The last rank group to finish, its timeline by part (names as the analytic
  // engine's: compute, pp, bubble, dp, optimizer); sums to step_time_s.
  std::vector<BreakdownPart> breakdown;
  CriticalPath critical_path;
  std::vector<LinkLoad> links;  // every link direction that carried traffic, most utilized first
  std::vector<Straggler> stragglers;
  std::size_t hosts = 0;
  std::size_t actors = 0;
  std::size_t flows = 0;  // transfers simulated
};

struct StepProgram;  // sim/program/step_program.hpp

struct StepOptions {
  bool all_replicas = false;    // simulate every data-parallel replica
  bool sanitizer_safe = false;  // SimGrid thread contexts (for ASan builds)
  // Slow nodes; by default drawn from the scenario's faults.stragglers and seed.
  std::optional<std::vector<Straggler>> stragglers;
  // The step engine's log (SimGrid's XBT category myriad_step, on stderr): "" for
  // none, else a threshold: "verbose" (each stage's end) or "debug" (every
  // pipeline message and layer collective too).
  std::string log;
  // A traced workload to play instead of the scenario's step (lower_step).
  const StepProgram* workload = nullptr;
};

// Whether `level` is a log threshold StepOptions::log takes.
bool valid_step_log(const std::string& level);

// Throws std::logic_error when called a second time in the same process, and
// std::invalid_argument for scenarios it cannot play yet (stages sharing a node).
StepSimulation simulate_step(const models::scenario::Scenario& s, const DeviceProfile& profile,
                             const StepOptions& options = {});

}  // namespace myriad::sim
