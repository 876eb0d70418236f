#include "sim/program/step_program.hpp"

#include <fmt/format.h>

#include <numeric>
#include <stdexcept>
#include <utility>

#include "models/plan/rank_layout.hpp"

namespace myriad::sim {
namespace {

using models::PipelineTask;

// Builds one stage's tasks; receives are resolved once every stage's sends exist.
class StageBuilder {
 public:
  StageBuilder(const StepProgram& p, int stage, StageProgram& out)
      : p_(p), stage_(stage), out_(out) {}

  void build() {
    // What the data-parallel stream runs with overlap.dp (dp_stream.hpp); without
    // it, everything gathered before anything and reduced after everything.
    const DpStream dp = p_.dp_stream();
    const int first_gather = p_.overlap_dp
                                 ? collective(Stream::compute, dp.first_gather.share, true, {})
                                 : collective(Stream::compute, 1.0, true, {});
    int first_rest = -1;
    if (p_.overlap_dp && dp.buckets > 1) {
      first_rest = collective(Stream::dp, dp.first_rest.share, true, {{stage_, first_gather}});
    }
    std::vector<int> gathered(static_cast<std::size_t>(p_.v), -1);
    if (p_.overlap_dp) {
      for (int k = 1; k < p_.v; ++k) {
        gathered[static_cast<std::size_t>(k)] =
            collective(Stream::dp, dp.chunk_gather.share, true, {{stage_, first_gather}});
        overlapped_.push_back(gathered[static_cast<std::size_t>(k)]);
      }
    }
    // Each chunk runs every micro-batch, or under DualPipe its direction's half.
    std::vector<int> backwards_left(static_cast<std::size_t>(p_.v), p_.micro_batches_per_chunk());
    const auto order = models::pipeline_order(p_.schedule, p_.pp, p_.v, p_.m, stage_);
    for (std::size_t i = 0; i < order.size(); ++i) {
      const PipelineTask& t = order[i];
      // DualPipe's F&B pass: this forward and the backward after it, as one task.
      const PipelineTask* pair = t.paired && i + 1 < order.size() ? &order[++i] : nullptr;
      const PipelineTask& grads = pair != nullptr ? *pair : t;
      const bool last_backward = grads.weight_gradients() &&
                                 --backwards_left[static_cast<std::size_t>(grads.chunk)] == 0 &&
                                 p_.overlap_dp;
      if (t.forward && t.micro_batch == 0 && gathered[static_cast<std::size_t>(t.chunk)] >= 0) {
        StepTask join = task(TaskKind::join, Activity::dp, 0);
        join.after = {{stage_, gathered[static_cast<std::size_t>(t.chunk)]}};
        add(std::move(join));
      }
      StepTask run = task(TaskKind::pass, t.forward ? Activity::forward : Activity::backward,
                          pair != nullptr ? p_.fb_time(stage_, t, *pair) : p_.pass_time(stage_, t));
      run.pass = t;
      if (pair != nullptr) run.pair = *pair;
      const int pass = add(std::move(run));
      int early = -1;
      if (last_backward) {
        // This chunk's gradients come bucket by bucket: all but the last are
        // reduced from the end of the backward's first bucket, beside it.
        const double first_bucket = out_.tasks[static_cast<std::size_t>(pass)].seconds / dp.buckets;
        early = collective(Stream::dp, dp.early_reduce.share, false,
                           {{stage_, pass, true, first_bucket}});
      }
      if (t.forward && first_rest >= 0) {
        StepTask join = task(TaskKind::join, Activity::dp, 0);
        join.after = {{stage_, first_rest}};
        add(std::move(join));
        first_rest = -1;
      }
      int done = pass;
      // An F&B pass's two outputs go to the same neighbour (one direction's
      // forward and the other's backward travel the same way), together.
      const int outputs = (has_output(t) ? 1 : 0) + (pair != nullptr && has_output(*pair) ? 1 : 0);
      if (outputs > 0) {
        const bool let_go = p_.overlap_pp;
        StepTask send = task(TaskKind::send, Activity::pp, outputs * p_.costs.pp_transfer.time_s);
        send.stream = let_go ? Stream::network : Stream::compute;
        send.pass = pair != nullptr && !has_output(t) ? *pair : t;
        if (pair != nullptr && outputs == 2) send.pair = *pair;
        send.pass.paired = outputs == 2;
        // Sent when the stage gets to it: after the pass and what the stage
        // waited for after it (the first forward's parameters).
        send.after = {{stage_, last_compute()}};
        done = add(std::move(send));
        sends_.push_back(done);
        if (let_go) done = pass;
      }
      if (last_backward) {
        // The last bucket once the backward (and its blocking send) is done.
        overlapped_.push_back(
            collective(Stream::dp, dp.last_reduce.share, false, {{stage_, done}, {stage_, early}}));
      }
    }
    std::vector<Dependency> tail;
    for (const int task : overlapped_) tail.push_back({stage_, task});
    StepTask join = task(TaskKind::join, Activity::dp, 0);
    join.after = std::move(tail);
    add(std::move(join));
    if (!p_.overlap_dp) collective(Stream::compute, 1.0, false, {});
    add(task(TaskKind::optimizer, Activity::optimizer, p_.costs.optimizer_s));
  }

