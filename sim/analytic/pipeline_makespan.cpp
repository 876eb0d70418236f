#include "sim/analytic/pipeline_makespan.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace myriad::sim {
namespace {

// Per kind of pass: what it adds to its stage's busy time (`held`) and to its
// output's arrival after it ends (`sent`): a transfer, blocking or let go, or
// nothing where the output stays on the stage.
void transfer_times(const models::ScheduleGraph& graph, PipelineTransfer transfer,
                    std::vector<double>& held, std::vector<double>& sent) {
  const double hold = transfer.let_go ? 0.0 : transfer.seconds;
  const auto slots = static_cast<std::size_t>(graph.slots());
  held.resize(slots);
  sent.resize(slots);
  for (std::size_t k = 0; k < slots; ++k) {
    const int outputs = graph.outputs[k];
    // A DualPipe F&B pass sends two, to the same neighbour, together.
    held[k] = outputs * hold;
    sent[k] = outputs * transfer.seconds;
  }
}

// Plays nodes [from, to) by play(a, b), which sweeps nodes [a, b) keeping each
// stage's free time in `free` and node i's output's arrival in arrive[i]. Where
// the graph repeats (ScheduleGraph::period), a round played from a state c later
// (every stage free c later, every output it reads c later) ends c later, as a
// longest path does: so once a round ends c after the round before it on every
// stage and every output the next reads, the rounds after it are not played but
// shifted, each c more than the one before. Exact up to rounding: the states are
// compared to kSameState of their size.
template <class Play>
std::size_t play_rounds(const models::ScheduleGraph& g, std::size_t from, std::size_t to,
                        double* free, double* arrive, Play&& play) {
  constexpr double kSameState = 1e-12;
  const std::size_t p = g.period;
  const std::size_t last = std::min(to, g.periodic_end);
  std::size_t r = std::max(from, g.periodic_begin);
  if (p > 0) r = g.periodic_begin + (r - g.periodic_begin + p - 1) / p * p;
  // Worth it only where a round is left to skip after the one played.
  if (p == 0 || r + 2 * p > last) return play(from, to);
  play(from, r);
  const auto stages = static_cast<std::size_t>(g.pp);
  // The periodic stretch ends q nodes into a round: each round is played in two
  // parts, the stages' free times kept after the first, so that the last, partial
  // round can be shifted too.
  const std::size_t q = (last - r) % p;
  thread_local std::vector<double> before;
  thread_local std::vector<double> mid;
  before.assign(free, free + stages);
  for (; r + 2 * p <= last;) {
    play(r, r + q);
    mid.assign(free, free + stages);
    play(r + q, r + p);
    r += p;
    const double c = free[0] - before[0];
    double scale = 0;
    for (std::size_t s = 0; s < stages; ++s) scale = std::max(scale, std::abs(free[s]));
    const double tolerance = kSameState * scale;
    bool same = true;
    for (std::size_t s = 1; s < stages && same; ++s) {
      same = std::abs(free[s] - before[s] - c) <= tolerance;
    }
    for (const std::int32_t back : g.live) {
      if (!same) break;
      const std::size_t j = r - static_cast<std::size_t>(back);
      same = std::abs(arrive[j] - arrive[j - p] - c) <= tolerance;
    }
    if (!same) {
      before.assign(free, free + stages);
      continue;
    }
    // Rounds [r, last) are round [r - p, r) shifted by c, 2c, ... (the last one
    // only its first q nodes): write the outputs that nodes from `last` on read,
    // and the stages' free times after the first q nodes of the round after the
    // whole ones.
    const std::size_t rounds = (last - r) / p;  // whole rounds left
    const std::size_t read = std::max(r, static_cast<std::size_t>(g.earliest_input[last]));
    for (std::size_t j = read; j < last; ++j) {
      const std::size_t k = j - r;
      const std::size_t later = k / p + 1;  // rounds after the template
      arrive[j] = arrive[r - p + k % p] + static_cast<double>(later) * c;
    }
    for (std::size_t s = 0; s < stages; ++s) mid[s] += static_cast<double>(rounds + 1) * c;
    std::copy(mid.begin(), mid.end(), free);
    r = last;
    break;
  }
  return play(r, to);
}

}  // namespace

