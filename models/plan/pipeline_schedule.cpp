#include "models/plan/pipeline_schedule.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace myriad::models {
namespace {

PipelineTask task(bool forward, int k, int pp, int v) {
  const int chunk = forward_chunk(k, pp, v);
  const int micro_batch = v == 1 ? k : (k / (pp * v)) * pp + k % pp;
  return {forward, forward ? chunk : v - 1 - chunk, micro_batch};
}

}  // namespace

int warmup_forwards(int pp, int v, int m, int stage) {
  return std::min((pp - stage - 1) * (v > 1 ? 2 : 1) + (v - 1) * pp, m * v);
}

int forward_chunk(int k, int pp, int v) { return (k % (pp * v)) / pp; }

std::vector<PipelineTask> pipeline_order(int pp, int v, int m, int stage) {
  if (pp < 1 || v < 1 || m < 1 || stage < 0 || stage >= pp) {
    throw std::invalid_argument(
        "pipeline_order: need pp >= 1, virtual_stages >= 1, "
        "micro_batches >= 1 and 0 <= stage < pp");
  }
  if (v > 1 && m % pp != 0) {
    throw std::invalid_argument("pipeline_order: the interleaved schedule needs micro_batches (" +
                                std::to_string(m) + ") to be a multiple of pp (" +
                                std::to_string(pp) + ")");
  }
  const int total = m * v;
  const int warmup = warmup_forwards(pp, v, m, stage);
  std::vector<PipelineTask> order;
  order.reserve(2 * static_cast<std::size_t>(total));
  int forwards = 0;
  int backwards = 0;
  for (; forwards < warmup; ++forwards) order.push_back(task(true, forwards, pp, v));
  while (forwards < total) {
    order.push_back(task(true, forwards++, pp, v));
    order.push_back(task(false, backwards++, pp, v));
  }
  while (backwards < total) order.push_back(task(false, backwards++, pp, v));
  return order;
}

namespace {

// ZB-H1 (see the header): 1F1B's order with each backward split, stage `stage`
// keeping up to `stage` weight-gradient passes waiting.
std::vector<PipelineTask> zb_h1_order(int pp, int m, int stage) {
  std::vector<PipelineTask> order;
  order.reserve(3 * static_cast<std::size_t>(m));
  const int warmup = warmup_forwards(pp, 1, m, stage);
  int forwards = 0;
  int backwards = 0;
  int weights = 0;
  for (; forwards < warmup; ++forwards) order.push_back({true, 0, forwards});
  while (backwards < m) {
    if (forwards < m) order.push_back({true, 0, forwards++});
    order.push_back({false, 0, backwards++, PassPart::input});
    while (backwards - weights > stage) order.push_back({false, 0, weights++, PassPart::weight});
  }
  while (weights < m) order.push_back({false, 0, weights++, PassPart::weight});
  return order;
}

}  // namespace

std::vector<PipelineTask> pipeline_order(scenario::Schedule schedule, int pp, int v, int m,
                                         int stage) {
  if (schedule != scenario::Schedule::zb_h1) return pipeline_order(pp, v, m, stage);
  if (v != 1) {
    throw std::invalid_argument("pipeline_order: zb-h1 runs one chunk a stage (virtual_stages " +
                                std::to_string(v) + ")");
  }
  (void)pipeline_order(pp, 1, m, stage);  // the same checks
  return zb_h1_order(pp, m, stage);
}

}  // namespace myriad::models

