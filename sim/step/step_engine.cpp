#include "sim/step/step_engine.hpp"

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/plan/pipeline_schedule.hpp"
#include "models/plan/placement.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/cost/comm_cost.hpp"
#include "sim/engine/engine_config.hpp"

namespace myriad::sim {
namespace {

namespace sg4 = simgrid::s4u;
using models::PipelineTask;

// Identifies a message, so that a receiver can check it got what it waited for.
struct Tag {
  int chunk = 0;
  int micro_batch = 0;
};

// Everything the actors share, owned by simulate_step.
struct Plan {
  int pp = 1;
  int v = 1;
  int m = 1;
  int dp = 1;
  int layers_per_chunk = 1;
  StageCosts costs;
  double pp_bytes_per_node = 0;  // one activation transfer of a rank group
  double dp_edge_latency_s = 0;  // per extra ring step
  int dp_nodes = 1;
  int group_gpus = 1;  // GPUs acting together in one actor (tp x cp)
  bool overlap_pp = false;
  bool overlap_dp = false;
  std::vector<Tag> tags;  // payloads: tags[chunk * m + micro_batch]
  bool all_replicas = false;
  std::vector<sg4::Host*> hosts;   // [replica * pp + stage]
  std::vector<sg4::Host*> ghosts;  // [stage]: mirrors of the ring neighbours, one replica simulated
  std::vector<TraceEvent> events;  // replica 0
  std::vector<double> wait_s;      // replica 0, per stage: blocked on inputs and sends
  std::vector<std::vector<PipelineTask>> orders;
  std::atomic<std::size_t> flows{0};
};

// Index into a row-major table of `columns` columns.
std::size_t at(int row, int columns, int column) {
  return static_cast<std::size_t>(row) * static_cast<std::size_t>(columns) +
         static_cast<std::size_t>(column);
}

std::string mailbox(const char* kind, int replica, int stage) {
  return fmt::format("{}.{}.{}", kind, replica, stage);
}

double task_time(const Plan& p, int stage, const PipelineTask& t) {
  const PassTimes& layer = p.costs.layer;
  double time = p.layers_per_chunk * (t.forward ? layer.forward : layer.backward);
  if (stage == 0 && t.chunk == 0)
    time += t.forward ? p.costs.embedding.forward : p.costs.embedding.backward;
  if (stage == p.pp - 1 && t.chunk == p.v - 1)
    time += t.forward ? p.costs.head.forward : p.costs.head.backward;
  return time;
}

// Where a task's input comes from and where its output goes: stage and whether any.
bool has_input(const Plan& p, int stage, const PipelineTask& t) {
  if (t.forward) return stage > 0 || t.chunk > 0;
  return stage < p.pp - 1 || t.chunk < p.v - 1;
}

bool has_output(const Plan& p, int stage, const PipelineTask& t) {
  if (t.forward) return stage < p.pp - 1 || t.chunk < p.v - 1;
  return stage > 0 || t.chunk > 0;
}

// One ring phase of a data-parallel collective over the replicas of a stage.
void dp_ring(Plan& p, int replica, int stage, double bytes_per_gpu, double factor, double steps) {
  if (p.dp == 1) return;
  const auto bytes = static_cast<uint64_t>(p.group_gpus * factor * bytes_per_gpu);
  if (p.all_replicas) {
    sg4::Mailbox* out = sg4::Mailbox::by_name(mailbox("dp", (replica + 1) % p.dp, stage));
    sg4::Mailbox* in = sg4::Mailbox::by_name(mailbox("dp", replica, stage));
    sg4::CommPtr send = out->put_async(&p.tags[0], bytes);
    in->get<Tag>();
    send->wait();
  } else {
    sg4::Host* self = p.hosts[at(replica, p.pp, stage)];
    sg4::Host* ghost = p.ghosts[static_cast<std::size_t>(stage)];
    sg4::CommPtr out = sg4::Comm::sendto_async(self, ghost, bytes);
    sg4::CommPtr in = sg4::Comm::sendto_async(ghost, self, bytes);
    out->wait();
    in->wait();
  }
  ++p.flows;
  sg4::this_actor::sleep_for((steps - 1) * p.dp_edge_latency_s);
}

double ring_factor(models::CollectiveKind k, double n) {
  return k == models::CollectiveKind::all_reduce ? 2 * (n - 1) / n : (n - 1) / n;
}

double ring_steps(models::CollectiveKind k, double n) {
  return k == models::CollectiveKind::all_reduce ? 2 * (n - 1) : n - 1;
}

// The data-parallel collectives of a fraction `share` of the stage's parameters.
void dp_collectives(Plan& p, int replica, int stage, double share, bool gather) {
  for (const auto& c : p.costs.dp_comms) {
    const bool is_gather = c.kind == models::CollectiveKind::all_gather;
    if (is_gather != gather) continue;
    dp_ring(p, replica, stage, c.bytes * share, ring_factor(c.kind, p.dp),
            ring_steps(c.kind, p.dp));
  }
}

// Runs `work` beside the stage's own actor, on its host: traffic that overlaps.
sg4::ActorPtr beside(const std::string& name, const std::function<void()>& work) {
  return sg4::Actor::create(name, sg4::this_actor::get_host(), work);
}

void record(Plan& p, int replica, int stage, std::string name, const char* category, double start) {
  if (replica != 0) return;  // the trace shows replica 0 of every stage
  p.events.push_back({stage, std::move(name), category, start, sg4::Engine::get_clock() - start});
}

// Waits for a task's input, checking it is the message the schedule expects.
void receive_input(Plan& p, int replica, int stage, const PipelineTask& t) {
  sg4::Mailbox* in = sg4::Mailbox::by_name(mailbox(t.forward ? "f" : "b", replica, stage));
  const double start = sg4::Engine::get_clock();
  const Tag* got = in->get<Tag>();
  // From the previous (next) stage's same chunk, or across the wrap of the
  // interleaved schedule from the last (first) stage's previous (next) chunk.
  int expected = t.chunk;
  if (t.forward && stage == 0) expected = t.chunk - 1;
  if (!t.forward && stage == p.pp - 1) expected = t.chunk + 1;
  if (got->chunk != expected || got->micro_batch != t.micro_batch) {
    throw std::logic_error("step engine: pipeline messages arrived out of order");
  }
  p.wait_s[static_cast<std::size_t>(stage)] += replica == 0 ? sg4::Engine::get_clock() - start : 0;
  record(p, replica, stage, "wait", "wait", start);
}

void send_output(Plan& p, int replica, int stage, const PipelineTask& t,
                 std::vector<sg4::CommPtr>& pending) {
  const int to = ((t.forward ? stage + 1 : stage - 1) + p.pp) % p.pp;
  sg4::Mailbox* out = sg4::Mailbox::by_name(mailbox(t.forward ? "f" : "b", replica, to));
  Tag* tag = &p.tags[at(t.chunk, p.m, t.micro_batch)];
  const auto bytes = static_cast<uint64_t>(p.pp_bytes_per_node);
  ++p.flows;
  if (p.overlap_pp) {
    pending.push_back(out->put_async(tag, bytes));
    return;
  }
  const double start = sg4::Engine::get_clock();
  out->put(tag, bytes);
  p.wait_s[static_cast<std::size_t>(stage)] += replica == 0 ? sg4::Engine::get_clock() - start : 0;
  record(p, replica, stage, "send", "pp", start);
}

void play_stage(Plan& p, int replica, int stage) {
  for (const char* kind : {"f", "b", "dp"}) {
    sg4::Mailbox::by_name(mailbox(kind, replica, stage))->set_receiver(sg4::Actor::self());
  }
  const double share = 1.0 / p.v;
  std::vector<sg4::ActorPtr> overlapped;
  // Parameters: all gathered first; overlapped, the first chunk's only, the rest beside.
  dp_collectives(p, replica, stage, p.overlap_dp ? share : 1.0, true);
  if (p.overlap_dp && p.v > 1) {
    overlapped.push_back(beside("dp-gather", [&p, replica, stage, share] {
      dp_collectives(p, replica, stage, 1.0 - share, true);
    }));
  }
  std::vector<sg4::CommPtr> pending;
  std::vector<int> backwards_left(static_cast<std::size_t>(p.v), p.m);
  for (const PipelineTask& t : p.orders[static_cast<std::size_t>(stage)]) {
    if (has_input(p, stage, t)) receive_input(p, replica, stage, t);
    const double start = sg4::Engine::get_clock();
    sg4::this_actor::sleep_for(task_time(p, stage, t));
    record(p, replica, stage,
           fmt::format("{} c{} mb{}", t.forward ? "fwd" : "bwd", t.chunk, t.micro_batch),
           t.forward ? "forward" : "backward", start);
    if (has_output(p, stage, t)) send_output(p, replica, stage, t, pending);
    if (!t.forward && --backwards_left[static_cast<std::size_t>(t.chunk)] == 0 && p.overlap_dp) {
      // This chunk's gradients are complete: reduce them beside the remaining work.
      overlapped.push_back(beside("dp-reduce", [&p, replica, stage, share] {
        dp_collectives(p, replica, stage, share, false);
      }));
    }
  }
  sg4::Comm::wait_all(pending);
  const double tail = sg4::Engine::get_clock();
  for (const auto& actor : overlapped) actor->join();
  if (!p.overlap_dp) dp_collectives(p, replica, stage, 1.0, false);
  record(p, replica, stage, "data-parallel", "dp", tail);
  const double opt = sg4::Engine::get_clock();
  sg4::this_actor::sleep_for(p.costs.optimizer_s);
  record(p, replica, stage, "optimizer", "optimizer", opt);
}

}  // namespace

StepSimulation simulate_step(const scenario::Scenario& s, const DeviceProfile& profile,
                             const StepOptions& options) {
  static std::atomic<bool> ran{false};
  if (ran.exchange(true)) {
    throw std::logic_error("simulate_step: SimGrid runs one engine per process");
  }
  const auto& par = s.parallelism;
  const int group_gpus = par.tp * par.cp;
  if (group_gpus < s.cluster.gpus_per_node) {
    throw std::invalid_argument(fmt::format(
        "the step engine needs each rank group (tp x cp = {}) to fill whole nodes of {} GPUs; "
        "use `myriad estimate` for this scenario",
        group_gpus, s.cluster.gpus_per_node));
  }
  Plan p;
  p.pp = par.pp;
  p.v = par.virtual_stages;
  p.m = par.micro_batches();
  p.dp = par.dp;
  p.layers_per_chunk = s.model.layers / (par.pp * par.virtual_stages);
  p.costs = stage_costs(s, profile);
  p.group_gpus = group_gpus;
  p.pp_bytes_per_node = p.costs.pp_bytes_per_gpu * group_gpus;
  p.overlap_pp = s.overlap.pp;
  p.overlap_dp = s.overlap.dp;
  p.dp_nodes = models::group_span(models::GroupKind::dp, s).nodes;
  p.dp_edge_latency_s = hop_latency(s.cluster, p.dp_nodes);
  p.tags.resize(at(p.v, p.m, 0));
  for (int c = 0; c < p.v; ++c) {
    for (int j = 0; j < p.m; ++j) p.tags[at(c, p.m, j)] = Tag{c, j};
  }
  p.wait_s.assign(static_cast<std::size_t>(p.pp), 0.0);
  for (int stage = 0; stage < p.pp; ++stage)
    p.orders.push_back(models::pipeline_order(p.pp, p.v, p.m, stage));

  int argc = 1;
  char name[] = "myriad";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  apply_engine_config(options.sanitizer_safe);
  const int nodes_per_group = group_gpus / s.cluster.gpus_per_node;
  const double node_Bps = s.cluster.nics_per_node * s.cluster.nic_bw_Bps * profile.nic_efficiency;
  const double half_hop = hop_latency(s.cluster, s.cluster.nodes()) / 2;
  auto* zone = sg4::create_star_zone("cluster");
  const auto add_host = [&](const std::string& host_name) {
    sg4::Host* host = zone->create_host(host_name, 1e9)->seal();
    sg4::Link* link = zone->create_split_duplex_link(host_name + ".nic", node_Bps * nodes_per_group)
                          ->set_latency(half_hop)
                          ->seal();
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {sg4::LinkInRoute(link, sg4::LinkInRoute::Direction::UP)}, true);
    return host;
  };
  p.all_replicas = options.all_replicas || p.dp == 1;
  const int replicas = p.all_replicas ? p.dp : 1;
  for (int i = 0; i < p.pp * replicas; ++i) p.hosts.push_back(add_host(fmt::format("group-{}", i)));
  if (!p.all_replicas) {
    for (int stage = 0; stage < p.pp; ++stage) {
      p.ghosts.push_back(add_host(fmt::format("ghost-{}", stage)));
    }
  }
  zone->seal();
  for (int replica = 0; replica < replicas; ++replica) {
    for (int stage = 0; stage < p.pp; ++stage) {
      sg4::Actor::create(fmt::format("stage-{}-replica-{}", stage, replica),
                         p.hosts[at(replica, p.pp, stage)],
                         [&p, replica, stage] { play_stage(p, replica, stage); });
    }
  }
  engine.run();
  StepSimulation r;
  r.step_time_s = sg4::Engine::get_clock();
  r.hosts = p.hosts.size() + p.ghosts.size();
  r.actors = at(p.pp, replicas, 0);
  r.flows = p.flows.load();
  r.events = std::move(p.events);
  r.wait_s = std::move(p.wait_s);
  return r;
}

}  // namespace myriad::sim