double pipeline_makespan(const models::ScheduleGraph& graph, std::span<const double> durations,
                         PipelineTransfer transfer) {
  if (durations.size() != static_cast<std::size_t>(graph.slots())) {
    throw std::invalid_argument("pipeline_makespan: one duration per pass kind expected");
  }
  // arrival[0] is what a node without an input waits for (nothing); node i's
  // output arrives at arrival[i + 1]. Every node's arrival is written before a
  // later node reads it.
  thread_local std::vector<double> arrival;
  thread_local std::vector<double> free_at;
  thread_local std::vector<double> hold_after;
  thread_local std::vector<double> send_after;
  if (arrival.size() < graph.nodes.size() + 1) arrival.resize(graph.nodes.size() + 1);
  arrival[0] = 0;
  free_at.assign(static_cast<std::size_t>(graph.pp), 0.0);
  transfer_times(graph, transfer, hold_after, send_after);
  double* const arrive = arrival.data() + 1;
  double* const stage_free = free_at.data();
  const double* const time = durations.data();
  const double* const held = hold_after.data();
  const double* const sent = send_after.data();
  const models::ScheduleGraph::Node* const nodes = graph.nodes.data();
  const std::size_t count = graph.nodes.size();
  if (!graph.second_input.empty()) {  // DualPipe's F&B passes wait for two inputs
    const std::int32_t* const second = graph.second_input.data();
    play_rounds(graph, 0, count, stage_free, arrive, [&](std::size_t from, std::size_t to) {
      for (std::size_t i = from; i < to; ++i) {
        const models::ScheduleGraph::Node n = nodes[i];
        const double ready = std::max({stage_free[n.stage], arrive[n.input], arrive[second[i]]});
        const double end = ready + time[n.slot];
        stage_free[n.stage] = end + held[n.slot];
        arrive[i] = end + sent[n.slot];
      }
      return to;
    });
    return *std::max_element(free_at.begin(), free_at.end());
  }
  // Branch-free; its time is the graph's depth in passes (each waits for the one
  // before it on its stage), the largest cost of an interleaved plan's estimate.
  play_rounds(graph, 0, count, stage_free, arrive, [&](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to; ++i) {
      const models::ScheduleGraph::Node n = nodes[i];
      const double end = std::max(stage_free[n.stage], arrive[n.input]) + time[n.slot];
      stage_free[n.stage] = end + held[n.slot];
      arrive[i] = end + sent[n.slot];
    }
    return to;
  });
  return *std::max_element(free_at.begin(), free_at.end());
}

// Chunk `chunk` of stage `stage`'s passes: its layers', and the embedding's or
// the head's where it sits at an end of the pipeline.
PassTimes chunk_passes(const models::StepPlan& plan, const PassKinds& passes, int stage,
                       int chunk) {
  const auto k = static_cast<std::size_t>(stage);
  const auto c = static_cast<std::size_t>(chunk);
  const double dense = plan.dense_by_chunk[k][c];
  PassTimes t = passes.layer.scaled(plan.layers_by_chunk[k][c] - dense);
  if (dense > 0) t += passes.dense.scaled(dense);
  const double again = plan.recomputed_by_chunk[k][c];
  if (again > 0) {
    const double dense_again = plan.recomputed_dense_by_chunk[k][c];
    t += passes.recompute.scaled(again - dense_again);
    if (dense_again > 0) t += passes.dense_recompute.scaled(dense_again);
  }
  const int at = models::model_position(plan.schedule, plan.pp, stage, chunk);
  if (at == 0) {
    t += passes.embedding;
    t += passes.offload;
  }
  if (at == models::model_chunks(plan.schedule, plan.pp, plan.virtual_stages) - 1) {
    t += passes.head;
  }
  return t;
}

