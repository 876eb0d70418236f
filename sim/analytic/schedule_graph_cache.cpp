#include "sim/analytic/schedule_graph_cache.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

namespace myriad::sim {

const models::ScheduleGraph& cached_schedule_graph(models::scenario::Schedule schedule, int pp,
                                                   int v, int m) {
  // 1F1B and interleaved are one graph family, told apart by v.
  if (!models::named_schedule(schedule)) {
    schedule =
        v > 1 ? models::scenario::Schedule::interleaved : models::scenario::Schedule::one_f_one_b;
  }
  // A layout search meets a few hundred graphs, each many times, in no order:
  // every graph is kept until the kept ones hold kPassesKept passes (about 20
  // bytes each), then the least recently asked for go, never one of the last
  // kRecent (a caller may hold that many).
  constexpr std::size_t kPassesKept = std::size_t{1} << 21;
  constexpr std::uint64_t kRecent = 8;
  struct Kept {
    std::unique_ptr<models::ScheduleGraph> graph;
    std::uint64_t used = 0;
  };
  thread_local std::map<std::tuple<int, int, int, int>, Kept> kept;
  thread_local std::size_t passes = 0;
  thread_local std::uint64_t clock = 0;
  ++clock;
  const std::tuple<int, int, int, int> key{static_cast<int>(schedule), pp, v, m};
  if (const auto it = kept.find(key); it != kept.end()) {
    it->second.used = clock;
    return *it->second.graph;
  }
  auto graph = std::make_unique<models::ScheduleGraph>(models::schedule_graph(schedule, pp, v, m));
  passes += graph->nodes.size();
  while (passes > kPassesKept) {
    auto oldest = kept.end();
    for (auto it = kept.begin(); it != kept.end(); ++it) {
      if (it->second.used + kRecent <= clock &&
          (oldest == kept.end() || it->second.used < oldest->second.used)) {
        oldest = it;
      }
    }
    if (oldest == kept.end()) break;
    passes -= oldest->second.graph->nodes.size();
    kept.erase(oldest);
  }
  auto& slot = kept[key];
  slot = {std::move(graph), clock};
  return *slot.graph;
}

const models::ScheduleGraph& cached_schedule_graph(int pp, int v, int m) {
  return cached_schedule_graph(models::scenario::Schedule::one_f_one_b, pp, v, m);
}

const models::ScheduleGraph& cached_schedule_graph(const models::StepPlan& plan) {
  return cached_schedule_graph(plan.schedule, plan.pp, plan.virtual_stages, plan.micro_batches);
}

}  // namespace myriad::sim
