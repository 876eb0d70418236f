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
  return warmup_forwards(scenario::Schedule::one_f_one_b, pp, v, m, stage);
}

int warmup_forwards(scenario::Schedule schedule, int pp, int v, int m, int stage) {
  const int extra = schedule == scenario::Schedule::combined_1f1b ? 1 : 0;
  return std::min((pp - stage - 1) * (v > 1 ? 2 : 1) + (v - 1) * pp + extra, m * v);
}

int forward_chunk(int k, int pp, int v) { return (k % (pp * v)) / pp; }

namespace {

// 1F1B or interleaved (combined: each steady-state forward paired with the
// backward after it).
std::vector<PipelineTask> one_f_one_b_order(scenario::Schedule schedule, int pp, int v, int m,
                                            int stage) {
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
  const int warmup = warmup_forwards(schedule, pp, v, m, stage);
  const bool combined = schedule == scenario::Schedule::combined_1f1b;
  std::vector<PipelineTask> order;
  order.reserve(2 * static_cast<std::size_t>(total));
  int forwards = 0;
  int backwards = 0;
  for (; forwards < warmup; ++forwards) order.push_back(task(true, forwards, pp, v));
  while (forwards < total) {
    order.push_back(task(true, forwards++, pp, v));
    order.back().paired = combined;
    order.push_back(task(false, backwards++, pp, v));
  }
  while (backwards < total) order.push_back(task(false, backwards++, pp, v));
  return order;
}

}  // namespace

std::vector<PipelineTask> pipeline_order(int pp, int v, int m, int stage) {
  return one_f_one_b_order(scenario::Schedule::one_f_one_b, pp, v, m, stage);
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
  if (schedule == scenario::Schedule::combined_1f1b) {
    if (pp > 1 && v < 2) {
      throw std::invalid_argument(
          "pipeline_order: combined-1f1b with pp > 1 needs virtual_stages >= 2");
    }
    return one_f_one_b_order(schedule, pp, v, m, stage);
  }
  if (!splits_backward(schedule)) return pipeline_order(pp, v, m, stage);
  // DualPipe's two chunks a stage are its own: v is the scenario's 1, or those 2.
  if (schedule == scenario::Schedule::dualpipe && v == 2) return dualpipe_order(pp, m, stage);
  if (v != 1) {
    throw std::invalid_argument(std::string("pipeline_order: ") +
                                (schedule == scenario::Schedule::dualpipe ? "dualpipe" : "zb-h1") +
                                " runs one chunk a stage (virtual_stages " + std::to_string(v) +
                                ")");
  }
  if (schedule == scenario::Schedule::dualpipe) return dualpipe_order(pp, m, stage);
  (void)pipeline_order(pp, 1, m, stage);  // the same checks
  return zb_h1_order(pp, m, stage);
}

}  // namespace myriad::models

namespace myriad::models {

ScheduleGraph schedule_graph(int pp, int v, int m) {
  return schedule_graph(v > 1 ? scenario::Schedule::interleaved : scenario::Schedule::one_f_one_b,
                        pp, v, m);
}

namespace {

// Builds a schedule's graph: every stage's passes placed as far as their inputs
// allow, then ordered by depth.
class GraphBuilder {
 public:
  GraphBuilder(scenario::Schedule schedule, int pp, int v, int m)
      : pp_(pp), v_(chunks_per_stage(schedule, v)), m_(m) {
    // A node keeps its kind in 16 bits and its inputs in 32.
    if (ScheduleGraph::slots(schedule, pp, v_) > std::numeric_limits<std::uint16_t>::max() ||
        3L * pp * v_ * m > std::numeric_limits<std::int32_t>::max()) {
      throw std::invalid_argument("schedule_graph: " + std::to_string(pp) + " stages of " +
                                  std::to_string(v) + " chunks and " + std::to_string(m) +
                                  " micro-batches are more passes than a schedule graph holds");
    }
    for (int stage = 0; stage < pp; ++stage) {
      orders_.push_back(pipeline_order(schedule, pp, v, m, stage));
      total_ += orders_.back().size();
    }
    g_.pp = pp;
    g_.virtual_stages = v_;
    g_.schedule = schedule;
    g_.outputs.assign(static_cast<std::size_t>(g_.slots()), 0);
    node_of_.assign(2 * static_cast<std::size_t>(pp) * static_cast<std::size_t>(v_) *
                        static_cast<std::size_t>(m),
                    -1);
  }

