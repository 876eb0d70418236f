// The step engine's lowering: a scenario turned into what its actors play,
// decided once, before any event, and without SimGrid (so it is built and
// tested alone). step_engine.cpp plays it on SimGrid.
//
// What it decides (step_engine.hpp says how each is then played):
//   - the actors: one per pipeline stage and data-parallel actor, an actor being
//     a replica or, with rank groups smaller than a node, the node's replicas
//     of one stage, which run in lockstep;
//   - the replicas simulated (rows): every one when asked; when traffic can
//     contend, one per class of replicas that share every uplink alike, its
//     traffic weighted by the class's size (replica_classes); else replica 0 and
//     each replica holding a straggler, their ring neighbours mirrored by ghosts;
//   - how each data-parallel collective is played (DpPhase), from the algorithm
//     the analytic engine picked for it;
//   - which kinds of layer traffic play each of a layer's tp, cp and ep
//     collectives as flows (layer_traffic.hpp), the others priced inside;
//   - each simulated rank group's node, and its GPU and link straggler factors.
#pragma once

#include <string>
#include <vector>

#include "models/plan/collective.hpp"
#include "models/plan/pipeline_schedule.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/pair_passes.hpp"
#include "sim/cost/comm_cost.hpp"
#include "sim/cost/device_profile.hpp"
#include "sim/program/step_program.hpp"
#include "sim/step/layer_traffic.hpp"
#include "sim/step/stragglers.hpp"

namespace myriad::sim {

// How one data-parallel collective is played, from the algorithm the analytic
// engine picked for it (sim/cost/comm_cost.hpp):
//   ring          one flow per ring edge between nodes, carrying the ring's
//                 bytes; the other 2(n-1) - 1 (or n - 2) hops' latency added;
//   tree          the same flows (the model gives NCCL's double binary tree the
//                 ring's bus bandwidth), with the tree's log-depth latency;
//   hierarchical  a reduce-scatter inside the node (NVLink, priced), the ring
//                 across nodes of each node's shards as flows (a node's ranks
//                 each carry 1/per_node of the data over their own NIC: together
//                 the flat ring's edge bytes at n = nodes), an all-gather inside
//                 the node.
// Every replica in one node: the collective never leaves it, priced whole.
struct DpPhase {
  models::CollectiveAlgorithm algorithm = models::CollectiveAlgorithm::none;
  CommCost before;             // hierarchical: the reduce-scatter inside the node
  double edge_factor = 0;      // flow bytes per GPU byte, per data-parallel ring
  double extra_latency_s = 0;  // the schedule's latency beyond the flow's own hop
  CommCost after;              // hierarchical: the all-gather inside the node
  double whole_s = 0;          // `whole`: its priced time
  // Played as its priced time, not as flows: one replica (every one in one node),
  // or a traced workload's collective over another group than the replicas'.
  bool whole = false;
};

// One simulated rank group (a row's actor at one stage): where it sits and how
// its stragglers slow it.
struct ActorPlace {
  int node = 0;         // its first node
  double slowdown = 1;  // GPU straggler factor: its compute takes this times as long
  double link = 1;      // link straggler factor: its NICs' bandwidth divided by it
};

// Consecutive replicas (actors) that live the same step under contention.
struct ReplicaClass {
  int first = 0;  // its first actor
  int size = 0;   // actors in it
};

struct StepLowering {
  int pp = 1;  // stages (the program's)
  // Actors per stage along data parallelism: the replicas, or with rank groups
  // smaller than a node the nodes they fill (`per_node` replicas each, which run
  // in lockstep: one actor plays them all, its traffic theirs together).
  int dp = 1;
  int dp_ranks = 1;              // data-parallel replicas: the collectives' ring length
  int per_node = 1;              // replicas one actor plays
  int nodes_per_group = 1;       // nodes one rank group spans (tp x cp over a node)
  double pp_bytes_per_node = 0;  // one activation transfer of a rank group
  double node_Bps = 0;           // a node's NICs together, at the profile's efficiency
  // The latency every flow pays itself: every route crosses the hop of the tier
  // joining the whole cluster (sim/topology/fat_tree_platform.hpp).
  double route_latency_s = 0;
  std::vector<DpPhase> dp_phases;  // [i]: how costs.dp_comms[i] is played
  // A traced workload's collectives (program.collectives[i]), played alike.
  std::vector<DpPhase> workload_phases;
  // The kinds of layer traffic played as flows (sim/step/layer_traffic.hpp), and
  // for each of the layer's exposed tp, cp and ep collectives in order the kinds
  // that play it (indices into `traffic`; none: priced inside the layer's time);
  // `layer_local` leaves what they play out.
  std::vector<LayerTrafficPtr> traffic;
  std::vector<std::vector<int>> forward_play;
  std::vector<std::vector<int>> backward_play;
  // The overlapped ones (costs.forward_beside, ...): flows started with the layer's
  // compute, which the layer waits for at its end.
  std::vector<std::vector<int>> forward_beside_play;
  std::vector<std::vector<int>> backward_beside_play;
  // An F&B pass's expert all-to-alls of one layer (pair_passes.hpp), forward's
  // then backward's (recomputation's too) in program order, exposed or
  // overlapped: the part of the pair each belongs to, and the kinds that play it
  // whole (none: its priced time is slept).
  struct PairA2aPlay {
    LayerCollective comm;
    PairA2a part = PairA2a::forward_first;
    std::vector<int> kinds;
  };
  std::vector<PairA2aPlay> pair_a2a;
  bool pair_flows = false;   // any of them played as flows
  bool layer_flows = false;  // any played as flows
  PassTimes layer_local;
  double actor_Bps = 0;  // an actor's NICs together (its share of a node's, or more)
  // Consecutive actors of a stage the widest traffic group spans (expert groups):
  // classes keep them whole; past one, replicas are coupled layer by layer.
  [[nodiscard]] int group_actors() const;
  // "expert.nvlink+expert.flows": the kinds that play a collective, for tests and logs.
  [[nodiscard]] std::string kinds(const std::vector<int>& plays) const;
  int group_gpus = 1;  // GPUs acting together in one actor (tp x cp x per_node)
  int dp_rings = 1;    // data-parallel rings through a node: one per tp x cp rank
  // What each stage of a replica runs, in order (sim/program/step_program.hpp):
  // the actors play it. Its schedule (v, m, chunk_layers), overlap flags and
  // priced costs are the lowering's too; nothing here copies them.
  StepProgram program;
  bool all_replicas = false;
  // The replicas simulated, one row of actors each (rows index `places` and the
  // engine's per-actor tables): all of them, or replica 0 and those holding a
  // straggler, each with its ring neighbours mirrored by ghosts. Actor rows, to
  // be exact: row r stands for replicas r * per_node onwards.
  std::vector<int> rows;
  // Every replica or class simulated: the row a replica leads (-1 inside a class).
  std::vector<int> row_of;
  // Class mode (contention): each row is a class of `weights[row]` consecutive
  // actors, played as one: its host's NICs are theirs together, its flows carry
  // their bytes together and take as many shares of every link they cross
  // (sim/topology/fat_tree_platform.hpp, weighted hosts). Outside class mode
  // every weight is 1.
  bool classes = false;
  std::vector<int> weights;        // [row]
  std::vector<ActorPlace> places;  // [row * pp + stage]
  std::vector<Straggler> stragglers;