double fb_saving(const models::ScheduleGraph& graph, const models::StepPlan& plan,
                 const PassKinds& passes, int stage) {
  const int first_pair = 4 * graph.pp * graph.virtual_stages;
  double saved = 0;
  for (const auto& n : graph.nodes) {
    if (n.stage != stage || n.slot < first_pair) continue;
    const auto [forward, backward] = graph.pair_chunks(n.slot);
    const PassTimes f = chunk_passes(plan, passes, stage, forward);
    const PassTimes b = chunk_passes(plan, passes, stage, backward);
    saved += f.forward + b.backward -
             pair_time(plan.schedule, f, b, passes.overlap_share, plan.delay_wgrad);
  }
  return saved;
}

std::span<const double> pass_durations(const models::ScheduleGraph& graph,
                                       const models::StepPlan& plan, const PassKinds& passes) {
  const int pp = plan.pp;
  const int v = plan.virtual_stages;
  const auto parts = 2 * static_cast<std::size_t>(pp) * static_cast<std::size_t>(v);
  const bool split = models::splits_backward(plan.schedule);
  const bool pairs = models::pairs_passes(plan.schedule);
  thread_local std::vector<double> durations;
  thread_local std::vector<PassTimes> chunks;
  durations.resize(static_cast<std::size_t>(graph.slots()));
  for (int stage = 0; stage < pp; ++stage) {
    chunks.clear();
    for (int chunk = 0; chunk < v; ++chunk) {
      const PassTimes t = chunk_passes(plan, passes, stage, chunk);
      chunks.push_back(t);
      const auto forward = static_cast<std::size_t>(stage) * 2 * static_cast<std::size_t>(v) +
                           static_cast<std::size_t>(chunk);
      durations[forward] = t.forward;
      durations[forward + static_cast<std::size_t>(v)] = t.backward;
      if (split) {
        durations[parts + forward] = t.backward - t.weight;
        durations[parts + forward + static_cast<std::size_t>(v)] = t.weight;
      }
    }
    if (pairs) {  // F of chunk f with B of chunk b
      for (int f = 0; f < v; ++f) {
        for (int b = 0; b < v; ++b) {
          durations[static_cast<std::size_t>(graph.pair_slot(stage, f, b))] = pair_time(
              plan.schedule, chunks[static_cast<std::size_t>(f)],
              chunks[static_cast<std::size_t>(b)], passes.overlap_share, plan.delay_wgrad);
        }
      }
    }
  }
  return durations;
}

double pipeline_time(const models::StepPlan& plan, const PassKinds& passes,
                     PipelineTransfer transfer) {
  const auto& graph = cached_schedule_graph(plan);
  return pipeline_makespan(graph, pass_durations(graph, plan, passes), transfer);
}

namespace {

// A stage's data-parallel stream: the spans its collectives run, in order, and
// the first that may still run beside a pass yet to come.
struct Busy {
  std::vector<std::pair<double, double>> spans;
  std::size_t next = 0;
  void add(double from, double to) {
    if (to > from) spans.emplace_back(from, to);
  }
  // When a pass of `work` seconds at the full rate, started at `start`, ends
  // where it runs at `rate` (1 / `slower`) beside the spans.
  double end_of(double start, double work, double rate, double slower) {
    while (next < spans.size() && spans[next].second <= start) ++next;
    if (next < spans.size() && spans[next].first <= start) {
      const double end = start + work * slower;  // most often: inside one span
      if (end <= spans[next].second) return end;
    }
    double t = start;
    for (std::size_t k = next; k < spans.size(); ++k) {
      const auto [from, to] = spans[k];
      if (from >= t + work) break;
      if (from > t) {
        work -= from - t;
        t = from;
      }
      const double can = (to - t) * rate;
      if (work <= can) return t + work * slower;
      work -= can;
      t = to;
    }
    return t + work;
  }
};

// A stage's side of the data-parallel stream: until when a pass may run beside
// it (`quiet`), when it is free (`link`), what the stage waited for it and was
// slowed by it, and the spans it runs.
struct StageLink {
  double quiet = 0;
  double link = 0;
  double waited = 0;
  double slowed = 0;
  Busy busy;
};

}  // namespace