  ScheduleGraph build() {
    std::vector<std::size_t> next(static_cast<std::size_t>(pp_), 0);
    // Stage by stage, each as far as its inputs allow, until every pass is placed.
    while (nodes_.size() < total_ - pairs_) {
      const std::size_t placed = nodes_.size();
      for (int stage = 0; stage < pp_; ++stage) {
        const auto& order = orders_[static_cast<std::size_t>(stage)];
        auto& at = next[static_cast<std::size_t>(stage)];
        while (at < order.size() && place(stage, order, at)) {
        }
      }
      if (nodes_.size() == placed) throw std::logic_error("schedule_graph: the schedule deadlocks");
    }
    return ordered();
  }

 private:
  [[nodiscard]] std::size_t key(int stage, bool forward, int chunk, int micro_batch) const {
    const std::size_t kind = static_cast<std::size_t>(stage) * 2 + (forward ? 0U : 1U);
    return (kind * static_cast<std::size_t>(v_) + static_cast<std::size_t>(chunk)) *
               static_cast<std::size_t>(m_) +
           static_cast<std::size_t>(micro_batch);
  }
  // The node whose output `t` waits for: -1 for none, -2 while it is not placed.
  [[nodiscard]] int input(int stage, const PipelineTask& t) const {
    if (!t.moves()) return -1;  // weight gradients: after their input's, on the stage
    const ChunkPlace from = input_of(g_.schedule, pp_, v_, stage, t);
    // None for the first position's forward, nor for the head's backward: its
    // own forward ran before it on its stage (and an F&B pass's output may still
    // be on its way to a neighbour then: no wait for it).
    if (from.stage < 0) return -1;
    const int node = node_of_[key(from.stage, t.forward, from.chunk, t.micro_batch)];
    return node < 0 ? -2 : node;
  }

  // Places the pass at `at` (and, paired, the backward after it); false while
  // an input is not placed.
  bool place(int stage, const std::vector<PipelineTask>& order, std::size_t& at) {
    const PipelineTask& t = order[at];
    const bool paired = t.paired && at + 1 < order.size();
    const int first = input(stage, t);
    const int second = paired ? input(stage, order[at + 1]) : -1;
    if (first == -2 || second == -2) return false;
    ScheduleGraph::Node n;
    n.stage = static_cast<std::uint16_t>(stage);
    n.slot = static_cast<std::uint16_t>(paired ? g_.pair_slot(stage, t.chunk, order[at + 1].chunk)
                                               : g_.slot(stage, t));
    n.input = first;
    const auto s = static_cast<std::size_t>(stage);
    if (last_.size() <= s) last_.resize(s + 1, -1);
    int d = last_[s] < 0 ? 0 : depth_[static_cast<std::size_t>(last_[s])] + 1;
    for (const int in : {first, second}) {
      if (in >= 0) d = std::max(d, depth_[static_cast<std::size_t>(in)] + 1);
    }
    const auto node = static_cast<int>(nodes_.size());
    last_[s] = node;
    Info info{t.chunk, t.forward, t.weight_gradients()};
    std::uint8_t outputs = 0;
    for (std::size_t k = 0; k < (paired ? 2U : 1U); ++k) {
      const PipelineTask& x = order[at + k];
      if (x.moves()) node_of_[key(stage, x.forward, x.chunk, x.micro_batch)] = node;
      if (output_of(g_.schedule, pp_, v_, stage, x).stage >= 0) ++outputs;
    }
    g_.outputs[n.slot] = outputs;
    if (paired) {
      info.backward_chunk = order[at + 1].chunk;
      ++pairs_;
    }
    nodes_.push_back(n);
    second_.push_back(second);
    depth_.push_back(d);
    info_.push_back(info);
    at += paired ? 2 : 1;
    return true;
  }

