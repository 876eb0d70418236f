// Used by the checker, not part of the public API: what each collective
// starts from and must end with, on symbolic data.
//   all-reduce:     every rank ends with every rank's contribution in every chunk;
//   reduce-scatter: rank r ends with every contribution in its own shard;
//   all-gather:     rank r starts with its shard; every rank ends with every shard;
//   all-to-all:     rank j ends with rank i's block for j in its block from i
//                   (blocks of zero bytes excepted);
//   broadcast:      every rank ends with the root's data;
//   sendrecv:       dst ends with src's data.
#pragma once

#include <vector>

#include "kernels/collectives/checker.hpp"
#include "kernels/collectives/symbolic_buffer.hpp"

namespace myriad::kernels::collectives {

std::vector<SymbolicBuffer> initial_state(const Schedule& schedule);
CheckResult check_postcondition(const Schedule& schedule,
                                const std::vector<SymbolicBuffer>& final_state);

}  // namespace myriad::kernels::collectives
