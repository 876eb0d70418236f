// Runs a schedule on real data on the CPU: one std::thread per rank, and a
// mailbox (mutex, condition variable, FIFO) per (src, dst, channel), so that
// the same schedule the simulator costs moves and sums real bytes. Sends are
// eager, as the schedule's semantics say. The reduction is a sum of floats,
// done in the order the schedule fixes, so results do not depend on timing.
#pragma once

#include <vector>

#include "kernels/collectives/schedule.hpp"

namespace myriad::kernels::collectives {

// buffers[r] is rank r's buffer: layout(r).bytes() / 4 floats, in place
// (all-to-all: the input blocks, then the output blocks). The schedule must
// have 4-byte elements and pass check(); otherwise std::invalid_argument is
// thrown before any thread starts. An error in a rank's thread stops every
// rank and is rethrown here.
void execute(const Schedule& schedule, std::vector<std::vector<float>>& buffers);

}  // namespace myriad::kernels::collectives