  // The nodes by depth (a node's inputs are shallower, so the order stays
  // topological; a depth's nodes are on different stages, independent), with
  // their roles.
  ScheduleGraph ordered() {
    const std::size_t count = nodes_.size();
    // A depth's nodes by stage (one each at most, so depth x pp + stage is a
    // node's own cell): the steady state's rounds then repeat node for node
    // (find_period). Placed by cell, without a comparison sort: a layout
    // search builds a graph for each schedule it meets.
    const auto pp = static_cast<std::size_t>(pp_);
    std::size_t depths = 0;
    for (const int d : depth_) depths = std::max(depths, static_cast<std::size_t>(d) + 1);
    std::vector<int> cells(depths * pp, -1);
    for (std::size_t i = 0; i < count; ++i) {
      cells[static_cast<std::size_t>(depth_[i]) * pp + nodes_[i].stage] = static_cast<int>(i);
    }
    std::vector<int> order;
    order.reserve(count);
    for (const int i : cells) {
      if (i >= 0) order.push_back(i);
    }
    std::vector<int> position(count);
    for (std::size_t i = 0; i < count; ++i)
      position[static_cast<std::size_t>(order[i])] = static_cast<int>(i);
    ScheduleGraph g = std::move(g_);
    g.micro_batches = m_;
    g.nodes.reserve(count);
    g.role.assign(count, 0);
    if (pairs_ > 0) g.second_input.reserve(count);
    // By stage and chunk: its first forward and its last pass making weight gradients.
    std::vector<int> first_forward(static_cast<std::size_t>(pp_ * v_), -1);
    std::vector<int> last_gradients(static_cast<std::size_t>(pp_ * v_), -1);
    for (const int i : order) {
      const auto k = static_cast<std::size_t>(i);
      ScheduleGraph::Node n = nodes_[k];
      if (n.input >= 0) n.input = position[static_cast<std::size_t>(n.input)];
      if (pairs_ > 0) {
        g.second_input.push_back(second_[k] >= 0 ? position[static_cast<std::size_t>(second_[k])]
                                                 : -1);
      }
      const auto at = static_cast<int>(g.nodes.size());
      const Info& info = info_[k];
      const std::size_t chunk = static_cast<std::size_t>(n.stage) * static_cast<std::size_t>(v_) +
                                static_cast<std::size_t>(info.chunk);
      if (info.forward && info.backward_chunk < 0 && first_forward[chunk] < 0) {
        first_forward[chunk] = at;
        g.role[static_cast<std::size_t>(at)] = ScheduleGraph::kFirstForward;
      }
      if (info.gradients) last_gradients[chunk] = at;
      if (info.backward_chunk >= 0) {  // an F&B pass's whole backward
        last_gradients[static_cast<std::size_t>(n.stage) * static_cast<std::size_t>(v_) +
                       static_cast<std::size_t>(info.backward_chunk)] = at;
      }
      g.nodes.push_back(n);
    }
    g.roles_first_end = 0;
    g.roles_last_begin = count;
    for (const int at : first_forward) {
      if (at >= 0)
        g.roles_first_end = std::max(g.roles_first_end, static_cast<std::size_t>(at) + 1);
    }
    for (const int at : last_gradients) {
      if (at < 0) continue;
      g.role[static_cast<std::size_t>(at)] = ScheduleGraph::kLastBackward;
      g.roles_last_begin = std::min(g.roles_last_begin, static_cast<std::size_t>(at));
    }
    find_period(g);
    return g;
  }

