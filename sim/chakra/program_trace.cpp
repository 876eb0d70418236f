#include "sim/chakra/program_trace.hpp"

#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "models/plan/rank_layout.hpp"
#include "sim/cost/comm_cost.hpp"

namespace myriad::sim::chakra {
namespace {

std::uint64_t micros(double seconds) {
  return static_cast<std::uint64_t>(std::llround(std::max(0.0, seconds) * 1e6));
}

EtCollective et_collective(models::CollectiveKind kind) {
  switch (kind) {
    case models::CollectiveKind::all_gather:
      return EtCollective::all_gather;
    case models::CollectiveKind::reduce_scatter:
      return EtCollective::reduce_scatter;
    case models::CollectiveKind::all_to_all:
      return EtCollective::all_to_all;
    default:
      return EtCollective::all_reduce;
  }
}

constexpr std::array<const char*, 3> kStreamNames = {"compute", "dp", "network"};

// A pipeline message's tag: its direction, chunk and micro-batch, unique in a step.
std::int32_t tag(const StepProgram& p, const models::PipelineTask& t) {
  return static_cast<std::int32_t>(((t.forward ? 0 : 1) * p.v + t.chunk) * p.m + t.micro_batch);
}

class StageTrace {
 public:
  StageTrace(const StepProgram& p, int stage) : p_(p), stage_(stage) {}

  EtGraph build() {
    const auto& tasks = p_.stages[static_cast<std::size_t>(stage_)].tasks;
    node_of_.assign(tasks.size(), 0);
    std::vector<std::uint64_t> last_on(3, 0);  // [stream]: its last node, 0: none
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      const StepTask& t = tasks[i];
      EtNode n;
      n.name = t.name();
      n.duration_micros = micros(t.seconds);
      n.is_cpu_op = false;
      const auto stream = static_cast<std::size_t>(t.stream);
      if (t.stream != Stream::network && last_on[stream] != 0) {
        n.data_deps.push_back(last_on[stream]);
      }
      for (const Dependency& d : t.after) depend(n, d, t, tasks);
      describe(n, t);
      if (t.kind == TaskKind::send && t.pass.paired) {
        // A DualPipe F&B pass's two outputs: a message each, one after the other.
        EtNode first = n;
        first.id = next_id_++;
        first.name = fmt::format("send {} c{} mb{}", t.pass.forward ? "fwd" : "bwd", t.pass.chunk,
                                 t.pass.micro_batch);
        first.duration_micros = micros(t.seconds / 2);
        n.duration_micros = micros(t.seconds / 2);
        send_fields(n, t.pair);
        n.data_deps.push_back(first.id);
        graph_.nodes.push_back(std::move(first));
      }
      n.attrs.push_back(string_attr("myriad_stream", kStreamNames[stream]));
      n.attrs.push_back(double_attr("myriad_seconds", t.seconds));
      if (t.takes_share) n.attrs.push_back(bool_attr("myriad_takes_share", true));
      n.id = next_id_++;
      node_of_[i] = n.id;
      if (t.stream != Stream::network) last_on[stream] = n.id;
      graph_.nodes.push_back(std::move(n));
    }
    graph_.version = "0.0.4";
    graph_.metadata.push_back(string_attr("myriad_stage", std::to_string(stage_)));
    // What the tasks that take a share of the compute rate take (the program's).
    if (p_.overlap_share > 0) {
      graph_.metadata.push_back(double_attr("myriad_overlap_share", p_.overlap_share));
    }
    return std::move(graph_);
  }

 private:
  // The message a pass waits for from `from`: what that stage's pass of the same
  // micro-batch sent it (of an F&B pass, the pass whose input it is).
  [[nodiscard]] models::PipelineTask input_from(const StepTask& t, int from) const {
    for (const models::PipelineTask* x : {&t.pass, t.pass.paired ? &t.pair : nullptr}) {
      if (x == nullptr) continue;
      const models::ChunkPlace at = models::input_of(p_.schedule, p_.pp, p_.v, stage_, *x);
      if (at.stage != from) continue;
      models::PipelineTask sent = *x;
      sent.chunk = at.chunk;
      sent.paired = false;
      return sent;
    }
    return t.pass;
  }

