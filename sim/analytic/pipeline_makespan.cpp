#include "sim/analytic/pipeline_makespan.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <stdexcept>
#include <vector>

namespace myriad::sim {

double pipeline_makespan(const models::ScheduleGraph& graph, std::span<const double> durations,
                         PipelineTransfer transfer, PipelineMarks* marks) {
  if (durations.size() != static_cast<std::size_t>(graph.slots())) {
    throw std::invalid_argument("pipeline_makespan: one duration per pass kind expected");
  }
  thread_local std::vector<double> arrival;
  thread_local std::vector<double> free_at;
  // Every node's arrival is written before a later node reads it.
  if (arrival.size() < graph.nodes.size()) arrival.resize(graph.nodes.size());
  free_at.assign(static_cast<std::size_t>(graph.pp), 0.0);
  const double hold = transfer.let_go ? 0.0 : transfer.seconds;
  double* const arrive = arrival.data();
  double* const stage_free = free_at.data();
  const double* const time = durations.data();
  std::size_t i = 0;
  for (const models::ScheduleGraph::Node& n : graph.nodes) {
    double start = stage_free[n.stage];
    if (n.input >= 0) start = std::max(start, arrive[n.input]);
    const double end = start + time[n.slot];
    stage_free[n.stage] = n.sends ? end + hold : end;
    arrive[i++] = n.sends ? end + transfer.seconds : end;
  }
  if (marks != nullptr) {
    const auto end_of = [&](int k) {
      return arrive[k] - (graph.nodes[static_cast<std::size_t>(k)].sends ? transfer.seconds : 0.0);
    };
    marks->first_forward_start.clear();
    marks->last_backward_end.clear();
    for (const int k : graph.first_forward) {
      marks->first_forward_start.push_back(end_of(k) -
                                           time[graph.nodes[static_cast<std::size_t>(k)].slot]);
    }
    for (const int k : graph.last_backward) marks->last_backward_end.push_back(end_of(k));
  }
  return *std::max_element(free_at.begin(), free_at.end());
}

double interleaved_pipeline_time(const models::StepPlan& plan, PassTimes layer, PassTimes embedding,
                                 PassTimes head, PipelineTransfer transfer, PipelineMarks* marks) {
  const int pp = plan.pp;
  const int v = plan.virtual_stages;
  const auto& graph = cached_schedule_graph(pp, v, plan.micro_batches);
  thread_local std::vector<double> durations;
  durations.resize(static_cast<std::size_t>(graph.slots()));
  for (int stage = 0; stage < pp; ++stage) {
    const double layers =
        static_cast<double>(plan.layers_by_stage[static_cast<std::size_t>(stage)]) / v;
    for (int chunk = 0; chunk < v; ++chunk) {
      PassTimes t{layers * layer.forward, layers * layer.backward};
      if (stage == 0 && chunk == 0) {
        t.forward += embedding.forward;
        t.backward += embedding.backward;
      }
      if (stage == pp - 1 && chunk == v - 1) {
        t.forward += head.forward;
        t.backward += head.backward;
      }
      const auto forward = static_cast<std::size_t>(stage) * 2 * static_cast<std::size_t>(v) +
                           static_cast<std::size_t>(chunk);
      durations[forward] = t.forward;
      durations[forward + static_cast<std::size_t>(v)] = t.backward;
    }
  }
  return pipeline_makespan(graph, durations, transfer, marks);
}

const models::ScheduleGraph& cached_schedule_graph(int pp, int v, int m) {
  constexpr std::size_t kKept = 8;
  thread_local std::array<std::unique_ptr<models::ScheduleGraph>, kKept> kept;
  thread_local std::size_t oldest = 0;
  for (const auto& g : kept) {
    if (g && g->pp == pp && g->virtual_stages == v && g->micro_batches == m) return *g;
  }
  auto& slot = kept[oldest];
  oldest = (oldest + 1) % kKept;
  slot = std::make_unique<models::ScheduleGraph>(models::schedule_graph(pp, v, m));
  return *slot;
}

}  // namespace myriad::sim
