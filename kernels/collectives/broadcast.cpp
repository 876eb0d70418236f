#include "kernels/collectives/broadcast.hpp"

#include "kernels/collectives/schedule_builder.hpp"

namespace myriad::kernels::collectives {

Schedule make_broadcast(int nranks, int root, std::int64_t bytes, int chunks, int elem_bytes) {
  constexpr std::string_view kName = "make_broadcast";
  require_ranks(kName, nranks);
  require_rank_in_range(kName, "root", root, nranks);
  require_at_least_one(kName, "chunks", chunks);
  require_bytes(kName, bytes, elem_bytes);
  CollectiveSpec spec;
  spec.kind = CollectiveKind::broadcast;
  spec.algorithm = CollectiveAlgorithm::chain;
  spec.nranks = nranks;
  spec.bytes = bytes;
  spec.elem_bytes = elem_bytes;
  spec.root = root;
  ScheduleBuilder builder(spec, {ChunkLayout::even(bytes, chunks, elem_bytes)});
  // Position p in the chain is rank root + p; each receives a chunk, then passes it on.
  for (int p = 0; p < nranks; ++p) {
    const int rank = (root + p) % nranks;
    const int prev = (rank - 1 + nranks) % nranks;
    const int next = (rank + 1) % nranks;
    for (int c = 0; c < chunks; ++c) {
      if (p > 0) builder.recv(rank, prev, {c, 1});
      if (p + 1 < nranks) builder.send(rank, next, {c, 1});
    }
  }
  return std::move(builder).finish();
}

}  // namespace myriad::kernels::collectives