  [[nodiscard]] bool has_output(const PipelineTask& t) const {
    return models::output_of(p_.schedule, p_.pp, p_.v, stage_, t).stage >= 0;
  }
  [[nodiscard]] const std::vector<int>& sends() const { return sends_; }

 private:
  static StepTask task(TaskKind kind, Activity activity, double seconds) {
    StepTask t;
    t.kind = kind;
    t.activity = activity;
    t.seconds = seconds;
    return t;
  }
  [[nodiscard]] int last_compute() const {
    for (auto i = static_cast<int>(out_.tasks.size()) - 1; i >= 0; --i) {
      if (out_.tasks[static_cast<std::size_t>(i)].stream == Stream::compute) return i;
    }
    return -1;
  }
  int add(StepTask t) {
    out_.tasks.push_back(std::move(t));
    return static_cast<int>(out_.tasks.size()) - 1;
  }
  int collective(Stream stream, double share, bool gather, std::vector<Dependency> after) {
    StepTask t = task(TaskKind::dp_collective, Activity::dp, p_.dp_time(share, gather));
    t.stream = stream;
    t.takes_share = stream == Stream::dp && p_.overlap_share > 0;
    t.share = share;
    t.gather = gather;
    t.after = std::move(after);
    return add(std::move(t));
  }

