// The CPU calibration grid's collectives (cpu_collective_cases.hpp).
#include "calibration/measure/cpu_collective_cases.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/collectives/alltoall.hpp"
#include "kernels/collectives/byte_accounting.hpp"
#include "kernels/collectives/double_binary_tree.hpp"
#include "kernels/collectives/ring.hpp"
#include "kernels/collectives/thread_executor.hpp"

namespace myriad::calibration {
namespace {

namespace coll = myriad::kernels::collectives;

// The hops the cost model charges latency for (sim/cost/comm_cost: a ring's).
// Rank r's element i starts as r + 1 + i % 5 (small integers: sums are exact).
float start_value(int rank, std::size_t i) {
  return static_cast<float>(rank + 1 + static_cast<int>(i % 5));
}

// The collectives' executor takes plain vectors (its ranks' buffers).
std::string verify(const coll::Schedule& s, std::vector<std::vector<float>>& buffers) {
  const int n = s.nranks();
  for (int r = 0; r < n; ++r) {
    auto& b = buffers[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = start_value(r, i);
  }
  if (s.spec.kind == coll::CollectiveKind::all_to_all) {
    const std::size_t block = buffers[0].size() / (2 * static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {  // input block j of rank r: 100 r + j
      for (int j = 0; j < n; ++j) {
        std::fill_n(buffers[static_cast<std::size_t>(r)].begin() +
                        static_cast<std::ptrdiff_t>(block * static_cast<std::size_t>(j)),
                    block, static_cast<float>(100 * r + j));
      }
    }
    coll::execute(s, buffers);
    for (int r = 0; r < n; ++r) {
      for (int i = 0; i < n; ++i) {
        const float want = static_cast<float>(100 * i + r);
        const auto first = block * static_cast<std::size_t>(n + i);
        for (std::size_t e = first; e < first + block; ++e) {
          if (buffers[static_cast<std::size_t>(r)][e] != want) {
            return fmt::format("rank {} output block {} holds {}, expected {}", r, i,
                               buffers[static_cast<std::size_t>(r)][e], want);
          }
        }
      }
    }
    return "pass";
  }
  coll::execute(s, buffers);
  const auto& layout = s.layout(0);
  for (int r = 0; r < n; ++r) {
    const auto& b = buffers[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < b.size(); ++i) {
      const auto chunk_owner = [&] {  // the shard (rank) this element belongs to
        int c = 0;
        while (layout.offset(c + 1) <= static_cast<std::int64_t>(4 * i)) ++c;
        return s.shard_of_chunk(c);
      };
      float want = 0;
      switch (s.spec.kind) {
        case coll::CollectiveKind::all_reduce:
          for (int q = 0; q < n; ++q) want += start_value(q, i);
          break;
        case coll::CollectiveKind::reduce_scatter:
          if (chunk_owner() != r) continue;
          for (int q = 0; q < n; ++q) want += start_value(q, i);
          break;
        case coll::CollectiveKind::all_gather:
          want = start_value(chunk_owner(), i);
          break;
        default:
          return "pass";
      }
      if (b[i] != want)
        return fmt::format("rank {} element {} is {}, expected {}", r, i, b[i], want);
    }
  }
  return "pass";
}

}  // namespace

Case collective_case(const CollectiveShape& shape, int ranks, std::int64_t bytes) {
  coll::Schedule schedule;
  switch (shape.kind) {
    case coll::CollectiveKind::all_reduce:
      schedule = shape.algorithm == coll::CollectiveAlgorithm::tree
                     ? coll::make_tree_allreduce(ranks, bytes, 1, 4)
                     : coll::make_ring_allreduce(ranks, bytes, 1, 4);
      break;
    case coll::CollectiveKind::reduce_scatter:
      schedule = coll::make_ring_reduce_scatter(ranks, bytes, 1, 4);
      break;
    case coll::CollectiveKind::all_gather:
      schedule = coll::make_ring_allgather(ranks, bytes, 1, 4);
      break;
    case coll::CollectiveKind::all_to_all:
      schedule = coll::make_alltoall(ranks, bytes / ranks, 4);
      break;
    default:
      throw std::logic_error("calibration: unsupported collective");
  }
  Case c;
  const std::string family = fmt::format("{}.{}", models::collective_key(shape.kind),
                                         models::algorithm_name(shape.algorithm));
  c.row.name = fmt::format("{} ranks={} bytes={}", family, ranks, bytes);
  c.row.kind = RowKind::collective;
  c.row.family = family;
  c.row.bytes = static_cast<double>(bytes);
  c.row.arguments = {
      {"ranks", ranks}, {"bytes", bytes}, {"executor", "threads"}, {"dtype", "fp32"}};
  c.row.collective = {shape.kind,
                      shape.algorithm,
                      false,
                      ranks,
                      static_cast<double>(bytes),
                      models::busbw_factor(shape.kind, ranks),
                      models::ring_steps(shape.kind, ranks)};
  auto sched = std::make_shared<coll::Schedule>(std::move(schedule));
  c.prepare = [sched] {
    auto buffers = std::make_shared<std::vector<std::vector<float>>>();
    for (int r = 0; r < sched->nranks(); ++r) {
      // Zeros while timing: sums stay finite however many iterations run.
      buffers->emplace_back(static_cast<std::size_t>(sched->layout(r).bytes() / 4), 0.0F);
    }
    Instance inst;
    inst.run = [=] { coll::execute(*sched, *buffers); };
    inst.check = [=] { return verify(*sched, *buffers); };
    return inst;
  };
  return c;
}

}  // namespace myriad::calibration