namespace {

// The sweep of pipeline_with_dp. Most passes neither meet their chunk's
// parameters or gradients nor run beside the link (`quiet`): they take the
// plain sweep's path, and the others `meet`.
class DpSweep {
 public:
  DpSweep(const models::ScheduleGraph& graph, std::span<const double> durations,
          PipelineTransfer transfer, const DpStream& dp, double share)
      : graph_(graph), time_(durations.data()), dp_(dp), v_(graph.virtual_stages) {
    const auto pp = static_cast<std::size_t>(graph.pp);
    if (arrival_.size() < graph.nodes.size() + 1) arrival_.resize(graph.nodes.size() + 1);
    arrival_[0] = 0;
    transfer_times(graph, transfer, held_, sent_);
    // Chunk 0's first bucket before anything; its other buckets, then the other
    // chunks' parameters, one after another on the link.
    const double start = dp.first_gather.seconds;
    rest_end_ = start + dp.first_rest.seconds;
    const double gathers_end = rest_end_ + (v_ - 1) * dp.chunk_gather.seconds;
    slows_ = share > 0;
    rate_ = 1 - share;
    slower_ = 1 / rate_;
    free_.assign(pp, start);
    stages_.resize(pp);
    for (StageLink& st : stages_) {
      st.quiet = slows_ ? gathers_end : 0.0;
      st.link = gathers_end;
      st.waited = start;
      st.slowed = 0;
      st.busy.spans.clear();
      st.busy.next = 0;
      if (slows_) st.busy.add(start, gathers_end);
    }
  }

  DpPlay run() {
    // F&B passes (DualPipe, combined 1F1B) wait for a second input; the sweep
    // without them does not look for one.
    return graph_.second_input.empty() ? sweep_all<false>() : sweep_all<true>();
  }

 private:
  template <bool pairs>
  DpPlay sweep_all() {
    const std::size_t count = graph_.nodes.size();
    // Passes that may meet the link: up to the last chunk's first forward (each
    // waits for its chunk's parameters, so every stage is then past the gathers,
    // which past_quiet checks), and from the first chunk's last backward; none
    // between them does: the plain sweep.
    const std::size_t lead = graph_.roles_first_end;
    const std::size_t tail = std::max(lead, graph_.roles_last_begin);
    std::size_t i = sweep<true, pairs>(0, lead);
    constexpr std::size_t kCheckEvery = 64;
    while (i < tail && !past_quiet()) i = sweep<true, pairs>(i, std::min(tail, i + kCheckEvery));
    i = play_rounds(
        graph_, i, tail, free_.data(), arrival_.data() + 1,
        [this](std::size_t from, std::size_t to) { return sweep<false, pairs>(from, to); });
    sweep<true, pairs>(i, count);
    DpPlay play;
    play.end = -1;
    for (std::size_t s = 0; s < free_.size(); ++s) {
      const double end = std::max(free_[s], stages_[s].link);
      if (end > play.end) {
        play.end = end;
        play.stage = static_cast<int>(s);
        play.waited = stages_[s].waited + (end - free_[s]);
        play.slowed = stages_[s].slowed;
      }
    }
    return play;
  }

  // Sweeps nodes [from, to); where `meets`, a pass may meet the link (roles and
  // the slowed start of the step), else none does; `pairs`: F&B passes wait for
  // their second input too. Returns `to`.
  template <bool meets, bool pairs>
  std::size_t sweep(std::size_t from, std::size_t to) {
    double* const arrive = arrival_.data() + 1;
    double* const free = free_.data();
    const StageLink* const stages = stages_.data();
    const double* const held = held_.data();
    const double* const sent = sent_.data();
    const std::uint8_t* const roles = graph_.role.data();
    const models::ScheduleGraph::Node* const nodes = graph_.nodes.data();
    const std::int32_t* const second = graph_.second_input.data();  // F&B passes'
    for (std::size_t i = from; i < to; ++i) {
      const models::ScheduleGraph::Node n = nodes[i];
      double ready = std::max(free[n.stage], arrive[n.input]);
      if constexpr (pairs) ready = std::max(ready, arrive[second[i]]);
      double end = ready + time_[n.slot];
      if constexpr (meets) {
        if (roles[i] != 0) [[unlikely]] {
          end = meet(n, roles[i], ready);
        } else if (ready < stages[n.stage].quiet) [[unlikely]] {
          end = beside(n.stage, ready, time_[n.slot]);
        }
      }
      free[n.stage] = end + held[n.slot];
      arrive[i] = end + sent[n.slot];
    }
    return to;
  }

