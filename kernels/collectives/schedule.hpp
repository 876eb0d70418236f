// A collective as data: for each rank, the ordered steps (send, receive,
// receive-and-reduce, local copy) it performs on the chunks of its buffer.
// One schedule is generated once and then run by every consumer: the symbolic
// checker (checker.hpp), the thread executor (thread_executor.hpp), the NCCL
// executor, and sim/step/collective_lowering (which plays a schedule on SimGrid
// to check the step engine's cheaper lowering). Modelled on MSCCL's schedules.
//
// Semantics every consumer shares:
//  - steps of different ranks may run concurrently; the steps of one rank run
//    in order;
//  - a send is eager (buffered): it never waits for its receiver;
//  - a recv (or recv_reduce) on rank d from peer s on channel c takes the
//    oldest unmatched send from s to d on channel c (FIFO per (src, dst,
//    channel)); both name the same number of chunks of the same sizes, and,
//    unless the collective is an all-to-all, the same chunks;
//  - recv overwrites the chunks it names; recv_reduce adds into them;
//  - copy copies chunks [src_chunk, src_chunk + count) onto [chunk, chunk + count)
//    of the same rank's buffer (the ranges may not overlap).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/collectives/chunk_layout.hpp"
#include "models/plan/collective.hpp"

namespace myriad::kernels::collectives {

// The collective and its algorithm, as every layer names them (models/plan/collective.hpp).
using models::CollectiveAlgorithm;
using models::CollectiveKind;

enum class StepKind : std::uint8_t { send, recv, recv_reduce, copy };

struct Step {
  StepKind kind = StepKind::send;
  int peer = -1;  // send: destination rank; recv, recv_reduce: source rank; copy: -1
  int channel = 0;
  int chunk = 0;           // first chunk sent from, received into, or copied onto
  int count = 1;           // chunks [chunk, chunk + count)
  int src_chunk = -1;      // copy: first chunk copied from; -1 otherwise
  std::int64_t bytes = 0;  // bytes of the chunk range in this rank's layout

  friend bool operator==(const Step&, const Step&) = default;
};

// What was asked for: the collective, its algorithm and parameters.
struct CollectiveSpec {
  CollectiveKind kind = CollectiveKind::all_reduce;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::ring;
  int nranks = 1;
  // nccl-tests' "size": the buffer for all-reduce and broadcast; the whole
  // (gathered, or to be scattered) buffer for all-gather and reduce-scatter;
  // for all-to-all what one rank sends in all (its largest row for all-to-all-v);
  // the message for sendrecv.
  std::int64_t bytes = 0;
  int elem_bytes = 1;      // chunks hold whole elements of this size
  int channels = 1;        // rings (ring), trees (double binary tree), else 1
  int root = -1;           // broadcast: the root; sendrecv: the source; else -1
  int dst = -1;            // sendrecv: the destination; else -1
  int ranks_per_node = 0;  // hierarchical: ranks in one node; else 0
};

struct Schedule {
  CollectiveSpec spec;
  // Either one layout shared by every rank, or one per rank (all-to-all-v).
  std::vector<ChunkLayout> layouts;
  std::vector<std::vector<Step>> steps;  // steps[rank], in order

  [[nodiscard]] int nranks() const { return spec.nranks; }
  [[nodiscard]] const ChunkLayout& layout(int rank) const {
    return layouts.size() == 1 ? layouts.front() : layouts[static_cast<std::size_t>(rank)];
  }
  [[nodiscard]] const std::vector<Step>& rank_steps(int rank) const {
    return steps[static_cast<std::size_t>(rank)];
  }
  // Whether a recv must name the same chunks as the send it matches. All-to-all
  // sends block j of its input and receives into its output's block i.
  [[nodiscard]] bool recv_names_sent_chunks() const {
    return spec.kind != CollectiveKind::all_to_all;
  }
  // Reduce-scatter and all-gather: rank r's shard is the chunks
  // [r * channels, (r + 1) * channels), one per channel.
  [[nodiscard]] int shard_of_chunk(int chunk) const { return chunk / spec.channels; }
};

std::string to_string(StepKind kind);
// "recv_reduce chunk 5 (1024 bytes) from rank 2 on channel 0": for messages.
std::string describe(const Step& step);

}  // namespace myriad::kernels::collectives
