#include "kernels/collectives/postcondition.hpp"

#include <fmt/format.h>

namespace myriad::kernels::collectives {
namespace {

// What one chunk of one rank must hold at the end.
struct Expectation {
  bool required = false;  // false: anything will do
  int origin = -1;        // the chunk of the original data
  int only_rank = -1;     // exactly this rank's data; -1: every rank's contribution
};

Expectation expected(const Schedule& s, int rank, int chunk) {
  const int n = s.nranks();
  switch (s.spec.kind) {
    case CollectiveKind::all_reduce:
      return {true, chunk, -1};
    case CollectiveKind::reduce_scatter:
      return {s.shard_of_chunk(chunk) == rank, chunk, -1};
    case CollectiveKind::all_gather:
      return {true, chunk, s.shard_of_chunk(chunk)};
    case CollectiveKind::broadcast:
      return {true, chunk, s.spec.root};
    case CollectiveKind::send_recv:
      return {rank == s.spec.dst, chunk, s.spec.root};
    case CollectiveKind::all_to_all:
      return {chunk >= n && s.layout(rank).size(chunk) > 0, rank, chunk - n};
  }
  return {};
}

// Whether rank `rank` holds the data it starts with in `chunk`, and from which origin.
bool starts_with(const Schedule& s, int rank, int chunk, int& origin) {
  const int n = s.nranks();
  origin = chunk;
  switch (s.spec.kind) {
    case CollectiveKind::all_reduce:
    case CollectiveKind::reduce_scatter:
      return true;
    case CollectiveKind::all_gather:
      return s.shard_of_chunk(chunk) == rank;
    case CollectiveKind::broadcast:
    case CollectiveKind::send_recv:
      return rank == s.spec.root;
    case CollectiveKind::all_to_all:
      return chunk < n;
  }
  return false;
}

std::string problem(const Expectation& want, const SymbolicBuffer& buf, int chunk, int nranks) {
  if (!buf.defined(chunk)) return "holds no data";
  if (buf.origin(chunk) != want.origin) {
    return fmt::format("holds data of chunk {} instead of chunk {}", buf.origin(chunk),
                       want.origin);
  }
  const auto set = buf.ranks(chunk);
  if (want.only_rank >= 0) {
    if (is_only(set, want.only_rank)) return {};
    return fmt::format("should hold rank {}'s data alone, holds the contributions of {}",
                       want.only_rank, format_ranks(set));
  }
  const int missing = first_missing(set, nranks);
  if (missing < 0) return {};
  return fmt::format(
      "should hold the contributions of all {} ranks, holds {} of them {} (rank {} missing)",
      nranks, count_ranks(set), format_ranks(set), missing);
}

}  // namespace

std::vector<SymbolicBuffer> initial_state(const Schedule& schedule) {
  const int n = schedule.nranks();
  std::vector<SymbolicBuffer> state;
  state.reserve(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    SymbolicBuffer& buf = state.emplace_back(schedule.layout(r).nchunks(), n);
    const int owner = schedule.spec.kind == CollectiveKind::broadcast ||
                              schedule.spec.kind == CollectiveKind::send_recv
                          ? schedule.spec.root
                          : r;
    for (int c = 0; c < buf.nchunks(); ++c) {
      int origin = -1;
      if (starts_with(schedule, r, c, origin)) buf.set_single(c, origin, owner);
    }
  }
  return state;
}

CheckResult check_postcondition(const Schedule& schedule,
                                const std::vector<SymbolicBuffer>& final_state) {
  const int n = schedule.nranks();
  for (int r = 0; r < n; ++r) {
    const SymbolicBuffer& buf = final_state[static_cast<std::size_t>(r)];
    for (int c = 0; c < buf.nchunks(); ++c) {
      const Expectation want = expected(schedule, r, c);
      if (!want.required) continue;
      const std::string what = problem(want, buf, c, n);
      if (what.empty()) continue;
      CheckResult result;
      result.ok = false;
      result.rank = r;
      result.message = fmt::format("{} ({}) does not hold: at the end, rank {} chunk {} {}",
                                   models::collective_key(schedule.spec.kind),
                                   models::algorithm_name(schedule.spec.algorithm), r, c, what);
      return result;
    }
  }
  return {};
}

}  // namespace myriad::kernels::collectives