  // Whether every stage is past its quiet time: a pass starts no earlier than
  // its stage is free, so no later pass runs beside the gathers.
  [[nodiscard]] bool past_quiet() const {
    for (std::size_t s = 0; s < free_.size(); ++s) {
      if (free_[s] < stages_[s].quiet) return false;
    }
    return true;
  }

  // A pass that meets the link: it waits for its chunk's parameters, issues its
  // chunk's reductions, or runs beside a collective. Returns when it is done
  // (for the first forward, when its send may go).
  [[gnu::noinline, gnu::cold]] double meet(models::ScheduleGraph::Node n, std::uint8_t role,
                                           double ready) {
    StageLink& st = stages_[n.stage];
    const double work = time_[n.slot];
    const int chunk = n.slot % v_;
    if (role == models::ScheduleGraph::kFirstForward && chunk > 0) {
      // Its chunk's parameters gathered first.
      const double gathered = rest_end_ + chunk * dp_.chunk_gather.seconds;
      if (gathered > ready) {
        st.waited += gathered - ready;
        ready = gathered;
      }
    } else if (role == models::ScheduleGraph::kLastBackward) {
      // All buckets but the last from the end of the backward's first bucket.
      link(st, std::max(st.link, ready + work / dp_.buckets), dp_.early_reduce.seconds);
    }
    double end = ready + work;
    if (ready < st.quiet) {
      end = st.busy.end_of(ready, work, rate_, slower_);
      st.slowed += end - ready - work;
    }
    if (role == models::ScheduleGraph::kFirstForward && chunk == 0 && rest_end_ > end) {
      st.waited += rest_end_ - end;  // its send waits for chunk 0's parameters
      end = rest_end_;
    }
    if (role == models::ScheduleGraph::kLastBackward) {
      // The last bucket once the backward and its blocking send are done.
      link(st, std::max(st.link, end + held_[n.slot]), dp_.last_reduce.seconds);
    }
    return end;
  }

  // A pass without a role beside its stage's stream: what meet does for it.
  double beside(std::size_t s, double ready, double work) {
    StageLink& st = stages_[s];
    const double end = st.busy.end_of(ready, work, rate_, slower_);
    st.slowed += end - ready - work;
    return end;
  }

  void link(StageLink& st, double from, double seconds) {
    st.link = from + seconds;
    if (!slows_) return;
    st.busy.add(from, st.link);
    st.quiet = std::max(st.quiet, st.link);
  }

  const models::ScheduleGraph& graph_;
  const double* time_;
  const DpStream& dp_;
  int v_;
  double rest_end_ = 0;
  bool slows_ = false;
  double rate_ = 1;
  double slower_ = 1;
  // Kept per thread (a search asks for hundreds of thousands of estimates), and
  // reached through one reference: no thread-local access in the loops.
  struct Scratch {
    std::vector<double> arrival, held, sent, free;
    std::vector<StageLink> stages;
  };
  static Scratch& scratch() {
    thread_local Scratch kept;
    return kept;
  }
  Scratch& kept_ = scratch();
  std::vector<double>& arrival_ = kept_.arrival;
  std::vector<double>& held_ = kept_.held;
  std::vector<double>& sent_ = kept_.sent;
  std::vector<double>& free_ = kept_.free;
  std::vector<StageLink>& stages_ = kept_.stages;
};

}  // namespace

DpPlay pipeline_with_dp(const models::ScheduleGraph& graph, std::span<const double> durations,
                        PipelineTransfer transfer, const DpStream& dp, double share) {
  if (durations.size() != static_cast<std::size_t>(graph.slots())) {
    throw std::invalid_argument("pipeline_with_dp: one duration per pass kind expected");
  }
  if (!(share >= 0 && share < 1)) {
    throw std::invalid_argument("pipeline_with_dp: a share of the compute rate in [0, 1) expected");
  }
  return DpSweep(graph, durations, transfer, dp, share).run();
}

}  // namespace myriad::sim
