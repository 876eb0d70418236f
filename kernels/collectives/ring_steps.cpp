#include "kernels/collectives/ring_steps.hpp"

#include <algorithm>
#include <cstddef>

namespace myriad::kernels::collectives {
namespace {

// Position `p` shifted by `shift` around a ring of `size`, for any integer shift.
std::size_t around(std::size_t p, int shift, std::size_t size) {
  const auto n = static_cast<long long>(size);
  const long long q = (static_cast<long long>(p) + shift) % n;
  return static_cast<std::size_t>(q < 0 ? q + n : q);
}

// Both phases share the shape: at step k, send shard p + send_shift - k and
// receive shard p + send_shift - k - 1.
void append_ring_phase(ScheduleBuilder& builder, const std::vector<Ring>& rings, int send_shift,
                       StepKind receive) {
  std::size_t longest = 0;
  for (const Ring& ring : rings) longest = std::max(longest, ring.members.size());
  for (std::size_t k = 0; k + 1 < longest; ++k) {
    for (const Ring& ring : rings) {
      const std::size_t size = ring.members.size();
      if (k + 1 >= size) continue;
      const int step = static_cast<int>(k);
      for (std::size_t p = 0; p < size; ++p) {
        const int rank = ring.members[p];
        const int next = ring.members[around(p, 1, size)];
        const int prev = ring.members[around(p, -1, size)];
        const ChunkRange out = ring.ranges[around(p, send_shift - step, size)];
        const ChunkRange in = ring.ranges[around(p, send_shift - step - 1, size)];
        builder.send(rank, next, out, ring.channel);
        if (receive == StepKind::recv_reduce) {
          builder.recv_reduce(rank, prev, in, ring.channel);
        } else {
          builder.recv(rank, prev, in, ring.channel);
        }
      }
    }
  }
}

}  // namespace

void append_ring_reduce_scatter(ScheduleBuilder& builder, const std::vector<Ring>& rings) {
  append_ring_phase(builder, rings, -1, StepKind::recv_reduce);
}

void append_ring_allgather(ScheduleBuilder& builder, const std::vector<Ring>& rings) {
  append_ring_phase(builder, rings, 0, StepKind::recv);
}

}  // namespace myriad::kernels::collectives
