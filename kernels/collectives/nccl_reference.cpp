// NCCL's own collectives beside the schedules, as the reference the NCCL
// executor's results and times are compared with (CUDA and NCCL builds).
#include "kernels/collectives/nccl_ranks_impl.hpp"

namespace myriad::kernels::collectives {

using nccl_detail::floats;
using nccl_detail::in_group;
using nccl_detail::Rank;

namespace {

// Bytes of rank r's shard in a ring layout (chunks [r * channels, (r + 1) * channels)),
// which NCCL's all-gather and reduce-scatter need equal on every rank.
std::int64_t equal_shard_bytes(const Schedule& s) {
  const int ch = s.spec.channels;
  const std::int64_t shard = s.layout(0).range_bytes(0, ch);
  for (int r = 1; r < s.nranks(); ++r) {
    if (s.layout(r).range_bytes(r * ch, ch) != shard) {
      throw std::invalid_argument(
          "NCCL reference: shards of unequal size; NCCL needs equal counts");
    }
  }
  return shard;
}

// All-to-all blocks (input half, then output half) of one size everywhere.
std::int64_t equal_block_bytes(const Schedule& s) {
  const std::int64_t block = s.layout(0).size(0);
  for (int r = 0; r < s.nranks(); ++r) {
    for (int c = 0; c < s.layout(r).nchunks(); ++c) {
      if (s.layout(r).size(c) != block) {
        throw std::invalid_argument("NCCL reference: all-to-all-v has no NCCL collective here");
      }
    }
  }
  return block;
}

}  // namespace

// NCCL's own collective for the schedule's spec, every rank's call in one group.
void NcclRanks::Impl::run_reference(const Schedule& s) {
  if (transport != P2pTransport::nccl) {
    throw std::invalid_argument(
        "NCCL reference: NCCL's collectives need one GPU per rank (NCCL refuses two ranks on one "
        "device)");
  }
  const auto n = static_cast<int>(ranks.size());
  const std::int64_t bytes = s.layout(0).bytes();
  const std::int64_t shard =
      s.spec.kind == CollectiveKind::all_gather || s.spec.kind == CollectiveKind::reduce_scatter
          ? equal_shard_bytes(s)
          : 0;
  const std::int64_t block = s.spec.kind == CollectiveKind::all_to_all ? equal_block_bytes(s) : 0;
  in_group([&] {
    for (int r = 0; r < n; ++r) {
      const Rank& k = ranks[static_cast<std::size_t>(r)];
      char* d = k.data.get();
      switch (s.spec.kind) {
        case CollectiveKind::all_reduce:
          MYRIAD_NCCL_CHECK(
              ncclAllReduce(d, d, floats(bytes), ncclFloat, ncclSum, k.comm, k.stream));
          break;
        case CollectiveKind::broadcast:
          MYRIAD_NCCL_CHECK(
              ncclBroadcast(d, d, floats(bytes), ncclFloat, s.spec.root, k.comm, k.stream));
          break;
        case CollectiveKind::all_gather:
          MYRIAD_NCCL_CHECK(
              ncclAllGather(d + r * shard, d, floats(shard), ncclFloat, k.comm, k.stream));
          break;
        case CollectiveKind::reduce_scatter:
          MYRIAD_NCCL_CHECK(ncclReduceScatter(d, d + r * shard, floats(shard), ncclFloat, ncclSum,
                                              k.comm, k.stream));
          break;
        case CollectiveKind::all_to_all:
          for (int j = 0; j < n; ++j) {
            MYRIAD_NCCL_CHECK(
                ncclSend(d + j * block, floats(block), ncclFloat, j, k.comm, k.stream));
            MYRIAD_NCCL_CHECK(
                ncclRecv(d + (n + j) * block, floats(block), ncclFloat, j, k.comm, k.stream));
          }
          break;
        case CollectiveKind::send_recv:
          if (s.spec.root == s.spec.dst) break;  // the schedule moves nothing either
          if (r == s.spec.root) {
            MYRIAD_NCCL_CHECK(ncclSend(d, floats(bytes), ncclFloat, s.spec.dst, k.comm, k.stream));
          }
          if (r == s.spec.dst) {
            MYRIAD_NCCL_CHECK(ncclRecv(d, floats(bytes), ncclFloat, s.spec.root, k.comm, k.stream));
          }
          break;
      }
    }
  });
}

}  // namespace myriad::kernels::collectives