  const StepProgram& p_;
  int stage_;
  StageProgram& out_;
  std::vector<int> overlapped_;  // what the tail waits for
  std::vector<int> sends_;       // in program order
};

std::size_t slot(const StepProgram& p, const PipelineTask& t) {
  return (static_cast<std::size_t>(t.forward ? 0 : 1) * static_cast<std::size_t>(p.v) +
          static_cast<std::size_t>(t.chunk)) *
             static_cast<std::size_t>(p.m) +
         static_cast<std::size_t>(t.micro_batch);
}

// Each pass that has an input waits for the send that carries it: from the
// previous (next) stage's same chunk, or across the wrap of the interleaved
// schedule from the last (first) stage's previous (next) chunk.
void connect(StepProgram& p, const std::vector<std::vector<int>>& sends) {
  std::vector<std::vector<int>> by_slot(static_cast<std::size_t>(p.pp));
  for (int stage = 0; stage < p.pp; ++stage) {
    auto& table = by_slot[static_cast<std::size_t>(stage)];
    table.assign(slot(p, {false, p.v, 0}), -1);
    for (const int task : sends[static_cast<std::size_t>(stage)]) {
      const StepTask& send =
          p.stages[static_cast<std::size_t>(stage)].tasks[static_cast<std::size_t>(task)];
      table[slot(p, send.pass)] = task;
      if (send.pass.paired) table[slot(p, send.pair)] = task;  // an F&B pass's two outputs
    }
  }
  for (int stage = 0; stage < p.pp; ++stage) {
    for (StepTask& t : p.stages[static_cast<std::size_t>(stage)].tasks) {
      if (t.kind != TaskKind::pass) continue;
      for (const PipelineTask* x : {&t.pass, t.pass.paired ? &t.pair : nullptr}) {
        if (x == nullptr) continue;
        const models::ChunkPlace from = models::input_of(p.schedule, p.pp, p.v, stage, *x);
        if (from.stage < 0) continue;  // the step's first or last pass, or weight gradients
        PipelineTask input = *x;
        input.chunk = from.chunk;
        const int send = by_slot[static_cast<std::size_t>(from.stage)][slot(p, input)];
        if (send < 0) throw std::logic_error("step program: a pass's input is never sent");
        t.after.push_back({from.stage, send});
      }
    }
  }
}

}  // namespace

std::string StepTask::name() const {
  if (!label.empty()) return label;
  switch (kind) {
    case TaskKind::pass:
      if (pass.paired) {
        return fmt::format("fwd c{} mb{} & bwd c{} mb{}", pass.chunk, pass.micro_batch, pair.chunk,
                           pair.micro_batch);
      }
      return fmt::format("{} c{} mb{}",
                         pass.forward                            ? "fwd"
                         : pass.part == models::PassPart::input  ? "bwd-input"
                         : pass.part == models::PassPart::weight ? "bwd-weight"
                                                                 : "bwd",
                         pass.chunk, pass.micro_batch);
    case TaskKind::send:
      if (pass.paired) {
        return fmt::format("send fwd c{} mb{} & bwd c{} mb{}", pass.chunk, pass.micro_batch,
                           pair.chunk, pair.micro_batch);
      }
      return fmt::format("send {} c{} mb{}", pass.forward ? "fwd" : "bwd", pass.chunk,
                         pass.micro_batch);
    case TaskKind::dp_collective:
      return fmt::format("{} {:.4g}", gather ? "parameter gather" : "gradient reduction", share);
    case TaskKind::join:
      return "wait for data-parallel";
    case TaskKind::optimizer:
      return "optimizer";
    case TaskKind::kernel:
      return "kernel";
  }
  return "?";
}

double StepProgram::ends_time(int stage, const models::PipelineTask& t) const {
  double time = 0;
  const int at = models::model_position(schedule, pp, stage, t.chunk);
  if (at == 0) time += costs.embedding.of(t) + costs.offload.of(t);
  if (at == models::model_chunks(schedule, pp, v) - 1) time += costs.head.of(t);
  return time;
}

namespace {

// grid[stage][chunk], 0 where the grid is empty.
int count_at(const models::ChunkGrid& grid, int stage, int chunk) {
  if (grid.empty()) return 0;
  return grid[static_cast<std::size_t>(stage)][static_cast<std::size_t>(chunk)];
}

}  // namespace

PassTimes StepProgram::chunk_passes(int stage, int chunk) const {
  const auto k = static_cast<std::size_t>(stage);
  const auto c = static_cast<std::size_t>(chunk);
  PassTimes t = costs.layer.scaled(main_layers(stage, chunk));
  t += costs.dense_layer.scaled(chunk_dense[k][c]);
  const int dense_again = count_at(chunk_recomputed_dense, stage, chunk);
  t += costs.recompute_layer.scaled(count_at(chunk_recomputed, stage, chunk) - dense_again);
  t += costs.recompute_dense_layer.scaled(dense_again);
  const int at = models::model_position(schedule, pp, stage, chunk);
  if (at == 0) {
    t += costs.embedding;
    t += costs.offload;
  }
  if (at == models::model_chunks(schedule, pp, v) - 1) t += costs.head;
  return t;
}

double StepProgram::fb_time(int stage, const models::PipelineTask& f,
                            const models::PipelineTask& b) const {
  return sim::pair_time(schedule, chunk_passes(stage, f.chunk), chunk_passes(stage, b.chunk),
                        overlap_share, delay_wgrad);
}

int StepProgram::main_layers(int stage, int chunk) const {
  const auto k = static_cast<std::size_t>(stage);
  const auto c = static_cast<std::size_t>(chunk);
  return chunk_layers[k][c] - chunk_dense[k][c];
}

double StepProgram::priced_layers_time(int stage, const models::PipelineTask& t) const {
  const int dense = chunk_dense[static_cast<std::size_t>(stage)][static_cast<std::size_t>(t.chunk)];
  const int dense_again = count_at(chunk_recomputed_dense, stage, t.chunk);
  const int again = count_at(chunk_recomputed, stage, t.chunk) - dense_again;
  return dense * costs.dense_layer.of(t) + again * costs.recompute_layer.of(t) +
         dense_again * costs.recompute_dense_layer.of(t);
}

double StepProgram::pass_time(int stage, const models::PipelineTask& t) const {
  return main_layers(stage, t.chunk) * costs.layer.of(t) + priced_layers_time(stage, t) +
         ends_time(stage, t);
}

std::vector<BreakdownPart> StepProgram::breakdown(const std::vector<std::vector<Span>>& timelines,
                                                  double step_s) const {
  std::vector<PassShares> shares;
  for (int stage = 0; stage < pp; ++stage) {
    StageLayers n;
    for (int chunk = 0; chunk < v; ++chunk) {
      const auto k = static_cast<std::size_t>(stage);
      const auto c = static_cast<std::size_t>(chunk);
      n.dense += chunk_dense[k][c];
      n.layers += chunk_layers[k][c] - chunk_dense[k][c];
      n.dense_again += count_at(chunk_recomputed_dense, stage, chunk);
      n.again +=
          count_at(chunk_recomputed, stage, chunk) - count_at(chunk_recomputed_dense, stage, chunk);
    }
    // DualPipe's end ranks hold an embedding and a head each.
    const bool ends = schedule == models::scenario::Schedule::dualpipe;
    shares.push_back(pass_shares(costs, n, stage == 0 || (ends && stage == pp - 1),
                                 stage == pp - 1 || (ends && stage == 0)));
  }
  return step_breakdown(timelines, pp, shares, step_s);
}

double StepProgram::dp_time(double share, bool gather) const {
  return dp_collectives_time(costs.dp_comms, costs.dp_costs, share, gather);
}

DpStream StepProgram::dp_stream() const {
  return sim::dp_stream(costs.dp_comms, costs.dp_costs, v, overlap_dp ? costs.dp_buckets : 1);
}

std::size_t StepProgram::tasks() const {
  std::size_t n = 0;
  for (const auto& s : stages) n += s.tasks.size();
  return n;
}

StepProgram build_step_program(const models::scenario::Scenario& s, StageCosts costs,
                               double overlap_share) {
  StepProgram p;
  const auto& par = s.parallelism;
  p.pp = par.pp;
  p.v = models::chunks_per_stage(par.schedule, par.virtual_stages);
  p.m = par.micro_batches();
  p.schedule = par.schedule;
  p.delay_wgrad = par.delay_wgrad_compute;
  p.overlap_pp = s.overlap.pp;
  p.overlap_dp = s.overlap.dp;
  p.overlap_share = overlap_share;
  const models::StepPlan plan = models::plan_step(s);
  p.chunk_layers = plan.layers_by_chunk;
  p.chunk_dense = plan.dense_by_chunk;
  if (plan.partial_recompute()) {
    p.chunk_recomputed = plan.recomputed_by_chunk;
    p.chunk_recomputed_dense = plan.recomputed_dense_by_chunk;
  }
  p.costs = std::move(costs);
  p.stages.resize(static_cast<std::size_t>(p.pp));
  std::vector<std::vector<int>> sends;
  for (int stage = 0; stage < p.pp; ++stage) {
    StageBuilder b(p, stage, p.stages[static_cast<std::size_t>(stage)]);
    b.build();
    sends.push_back(b.sends());
  }
  connect(p, sends);
  return p;
}

StepProgram build_step_program(const models::scenario::Scenario& s, const DeviceProfile& profile) {
  const DeviceProfile placed = on_hardware(profile, s.cluster.gpu);
  return build_step_program(s, stage_costs(s, placed), placed.overlap_compute_share());
}

}  // namespace myriad::sim