  void depend(EtNode& n, const Dependency& d, const StepTask& t,
              const std::vector<StepTask>& tasks) {
    if (d.stage != stage_) {  // a pipeline message: received first
      const StepTask& send =
          p_.stages[static_cast<std::size_t>(d.stage)].tasks[static_cast<std::size_t>(d.task)];
      const models::PipelineTask message =
          send.kind == TaskKind::send ? input_from(t, d.stage) : send.pass;
      EtNode r;
      r.id = next_id_++;
      r.name = fmt::format("recv {} c{} mb{}", message.forward ? "fwd" : "bwd", message.chunk,
                           message.micro_batch);
      r.type = EtNodeType::comm_recv;
      r.comm_src = d.stage;
      r.comm_dst = stage_;
      r.comm_tag = tag(p_, message);
      r.comm_size = static_cast<std::int64_t>(std::llround(p_.costs.pp_bytes_per_gpu));
      r.is_cpu_op = false;
      n.data_deps.push_back(r.id);
      graph_.nodes.push_back(std::move(r));
      return;
    }
    if (d.on_start) {
      // From a start plus a lag: after what precedes that task on its stream.
      const auto& target = tasks[static_cast<std::size_t>(d.task)];
      for (int k = d.task - 1; k >= 0; --k) {
        if (tasks[static_cast<std::size_t>(k)].stream == target.stream) {
          n.data_deps.push_back(node_of_[static_cast<std::size_t>(k)]);
          break;
        }
      }
      n.attrs.push_back(
          uint64_attr("myriad_after_start_of", node_of_[static_cast<std::size_t>(d.task)]));
      n.attrs.push_back(double_attr("myriad_start_lag_us", d.lag_s * 1e6));
      return;
    }
    n.data_deps.push_back(node_of_[static_cast<std::size_t>(d.task)]);
  }

  // A pipeline message of pass `x`: to the stage holding the next position.
  void send_fields(EtNode& n, const models::PipelineTask& x) const {
    n.type = EtNodeType::comm_send;
    n.comm_src = stage_;
    n.comm_dst = models::output_of(p_.schedule, p_.pp, p_.v, stage_, x).stage;
    models::PipelineTask sent = x;
    sent.paired = false;
    n.comm_tag = tag(p_, sent);
    n.comm_size = static_cast<std::int64_t>(std::llround(p_.costs.pp_bytes_per_gpu));
  }

  void describe(EtNode& n, const StepTask& t) const {
    switch (t.kind) {
      case TaskKind::pass:
      case TaskKind::join:
      case TaskKind::optimizer:
      case TaskKind::kernel:
        n.type = EtNodeType::comp;
        return;
      case TaskKind::send:
        send_fields(n, t.pass);
        return;
      case TaskKind::dp_collective: {
        n.type = EtNodeType::comm_coll;
        n.pg_name = "dp";
        double bytes = 0;
        for (const auto& c : p_.costs.dp_comms) {
          if ((c.kind == models::CollectiveKind::all_gather) != t.gather) continue;
          if (!n.comm_type) n.comm_type = et_collective(c.kind);
          bytes += t.share * c.bytes;
        }
        if (!n.comm_type)
          n.comm_type = t.gather ? EtCollective::all_gather : EtCollective::all_reduce;
        n.comm_size = static_cast<std::int64_t>(std::llround(bytes));
        return;
      }
    }
  }

