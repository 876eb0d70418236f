#include "kernels/collectives/ring.hpp"

#include <numeric>
#include <string_view>
#include <vector>

#include "kernels/collectives/ring_steps.hpp"

namespace myriad::kernels::collectives {
namespace {

ScheduleBuilder ring_builder(std::string_view generator, CollectiveKind kind, int nranks,
                             std::int64_t bytes, int channels, int elem_bytes) {
  require_ranks(generator, nranks);
  require_at_least_one(generator, "channels", channels);
  require_bytes(generator, bytes, elem_bytes);
  CollectiveSpec spec;
  spec.kind = kind;
  spec.algorithm = CollectiveAlgorithm::ring;
  spec.nranks = nranks;
  spec.bytes = bytes;
  spec.elem_bytes = elem_bytes;
  spec.channels = channels;
  const int nchunks = checked_chunks(generator, nranks, channels);
  return {spec, {ChunkLayout::even(bytes, nchunks, elem_bytes)}};
}

// One ring per channel over all ranks; position r's shard on channel c is chunk r * channels + c.
std::vector<Ring> channel_rings(int nranks, int channels) {
  std::vector<Ring> rings(static_cast<std::size_t>(channels));
  for (int c = 0; c < channels; ++c) {
    Ring& ring = rings[static_cast<std::size_t>(c)];
    ring.channel = c;
    ring.members.resize(static_cast<std::size_t>(nranks));
    std::iota(ring.members.begin(), ring.members.end(), 0);
    for (int r = 0; r < nranks; ++r) ring.ranges.push_back({r * channels + c, 1});
  }
  return rings;
}

}  // namespace

Schedule make_ring_allreduce(int nranks, std::int64_t bytes, int channels, int elem_bytes) {
  ScheduleBuilder builder = ring_builder("make_ring_allreduce", CollectiveKind::all_reduce, nranks,
                                         bytes, channels, elem_bytes);
  const std::vector<Ring> rings = channel_rings(nranks, channels);
  append_ring_reduce_scatter(builder, rings);
  append_ring_allgather(builder, rings);
  return std::move(builder).finish();
}

Schedule make_ring_reduce_scatter(int nranks, std::int64_t bytes, int channels, int elem_bytes) {
  ScheduleBuilder builder = ring_builder("make_ring_reduce_scatter", CollectiveKind::reduce_scatter,
                                         nranks, bytes, channels, elem_bytes);
  append_ring_reduce_scatter(builder, channel_rings(nranks, channels));
  return std::move(builder).finish();
}

Schedule make_ring_allgather(int nranks, std::int64_t bytes, int channels, int elem_bytes) {
  ScheduleBuilder builder = ring_builder("make_ring_allgather", CollectiveKind::all_gather, nranks,
                                         bytes, channels, elem_bytes);
  append_ring_allgather(builder, channel_rings(nranks, channels));
  return std::move(builder).finish();
}

}  // namespace myriad::kernels::collectives
