#include "kernels/collectives/sendrecv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/collectives/schedule_builder.hpp"

namespace myriad::kernels::collectives {

Schedule make_sendrecv(int src, int dst, std::int64_t bytes, int elem_bytes) {
  constexpr std::string_view kName = "make_sendrecv";
  if (src < 0 || dst < 0) {
    throw std::invalid_argument(
        fmt::format("{}: ranks must be >= 0, got src {} and dst {}", kName, src, dst));
  }
  require_bytes(kName, bytes, elem_bytes);
  CollectiveSpec spec;
  spec.kind = CollectiveKind::send_recv;
  spec.algorithm = CollectiveAlgorithm::p2p;
  spec.nranks = std::max(src, dst) + 1;
  spec.bytes = bytes;
  spec.elem_bytes = elem_bytes;
  spec.root = src;
  spec.dst = dst;
  ScheduleBuilder builder(spec, {ChunkLayout::even(bytes, 1, elem_bytes)});
  if (src != dst) {
    builder.send(src, dst, {0, 1});
    builder.recv(dst, src, {0, 1});
  }
  return std::move(builder).finish();
}

}  // namespace myriad::kernels::collectives