  struct Info {
    int chunk = 0;  // the (forward) pass's
    bool forward = true;
    bool gradients = false;   // it makes its chunk's weight gradients
    int backward_chunk = -1;  // a pair's backward's chunk
  };
  int pp_;
  int v_;  // chunks a stage
  int m_;
  std::vector<std::vector<PipelineTask>> orders_;
  std::size_t total_ = 0;  // tasks
  std::size_t pairs_ = 0;  // F&B pairs placed (one node for two tasks)
  ScheduleGraph g_;
  std::vector<int> node_of_;
  std::vector<ScheduleGraph::Node> nodes_;
  std::vector<int> second_;
  std::vector<int> depth_;
  std::vector<Info> info_;
  std::vector<int> last_;
};

}  // namespace

namespace {

// Whether node i + p runs node i's kind of pass a round of p nodes later.
bool repeats(const ScheduleGraph& g, std::size_t i, std::size_t p) {
  const auto& a = g.nodes[i];
  const auto& b = g.nodes[i + p];
  const auto later = [&](std::int32_t x, std::int32_t y) {
    return x < 0 ? y < 0 : y >= 0 && static_cast<std::size_t>(y) == static_cast<std::size_t>(x) + p;
  };
  return a.stage == b.stage && a.slot == b.slot && g.role[i] == g.role[i + p] &&
         later(a.input, b.input) &&
         (g.second_input.empty() || later(g.second_input[i], g.second_input[i + p]));
}

}  // namespace

// The round is a whole number of each stage's passes: per stage, 1F1B repeats
// every forward and backward (2), zero-bubble every three parts, an interleaved
// schedule every pp micro-batches through all v chunks (2 v pp); the longest
// stretch that repeats for any of those round lengths wins.
void find_period(ScheduleGraph& g) {
  const std::size_t n = g.nodes.size();
  g.earliest_input.assign(n + 1, static_cast<std::int32_t>(n));
  for (std::size_t i = n; i-- > 0;) {
    std::int32_t first = g.earliest_input[i + 1];
    if (g.nodes[i].input >= 0) first = std::min(first, g.nodes[i].input);
    if (!g.second_input.empty() && g.second_input[i] >= 0)
      first = std::min(first, g.second_input[i]);
    g.earliest_input[i] = first;
  }
  g.period = 0;
  g.live.clear();
  const auto pp = static_cast<std::size_t>(g.pp);
  const auto v = static_cast<std::size_t>(g.virtual_stages);
  std::size_t best = 0;  // nodes a sweep may skip: the stretch less two rounds
  // Combined 1F1B's F&B passes make its rounds v pp nodes a stage (interleaved)
  // or one (1F1B).
  for (const std::size_t passes :
       {2 * v * pp, 3 * v * pp, 2 * v, 3 * v, 2UL, 3UL, 4UL, v * pp, 1UL}) {
    const std::size_t p = passes * pp;
    std::size_t run = 0;
    for (std::size_t i = 0; i + p < n; ++i) {
      run = repeats(g, i, p) ? run + 1 : 0;
      // [i + 1 - run, i + p + 1) repeats; a sweep plays its first two rounds.
      if (run > p && run - p > best) {
        best = run - p;
        g.period = p;
        g.periodic_begin = i + 1 - run;
        g.periodic_end = i + p + 1;
      }
    }
  }
  if (g.period == 0) return;
  // A round's inputs from before its boundary: the first full round after the
  // first (every round has the same).
  const std::size_t at = g.periodic_begin + g.period;
  for (std::size_t i = at; i < at + g.period && i < g.periodic_end; ++i) {
    for (const std::int32_t in :
         {g.nodes[i].input, g.second_input.empty() ? -1 : g.second_input[i]}) {
      if (in >= 0 && static_cast<std::size_t>(in) < at) {
        g.live.push_back(static_cast<std::int32_t>(at - static_cast<std::size_t>(in)));
      }
    }
  }
  std::sort(g.live.begin(), g.live.end());
  g.live.erase(std::unique(g.live.begin(), g.live.end()), g.live.end());
}

ScheduleGraph schedule_graph(scenario::Schedule schedule, int pp, int v, int m) {
  return GraphBuilder(schedule, pp, v, m).build();
}

}  // namespace myriad::models
