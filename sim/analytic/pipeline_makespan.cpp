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
  // arrival[0] is what a node without an input waits for (nothing); node i's
  // output arrives at arrival[i + 1]. Every node's arrival is written before a
  // later node reads it.
  thread_local std::vector<double> arrival;
  thread_local std::vector<double> free_at;
  // Per kind of pass: what it adds to its stage's busy time and to its output's
  // arrival after it ends (a transfer, or nothing where the output stays).
  thread_local std::vector<double> hold_after;
  thread_local std::vector<double> send_after;
  if (arrival.size() < graph.nodes.size() + 1) arrival.resize(graph.nodes.size() + 1);
  arrival[0] = 0;
  free_at.assign(static_cast<std::size_t>(graph.pp), 0.0);
  const double hold = transfer.let_go ? 0.0 : transfer.seconds;
  const auto slots = static_cast<std::size_t>(graph.slots());
  hold_after.resize(slots);
  send_after.resize(slots);
  for (std::size_t k = 0; k < slots; ++k) {
    const bool sends = graph.sends(static_cast<int>(k));
    hold_after[k] = sends ? hold : 0.0;
    send_after[k] = sends ? transfer.seconds : 0.0;
  }
  double* const arrive = arrival.data() + 1;
  double* const stage_free = free_at.data();
  const double* const time = durations.data();
  const double* const held = hold_after.data();
  const double* const sent = send_after.data();
  const models::ScheduleGraph::Node* const nodes = graph.nodes.data();
  const std::size_t count = graph.nodes.size();
  // Branch-free; its time is the graph's depth in passes (each waits for the one
  // before it on its stage), the largest cost of an interleaved plan's estimate.
  for (std::size_t i = 0; i < count; ++i) {
    const models::ScheduleGraph::Node n = nodes[i];
    const double end = std::max(stage_free[n.stage], arrive[n.input]) + time[n.slot];
    stage_free[n.stage] = end + held[n.slot];
    arrive[i] = end + sent[n.slot];
  }
  if (marks != nullptr) {
    const auto end_of = [&](int k) {
      return arrive[k] - sent[graph.nodes[static_cast<std::size_t>(k)].slot];
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
    const auto& chunks = plan.layers_by_chunk[static_cast<std::size_t>(stage)];
    for (int chunk = 0; chunk < v; ++chunk) {
      const double layers = chunks[static_cast<std::size_t>(chunk)];
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
