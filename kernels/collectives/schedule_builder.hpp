// Shared by the generators, not part of the public API: appends steps to a
// schedule with their byte counts taken from the layout, and checks the
// arguments every generator validates.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/collectives/schedule.hpp"

namespace myriad::kernels::collectives {

// A contiguous range of chunks.
struct ChunkRange {
  int first = 0;
  int count = 1;
};

class ScheduleBuilder {
 public:
  // `layouts`: one shared by every rank, or one per rank.
  ScheduleBuilder(CollectiveSpec spec, std::vector<ChunkLayout> layouts);

  void send(int rank, int peer, ChunkRange chunks, int channel = 0);
  void recv(int rank, int peer, ChunkRange chunks, int channel = 0);
  void recv_reduce(int rank, int peer, ChunkRange chunks, int channel = 0);
  void copy(int rank, int src_chunk, ChunkRange dst);

  [[nodiscard]] const Schedule& schedule() const { return schedule_; }
  Schedule finish() && { return std::move(schedule_); }

 private:
  void add(int rank, StepKind kind, int peer, ChunkRange chunks, int channel);

  Schedule schedule_;
};

// Argument checks: each throws std::invalid_argument naming the generator.
void require_ranks(std::string_view generator, int nranks);
void require_bytes(std::string_view generator, std::int64_t bytes, int elem_bytes);
void require_at_least_one(std::string_view generator, std::string_view what, int value);
void require_rank_in_range(std::string_view generator, std::string_view what, int rank, int nranks);
// The number of chunks, count_a * count_b, when it fits an int.
int checked_chunks(std::string_view generator, std::int64_t count_a, std::int64_t count_b);

}  // namespace myriad::kernels::collectives