namespace myriad::models {

ScheduleGraph schedule_graph(int pp, int v, int m) {
  return schedule_graph(v > 1 ? scenario::Schedule::interleaved : scenario::Schedule::one_f_one_b,
                        pp, v, m);
}

ScheduleGraph schedule_graph(scenario::Schedule schedule, int pp, int v, int m) {
  // A node keeps its kind in 16 bits and its input in 32.
  if (4L * pp * v > std::numeric_limits<std::uint16_t>::max() ||
      3L * pp * v * m > std::numeric_limits<std::int32_t>::max()) {
    throw std::invalid_argument("schedule_graph: " + std::to_string(pp) + " stages of " +
                                std::to_string(v) + " chunks and " + std::to_string(m) +
                                " micro-batches are more passes than a schedule graph holds");
  }
  std::vector<std::vector<PipelineTask>> orders;
  std::size_t total = 0;
  for (int stage = 0; stage < pp; ++stage) {
    orders.push_back(pipeline_order(schedule, pp, v, m, stage));
    total += orders.back().size();
  }
  const auto key = [&](int stage, bool forward, int chunk, int micro_batch) {
    const std::size_t kind = static_cast<std::size_t>(stage) * 2 + (forward ? 0U : 1U);
    return (kind * static_cast<std::size_t>(v) + static_cast<std::size_t>(chunk)) *
               static_cast<std::size_t>(m) +
           static_cast<std::size_t>(micro_batch);
  };
  ScheduleGraph shape;  // its slots
  shape.pp = pp;
  shape.virtual_stages = v;
  shape.schedule = schedule;
  std::vector<int> node_of(static_cast<std::size_t>(2 * pp * v * m), -1);
  std::vector<bool> gradients;  // by node: whether it makes weight gradients
  std::vector<ScheduleGraph::Node> nodes;
  std::vector<int> depth;
  nodes.reserve(total);
  depth.reserve(total);
  std::vector<std::size_t> next(static_cast<std::size_t>(pp), 0);
  std::vector<int> last(static_cast<std::size_t>(pp), -1);
  // Stage by stage, each as far as its inputs allow, until every pass is placed.
  while (nodes.size() < total) {
    const std::size_t placed = nodes.size();
    for (int stage = 0; stage < pp; ++stage) {
      const auto s = static_cast<std::size_t>(stage);
      for (; next[s] < orders[s].size(); ++next[s]) {
        const PipelineTask& t = orders[s][next[s]];
        int input = -1;
        if (!t.moves()) {
          // Weight gradients: after their input gradients, earlier on the stage.
        } else if (t.forward && stage > 0) {
          input = node_of[key(stage - 1, true, t.chunk, t.micro_batch)];
        } else if (t.forward && t.chunk > 0) {
          input = node_of[key(pp - 1, true, t.chunk - 1, t.micro_batch)];
        } else if (!t.forward && stage < pp - 1) {
          input = node_of[key(stage + 1, false, t.chunk, t.micro_batch)];
        } else if (!t.forward && t.chunk < v - 1) {
          input = node_of[key(0, false, t.chunk + 1, t.micro_batch)];
        } else if (!t.forward) {
          input = node_of[key(stage, true, t.chunk, t.micro_batch)];
        }
        const bool first = (t.forward && stage == 0 && t.chunk == 0) || !t.moves();
        if (input < 0 && !first) break;  // its input is not placed yet
        ScheduleGraph::Node n;
        n.stage = static_cast<std::uint16_t>(stage);
        n.slot = static_cast<std::uint16_t>(shape.slot(stage, t));
        n.input = input;
        int d = last[s] < 0 ? 0 : depth[static_cast<std::size_t>(last[s])] + 1;
        if (input >= 0) d = std::max(d, depth[static_cast<std::size_t>(input)] + 1);
        last[s] = static_cast<int>(nodes.size());
        if (t.moves()) node_of[key(stage, t.forward, t.chunk, t.micro_batch)] = last[s];
        gradients.push_back(t.weight_gradients());
        nodes.push_back(n);
        depth.push_back(d);
      }
    }
    if (nodes.size() == placed) throw std::logic_error("schedule_graph: the schedule deadlocks");
  }
  // By depth: a node's inputs are shallower, so the order stays topological.
  std::vector<int> order(total);
  for (std::size_t i = 0; i < total; ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return depth[static_cast<std::size_t>(a)] < depth[static_cast<std::size_t>(b)];
  });
  std::vector<int> position(total);
  for (std::size_t i = 0; i < total; ++i)
    position[static_cast<std::size_t>(order[i])] = static_cast<int>(i);
  ScheduleGraph g = shape;
  g.micro_batches = m;
  g.nodes.reserve(total);
  g.role.assign(total, 0);
  // By stage and chunk: its first forward and its last pass making weight gradients.
  std::vector<int> first_forward(static_cast<std::size_t>(pp * v), -1);
  std::vector<int> last_gradients(static_cast<std::size_t>(pp * v), -1);
  for (const int i : order) {
    ScheduleGraph::Node n = nodes[static_cast<std::size_t>(i)];
    if (n.input >= 0) n.input = position[static_cast<std::size_t>(n.input)];
    const auto at = static_cast<int>(g.nodes.size());
    const auto chunk = static_cast<std::size_t>(n.stage * v + n.slot % v);
    const bool forward = n.slot < 2 * pp * v && (n.slot / v) % 2 == 0;
    if (forward && first_forward[chunk] < 0) {
      first_forward[chunk] = at;
      g.role[static_cast<std::size_t>(at)] = ScheduleGraph::kFirstForward;
    }
    if (gradients[static_cast<std::size_t>(i)]) last_gradients[chunk] = at;
    g.nodes.push_back(n);
  }
  for (const int at : last_gradients) {
    if (at >= 0) g.role[static_cast<std::size_t>(at)] = ScheduleGraph::kLastBackward;
  }
  return g;
}

}  // namespace myriad::models
