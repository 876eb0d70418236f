// The step engine: one training step played as events on SimGrid.
//
// Platform: one host per node, joined by a star of split-duplex links, one per
// node, carrying the node's NICs together (NICs x rate x the profile's
// efficiency) with half a network hop of latency each way; this is a
// non-blocking fat tree (oversubscription is not built yet).
// Actors: one per pipeline stage and data-parallel replica (the TP x CP ranks of
// a node act together; their collectives are priced inside the compute times
// by the cost models, ARCHITECTURE.md principle 3). Each plays its stage's
// Megatron order (models/plan/pipeline_schedule.hpp): waits for its input,
// spends the forward or backward time of the chunk, sends its output to the
// neighbouring stage as one flow of the node's activations, blocking unless
// pipeline overlap is on. Data-parallel collectives run as rings of flows, one
// per edge between consecutive replicas, with the 2(n-1) (or n-1) hop latency
// added analytically; with DP overlap, a chunk's gradients are reduced as soon
// as its last backward is done and parameters of chunks after the first are
// gathered during the forward passes.
//
// Replicas: without contention or stragglers every data-parallel replica lives
// the same step, so by default one replica per stage is simulated and its ring
// neighbours are mirrored by a ghost host per stage (a flow out to it and an
// equal one back in, at the same moment); all_replicas simulates every one
// (a test holds the two to 1e-4).
//
// SimGrid allows one engine per process: simulate_step runs once per process.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

// A span of simulated time on one stage (replica 0), for traces.
struct TraceEvent {
  int stage = 0;
  std::string name;      // "fwd c0 mb3", "send", "wait", "data-parallel", "optimizer"
  std::string category;  // forward, backward, pp, wait, dp, optimizer
  double start_s = 0;
  double duration_s = 0;
};

struct StepSimulation {
  double step_time_s = 0;
  std::vector<TraceEvent> events;
  std::vector<double> wait_s;  // per stage: time replica 0 waited on inputs and sends
  std::size_t hosts = 0;
  std::size_t actors = 0;
  std::size_t flows = 0;  // transfers simulated
};

struct StepOptions {
  bool all_replicas = false;    // simulate every data-parallel replica
  bool sanitizer_safe = false;  // SimGrid thread contexts (for ASan builds)
};

// Throws std::logic_error when called a second time in the same process, and
// std::invalid_argument for scenarios it cannot play yet (stages sharing a node).
StepSimulation simulate_step(const scenario::Scenario& s, const DeviceProfile& profile,
                             const StepOptions& options = {});

}  // namespace myriad::sim
