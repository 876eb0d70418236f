// A step program (sim/program/step_program.hpp) as Chakra execution traces: one
// file per pipeline stage, standing for every rank of that stage (their traces
// are alike: one replica's program, every replica running it), nodes in program
// order. What each task becomes:
//   pass, optimizer, join   COMP_NODE, its uncontended duration (a join takes none)
//   send                    COMM_SEND_NODE to the neighbouring stage's rank, and on
//                           that rank a COMM_RECV_NODE of the same tag, on which
//                           the pass it feeds depends
//   dp_collective           COMM_COLL_NODE (ALL_GATHER, REDUCE_SCATTER or
//                           ALL_REDUCE as the data-parallel collectives are),
//                           comm_size the bytes of the share it moves, pg_name "dp"
// Dependencies are data deps: each task on the previous one of its stream, and on
// what it waits for. A dependency on another task's start plus a lag (a bucket's
// reductions from the end of the backward's first bucket) has no Chakra form: the
// node depends on the node before that task, and says the rest in attributes
// (`myriad_after_start_of`, the node; `myriad_start_lag_us`). Myriad's own
// attributes (`myriad_stream`, `myriad_seconds`, `myriad_takes_share`) let a trace
// Myriad wrote read back as the program it came from.
#pragma once

#include <string>

#include "sim/chakra/et_set.hpp"
#include "sim/cost/device_profile.hpp"
#include "sim/program/step_program.hpp"

namespace myriad::sim::chakra {

// Ranks: rank r is stage r % pp of replica r / pp (Megatron-LM's order puts the
// data-parallel replicas first; a trace's ranks are the program's, one per stage
// and replica), `replicas` of them per stage.
EtSet program_trace(const StepProgram& p, const std::string& name, int replicas = 1);

// A trace as a step program the evaluator plays: one stage per file, each node a
// task in file order. COMP_NODEs are kernels of their traced duration (on the
// compute stream); COMM_COLL_NODEs collectives of their traced duration on the
// communicator's stream; COMM_SEND_NODEs sends let go; a COMM_RECV_NODE is the
// dependency of what depends on it on the send of the same source, destination and
// tag; other nodes are joins. What Myriad wrote comes back as it was (its
// attributes above). Throws EtError for a receive that no file sends, naming the
// file and the node. Traced durations are kept unless `pricing` is given.
//
// Priced on a scenario's cluster: each COMM_COLL_NODE with a comm_size takes what
// the analytic engine's collective cost gives its kind and size over the
// scenario's `group` (its ranks and nodes, its NICs and NVLink), and each
// COMM_SEND_NODE a point-to-point transfer of its size between pipeline stages;
// compute keeps its traced duration. What the trace measured runs on the
// scenario's network instead of the one it was measured on.
struct TracePricing {
  const models::scenario::Scenario* scenario = nullptr;
  const DeviceProfile* profile = nullptr;  // on the scenario's hardware
  models::GroupKind group = models::GroupKind::dp;
};
StepProgram program_from_trace(const EtSet& set, const TracePricing* pricing = nullptr);

}  // namespace myriad::sim::chakra