  const StepProgram& p_;
  int stage_;
  EtGraph graph_;
  std::vector<std::uint64_t> node_of_;  // [task]: its node's id
  std::uint64_t next_id_ = 1;
};

const EtAttr* attr(const EtNode& n, std::string_view name) {
  for (const EtAttr& a : n.attrs) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

models::CollectiveKind model_kind(EtCollective c) {
  switch (c) {
    case EtCollective::all_gather:
      return models::CollectiveKind::all_gather;
    case EtCollective::reduce_scatter:
    case EtCollective::reduce_scatter_block:
      return models::CollectiveKind::reduce_scatter;
    case EtCollective::all_to_all:
      return models::CollectiveKind::all_to_all;
    case EtCollective::broadcast:
      return models::CollectiveKind::broadcast;
    default:
      return models::CollectiveKind::all_reduce;
  }
}

// A traced collective or send priced on the scenario's cluster; none: as traced.
std::optional<ProgramCollective> priced(const EtNode& n, const TracePricing& pricing) {
  if (!n.comm_size || *n.comm_size <= 0) return std::nullopt;
  models::Collective c;
  c.name = "trace";
  c.bytes = static_cast<double>(*n.comm_size);
  if (n.type == EtNodeType::comm_coll) {
    c.kind = model_kind(n.comm_type.value_or(EtCollective::all_reduce));
    c.group = pricing.group;
  } else if (n.type == EtNodeType::comm_send) {
    c.kind = models::CollectiveKind::send_recv;
    c.group = models::GroupKind::pp;
  } else {
    return std::nullopt;
  }
  const models::scenario::Scenario& s = *pricing.scenario;
  const CommCost cost =
      collective_cost(c, models::group_span(c.group, s), s.cluster, *pricing.profile);
  return ProgramCollective{c, cost};
}

// A trace's node as a task of its stage (its dependencies added after).
StepTask task_of(const EtNode& n, const TracePricing* pricing,
                 std::vector<ProgramCollective>& collectives) {
  StepTask t;
  t.label = n.name;
  t.seconds = static_cast<double>(n.duration_micros) * 1e-6;
  if (const EtAttr* a = attr(n, "myriad_seconds"); a && a->reals.size() == 1)
    t.seconds = a->reals[0];
  switch (n.type) {
    case EtNodeType::comp:
      t.kind = TaskKind::kernel;
      t.activity = Activity::forward;
      break;
    case EtNodeType::comm_coll:
      t.kind = TaskKind::dp_collective;
      t.stream = Stream::dp;
      t.activity = Activity::dp;
      t.gather = n.comm_type == EtCollective::all_gather;
      break;
    case EtNodeType::comm_send:
      t.kind = TaskKind::send;
      t.stream = Stream::network;
      t.activity = Activity::pp;
      break;
    default:
      t.kind = TaskKind::join;
      t.activity = Activity::wait;
      t.seconds = 0;
      break;
  }
  if (const EtAttr* a = attr(n, "myriad_stream"); a && a->strings.size() == 1) {
    for (std::size_t k = 0; k < kStreamNames.size(); ++k) {
      if (a->strings[0] == kStreamNames[k]) t.stream = static_cast<Stream>(k);
    }
  }
  if (const EtAttr* a = attr(n, "myriad_takes_share"); a && a->uints.size() == 1) {
    t.takes_share = a->uints[0] != 0;
  }
  if (n.type == EtNodeType::comm_send && n.comm_size) t.bytes = static_cast<double>(*n.comm_size);
  if (pricing != nullptr) {
    if (auto c = priced(n, *pricing)) {
      t.seconds = c->cost.time_s;
      if (n.type == EtNodeType::comm_coll) {
        t.collective = static_cast<int>(collectives.size());
        collectives.push_back(*c);
      }
    }
  }
  return t;
}

// Each stage's tasks in an order their dependencies allow (Kahn's, the file's order
// among those ready): a stream runs its tasks in program order, and a trace's file
// order need not respect its data deps (Chakra's feeder issues nodes as they become
// ready).
void order_by_dependencies(StepProgram& p) {
  std::vector<std::vector<int>> position(p.stages.size());
  for (std::size_t f = 0; f < p.stages.size(); ++f) {
    const auto& tasks = p.stages[f].tasks;
    std::vector<std::vector<int>> next(tasks.size());
    std::vector<int> waiting(tasks.size(), 0);
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      for (const Dependency& d : tasks[i].after) {
        if (static_cast<std::size_t>(d.stage) != f) continue;
        next[static_cast<std::size_t>(d.task)].push_back(static_cast<int>(i));
        ++waiting[i];
      }
    }
    std::priority_queue<int, std::vector<int>, std::greater<>> ready;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      if (waiting[i] == 0) ready.push(static_cast<int>(i));
    }
    position[f].assign(tasks.size(), -1);
    int placed = 0;
    while (!ready.empty()) {
      const int i = ready.top();
      ready.pop();
      position[f][static_cast<std::size_t>(i)] = placed++;
      for (const int j : next[static_cast<std::size_t>(i)]) {
        if (--waiting[static_cast<std::size_t>(j)] == 0) ready.push(j);
      }
    }
    if (placed != static_cast<int>(tasks.size())) {
      throw EtError(fmt::format("trace file {}: its nodes' dependencies form a cycle", f));
    }
  }
  for (std::size_t f = 0; f < p.stages.size(); ++f) {
    auto& tasks = p.stages[f].tasks;
    std::vector<StepTask> ordered(tasks.size());
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      for (Dependency& d : tasks[i].after) {
        d.task = position[static_cast<std::size_t>(d.stage)][static_cast<std::size_t>(d.task)];
      }
      ordered[static_cast<std::size_t>(position[f][i])] = std::move(tasks[i]);
    }
    tasks = std::move(ordered);
  }
}

}  // namespace