  // The first node of actor `actor` (a row's value) at `stage`.
  [[nodiscard]] int first_node(const models::scenario::Scenario& s, int actor, int stage) const;
};

// The classes of actors (data-parallel positions) that share every uplink alike
// when traffic can contend: runs of consecutive actors under the same subtrees
// of every tier below the top at every stage. An actor stands alone where its
// ring edge to the next actor or from the previous one leaves a subtree (its NIC
// carries a flow the others' do not), and so do an actor holding a straggler
// and its two ring neighbours (which exchange with it). Within a class every
// member sends and receives the same flows over the same links at the same
// times, so max-min fairness gives them the same rates: one member played with
// the class's weight is every member played. `p` needs pp, dp and per_node.
std::vector<ReplicaClass> replica_classes(const StepLowering& p,
                                          const models::scenario::Scenario& s,
                                          const std::vector<Straggler>& stragglers);

// The most rank groups (actors: rows x stages) the step engine plays in one
// process, and the address space it takes a rank group. Measured on the 2-core
// development machine, 2026-12-04, Llama 3 405B with every replica played
// (overlapped data-parallel traffic: five helpers a rank group): peak virtual
// memory 250 MB with a handful of rank groups, 805 MB with 2,048, 1.36 GB with
// 4,096 (0.27 MB each); 8,192 (65,536 GPUs at 1:7 with stragglers, 279k flows)
// peaked at 1.65 GB resident in 99 s idle, 270 s shared; 65,536 (the same at
// 524,288 GPUs) was still building after 15 min, and where an allocation
// fails SimGrid aborts (xbt_malloc) or crashes, with no exception to catch.
// 16,384 (131,072 GPUs, issue 40) plays in about 80 s. 32,768 at 0.3 MB is
// about 10 GB and a few minutes: a judgement; below it, whether the machine
// has the memory is asked of the machine itself (simulate reserves the
// address space first and reports "out of memory" when it cannot).
inline constexpr int kMaxStepRankGroups = 32768;
inline constexpr double kStepBytesPerRankGroup = 0.3e6;

// Throws std::invalid_argument for scenarios the step engine cannot play (rank
// groups that neither fill whole nodes nor divide one, or stages sharing a node)
// and for steps past kMaxStepRankGroups, saying what makes them that large.
// `profile` is already on the scenario's hardware (on_hardware).
//
// A `workload` (a traced program, program_from_trace priced on `s`) is played
// instead of the scenario's own step: its files are the stages (as many as the
// scenario's pp), every replica runs it, its data-parallel collectives go over
// the replicas' rings as the scenario's own do, its other groups' collectives
// take their priced time, its sends their bytes between the stages' hosts.
StepLowering lower_step(const models::scenario::Scenario& s, const DeviceProfile& profile,
                        std::vector<Straggler> stragglers, bool all_replicas,
                        const StepProgram* workload = nullptr);

}  // namespace myriad::sim
