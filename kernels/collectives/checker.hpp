// The symbolic checker: runs a schedule on symbolic data and says whether it
// performs its collective. Each chunk holds the set of ranks whose
// contributions it sums; send and recv move sets, recv_reduce unions them.
// The ranks advance step by step with FIFO channels per (src, dst, channel),
// sends eager, as every executor runs them. It finds, with the rank and step:
//  - malformed steps (peer, channel or chunks out of range, wrong byte count);
//  - a recv that does not match its send (other chunks, other sizes);
//  - sending or reducing a chunk that holds no data yet;
//  - a contribution reduced twice (double counting);
//  - deadlock: a recv whose send never comes, or ranks waiting in a cycle;
//  - sends never received;
//  - a final state that breaks the collective's postcondition.
#pragma once

#include <string>

#include "kernels/collectives/schedule.hpp"

namespace myriad::kernels::collectives {

struct CheckResult {
  bool ok = true;
  int rank = -1;        // the rank to blame, when there is one
  int step = -1;        // the index of the step in that rank's list, when there is one
  std::string message;  // empty when ok: "rank 3, step 7 (recv chunk 2 ...): what went wrong"
};

CheckResult check(const Schedule& schedule);

}  // namespace myriad::kernels::collectives
