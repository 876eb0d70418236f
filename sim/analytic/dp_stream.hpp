// A stage's data-parallel stream with overlap.dp, as Megatron-LM's distributed
// data parallel runs it: one description that the step program builds its
// tasks from (sim/program/step_program.cpp) and the closed form plays in its
// sweep of an interleaved schedule (pipeline_makespan.hpp), so that the two
// cannot drift apart.
//
// Parameters are gathered bucket by bucket: chunk 0's first bucket before
// anything (on the compute stream), its other buckets beside its first forward
// (which waits for them before it sends), then each other chunk's whole, one
// after another on the link from the step's start; a chunk's first forward
// waits for its own (Megatron-LM's forward pre-hook waits for the bucket group
// it needs). Gradients are reduced chunk by chunk as the last micro-batch's
// backward makes them: all buckets but the last from the end of that
// backward's first bucket, beside it; the last once the backward (and its
// blocking send) is done. The link runs one collective at a time, in issue
// order (NCCL runs a communicator's kernels in order on one stream).
#pragma once

#include <span>

#include "models/plan/collective.hpp"
#include "sim/cost/comm_cost.hpp"

namespace myriad::sim {

// A collective of the stream: `share` of the stage's parameters, and how long it
// takes uncontended.
struct DpPiece {
  double share = 0;
  double seconds = 0;
};

struct DpStream {
  DpPiece first_gather;  // chunk 0's first bucket, before anything
  DpPiece first_rest;    // chunk 0's other buckets, beside its first forward
  DpPiece chunk_gather;  // each other chunk's parameters
  DpPiece early_reduce;  // a chunk's gradient buckets but the last
  DpPiece last_reduce;   // its last bucket
  double buckets = 1;    // per chunk
};

// The data-parallel collectives (`comms`, priced as `costs`) of `share` of a
// stage's parameters, gathers or reductions, one after another: each pays its
// latency whole and its bandwidth term in proportion (a bucket is a collective
// of its own).
double dp_collectives_time(std::span<const models::Collective> comms,
                           std::span<const CommCost> costs, double share, bool gather);

// The stream of a stage with `chunks` model chunks of `buckets` buckets each.
DpStream dp_stream(std::span<const models::Collective> comms, std::span<const CommCost> costs,
                   int chunks, double buckets);

}  // namespace myriad::sim
