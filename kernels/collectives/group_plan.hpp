// A schedule lowered to rounds of grouped point-to-point operations, the form
// in which NCCL runs it (nccl_executor.hpp): each round is one
// ncclGroupStart/ncclGroupEnd holding every rank's sends and receives, with local
// copies before it and the reductions of received chunks after it.
//
// A schedule's sends are eager (schedule.hpp); NCCL's are not: a send completes
// only with its matching receive, and NCCL pairs the sends from s to d with the
// receives on d from s in the order they are posted. The lowering therefore
//  - posts a send and its receive in the same round, and orders each rank's
//    receives by the position of their sends on the sending rank;
//  - takes, per round, each rank's longest run of consecutive sends and
//    receives that touch disjoint bytes (operations in one group run
//    concurrently), cut back until every operation's partner is in the round;
//  - receives a recv_reduce into scratch space and adds it to the chunk after
//    the group (our reduction kernel, not NCCL's);
//  - when no rank can post anything, copies each rank's pending send to staging
//    space (the eager semantics, made explicit) and posts it from there later.
// Pure C++: the plan is checked on the CPU by execute_plan below.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/collectives/schedule.hpp"

namespace myriad::kernels::collectives {

// The three buffers of a rank: its data (the schedule's layout), scratch for
// received chunks awaiting reduction, staging for sends copied ahead of time.
enum class Region : std::uint8_t { data, scratch, staging };

struct Place {
  Region region = Region::data;
  std::int64_t offset = 0;  // bytes from the region's start

  friend bool operator==(const Place&, const Place&) = default;
};

enum class GroupOpKind : std::uint8_t {
  copy,    // local: dst <- src, before the group
  send,    // inside the group: src to `peer`
  recv,    // inside the group: dst <- from `peer`
  reduce,  // local, after the group: dst += src (src in scratch)
};

struct GroupOp {
  GroupOpKind kind = GroupOpKind::copy;
  int peer = -1;
  Place dst;  // copy, recv, reduce
  Place src;  // copy, send, reduce
  std::int64_t bytes = 0;

  friend bool operator==(const GroupOp&, const GroupOp&) = default;
};

// One rank's part of a round, in the order it runs.
struct RankRound {
  std::vector<GroupOp> before;  // copies (schedule copies and staging of sends)
  std::vector<GroupOp> group;   // sends, then receives, inside one NCCL group
  std::vector<GroupOp> after;   // reductions of received chunks
};

struct GroupPlan {
  int nranks = 0;
  std::vector<std::vector<RankRound>> rounds;  // rounds[k][rank]
  std::vector<std::int64_t> scratch_bytes;     // [rank]: scratch space the plan needs
  std::vector<std::int64_t> staging_bytes;     // [rank]: staging space the plan needs
};

// Throws std::invalid_argument unless the schedule passes check(); std::logic_error
// if it cannot be lowered (a bug: every checked schedule can).
GroupPlan make_group_plan(const Schedule& schedule);

// Runs a plan on host buffers as NCCL would (sends of a round read before any of
// its receives write; receives matched in posting order per (sender, receiver))
// and sums reductions as floats. buffers[r]: layout(r).bytes() / 4 floats. Throws
// std::logic_error on a receive without a matching send or a size mismatch.
void execute_plan(const GroupPlan& plan, std::vector<std::vector<float>>& buffers);

}  // namespace myriad::kernels::collectives