StepProgram program_from_trace(const EtSet& set, const TracePricing* pricing) {
  StepProgram p;
  p.traced = true;
  p.pp = static_cast<int>(set.files.size());
  p.chunk_layers = models::ChunkGrid(set.files.size(), 1);
  p.chunk_dense = models::ChunkGrid(set.files.size(), 1);
  p.stages.resize(set.files.size());
  std::map<int, int> stage_of_rank;
  for (std::size_t f = 0; f < set.files.size(); ++f) {
    for (const int r : set.files[f].ranks) stage_of_rank[r] = static_cast<int>(f);
    for (const EtAttr& a : set.files[f].graph.metadata) {
      if (a.name == "myriad_overlap_share" && a.reals.size() == 1) p.overlap_share = a.reals[0];
    }
  }
  // [file][node id]: the task, or for a receive (-1 - its index in the file)
  std::vector<std::map<std::uint64_t, int>> index(set.files.size());
  // the sends, by source stage, destination rank and tag
  std::map<std::tuple<int, int, int>, Dependency> sends;
  for (std::size_t f = 0; f < set.files.size(); ++f) {
    const auto& nodes = set.files[f].graph.nodes;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const EtNode& n = nodes[i];
      if (n.type == EtNodeType::comm_recv) {
        index[f][n.id] = -1 - static_cast<int>(i);
        continue;
      }
      auto& tasks = p.stages[f].tasks;
      index[f][n.id] = static_cast<int>(tasks.size());
      if (n.type == EtNodeType::comm_send) {
        sends[{static_cast<int>(f), n.comm_dst.value_or(-1), n.comm_tag.value_or(0)}] = {
            static_cast<int>(f), static_cast<int>(tasks.size())};
      }
      tasks.push_back(task_of(n, pricing, p.collectives));
    }
  }
  for (std::size_t f = 0; f < set.files.size(); ++f) {
    const auto& nodes = set.files[f].graph.nodes;
    const auto stage = static_cast<int>(f);
    // What a node waits for: a task of its file, or through a receive, a send.
    const auto deps_of = [&](const EtNode& n, auto& self) -> std::vector<Dependency> {
      std::vector<Dependency> out;
      for (const std::uint64_t id : n.data_deps) {
        const int k = index[f].at(id);
        if (k >= 0) {
          out.push_back({stage, k});
          continue;
        }
        const EtNode& recv = nodes[static_cast<std::size_t>(-1 - k)];
        const int src = stage_of_rank.count(recv.comm_src.value_or(-1)) != 0
                            ? stage_of_rank.at(*recv.comm_src)
                            : -1;
        const auto send = sends.find({src, recv.comm_dst.value_or(-1), recv.comm_tag.value_or(0)});
        if (send == sends.end()) {
          throw EtError(fmt::format(
              "{}: node {} (id {}): receives from rank {} (tag {}), which no file sends",
              set.files[f].file.empty() ? set.name : set.files[f].file, -1 - k, recv.id,
              recv.comm_src.value_or(-1), recv.comm_tag.value_or(0)));
        }
        out.push_back(send->second);
        for (const Dependency& d : self(recv, self)) out.push_back(d);
      }
      return out;
    };
    for (const EtNode& n : nodes) {
      if (n.type == EtNodeType::comm_recv) continue;
      StepTask& t = p.stages[f].tasks[static_cast<std::size_t>(index[f].at(n.id))];
      t.after = deps_of(n, deps_of);
      const EtAttr* of = attr(n, "myriad_after_start_of");
      const EtAttr* lag = attr(n, "myriad_start_lag_us");
      if (of != nullptr && lag != nullptr && of->uints.size() == 1 && lag->reals.size() == 1) {
        t.after.push_back({stage, index[f].at(of->uints[0]), true, lag->reals[0] * 1e-6});
      }
    }
  }
  order_by_dependencies(p);
  return p;
}

EtSet program_trace(const StepProgram& p, const std::string& name, int replicas) {
  if (replicas < 1) throw std::invalid_argument("program_trace: replicas must be at least 1");
  EtSet set;
  set.name = name;
  set.ranks = p.pp * replicas;
  for (int stage = 0; stage < p.pp; ++stage) {
    EtRankFile f;
    for (int r = 0; r < replicas; ++r) f.ranks.push_back(r * p.pp + stage);
    f.graph = StageTrace(p, stage).build();
    set.files.push_back(std::move(f));
  }
  return set;
}

}  // namespace myriad::sim::chakra
