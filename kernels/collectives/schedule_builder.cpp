#include "kernels/collectives/schedule_builder.hpp"

#include <fmt/format.h>

#include <limits>
#include <stdexcept>

namespace myriad::kernels::collectives {

ScheduleBuilder::ScheduleBuilder(CollectiveSpec spec, std::vector<ChunkLayout> layouts) {
  schedule_.spec = spec;
  schedule_.layouts = std::move(layouts);
  schedule_.steps.resize(static_cast<std::size_t>(spec.nranks));
}

void ScheduleBuilder::send(int rank, int peer, ChunkRange chunks, int channel) {
  add(rank, StepKind::send, peer, chunks, channel);
}

void ScheduleBuilder::recv(int rank, int peer, ChunkRange chunks, int channel) {
  add(rank, StepKind::recv, peer, chunks, channel);
}

void ScheduleBuilder::recv_reduce(int rank, int peer, ChunkRange chunks, int channel) {
  add(rank, StepKind::recv_reduce, peer, chunks, channel);
}

void ScheduleBuilder::copy(int rank, int src_chunk, ChunkRange dst) {
  add(rank, StepKind::copy, -1, dst, 0);
  schedule_.steps[static_cast<std::size_t>(rank)].back().src_chunk = src_chunk;
}

void ScheduleBuilder::add(int rank, StepKind kind, int peer, ChunkRange chunks, int channel) {
  Step step;
  step.kind = kind;
  step.peer = peer;
  step.channel = channel;
  step.chunk = chunks.first;
  step.count = chunks.count;
  step.bytes = schedule_.layout(rank).range_bytes(chunks.first, chunks.count);
  schedule_.steps[static_cast<std::size_t>(rank)].push_back(step);
}

void require_ranks(std::string_view generator, int nranks) {
  if (nranks < 1) {
    throw std::invalid_argument(
        fmt::format("{}: nranks must be at least 1, got {}", generator, nranks));
  }
}

void require_bytes(std::string_view generator, std::int64_t bytes, int elem_bytes) {
  if (elem_bytes < 1) {
    throw std::invalid_argument(
        fmt::format("{}: elem_bytes must be at least 1, got {}", generator, elem_bytes));
  }
  if (bytes < 0) {
    throw std::invalid_argument(fmt::format("{}: bytes must be >= 0, got {}", generator, bytes));
  }
  if (bytes % elem_bytes != 0) {
    throw std::invalid_argument(fmt::format(
        "{}: bytes ({}) is not a whole number of {}-byte elements", generator, bytes, elem_bytes));
  }
}

void require_at_least_one(std::string_view generator, std::string_view what, int value) {
  if (value < 1) {
    throw std::invalid_argument(
        fmt::format("{}: {} must be at least 1, got {}", generator, what, value));
  }
}

void require_rank_in_range(std::string_view generator, std::string_view what, int rank,
                           int nranks) {
  if (rank < 0 || rank >= nranks) {
    throw std::invalid_argument(
        fmt::format("{}: {} must be a rank in [0, {}), got {}", generator, what, nranks, rank));
  }
}

int checked_chunks(std::string_view generator, std::int64_t count_a, std::int64_t count_b) {
  const std::int64_t chunks = count_a * count_b;
  if (chunks > std::numeric_limits<int>::max()) {
    throw std::invalid_argument(fmt::format("{}: {} x {} chunks is too many for one schedule",
                                            generator, count_a, count_b));
  }
  return static_cast<int>(chunks);
}

}  // namespace myriad::kernels::collectives
