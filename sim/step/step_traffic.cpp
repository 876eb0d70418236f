// The traffic the step engine's actors play: pipeline transfers' one flow,
// data-parallel phases, expert all-to-alls and rank groups' collectives across
// nodes, each with real partners (every replica simulated) or mirrored by ghosts.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/step/step_actors.hpp"

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(myriad_step);

namespace myriad::sim::step_detail {

void exchange(StepState& p, int self, const Peers& peers, const std::vector<double>& out_bytes,
              double in_bytes) {
  sg4::Host* a = p.platform->host(self);
  std::vector<sg4::CommPtr> out;
  std::vector<sg4::CommPtr> in;
  std::size_t k = 0;
  for (const auto& [to, box] : peers.real) {
    const double size = out_bytes[k++];
    p.monitor->flow_started(self, to, size);
    out.push_back(box->put_async(&p.tags[0], static_cast<uint64_t>(size)));
  }
  for (const int ghost : peers.ghosts) {
    const double size = out_bytes[k++];
    sg4::Host* b = p.platform->host(ghost);
    p.monitor->flow_started(ghost, self, in_bytes);
    in.push_back(sg4::Comm::sendto_async(b, a, static_cast<uint64_t>(in_bytes)));
    p.monitor->flow_started(self, ghost, size);
    out.push_back(sg4::Comm::sendto_async(a, b, static_cast<uint64_t>(size)));
  }
  for (std::size_t r = 0; r < peers.real.size(); ++r) peers.inbox->get<Tag>();
  for (const auto& comms : {&out, &in}) {
    for (const auto& comm : *comms) {
      comm->wait();
      ++p.flows;
    }
  }
}

sg4::CommPtr weighted_flow(StepState& p, int from, int to, double bytes, int weight) {
  p.monitor->flow_started(from, to, bytes * weight);
  return sg4::Comm::sendto_async(p.platform->host(from), p.platform->host(to),
                                 static_cast<uint64_t>(bytes * weight));
}

namespace {

// One phase of flows of a data-parallel collective over the actors of a stage,
// `bytes` on each edge between neighbouring actors, then `extra_latency_s`.
// The replica mode plays the flows (replica_modes.hpp).
void dp_flows(StepState& p, int row, int stage, double flow_bytes, double extra_latency_s) {
  p.replicas->ring_phase(p, row, stage, flow_bytes);
  // A ring moves every chunk across every edge: its members finish together, at the
  // pace of its slowest edge (one crossing an oversubscribed uplink, a straggler's),
  // not each when its own two edges are done. (One replica simulated for several,
  // the slowest of those simulated stands for the ring's.)
  if (p.dp_ring_done.empty()) p.dp_ring_done.resize(static_cast<std::size_t>(p.pp));
  auto& done = p.dp_ring_done[static_cast<std::size_t>(stage)];
  if (!done) done = sg4::Barrier::create(static_cast<unsigned>(p.rows.size()));
  done->wait();
  sg4::this_actor::sleep_for(extra_latency_s);
}

// The part of an intra-node collective for `share` of the bytes: its latency
// whole (each chunk's collective pays it), its bandwidth term in proportion.
void intra_node(const CommCost& c, double share) {
  const double t = c.latency_s + share * c.bandwidth_s;
  if (t > 0) sg4::this_actor::sleep_for(t);
}

}  // namespace

void trace_layer_collective(StepState& p, int row, int stage, const models::Collective& c,
                            double start) {
  XBT_DEBUG("stage %d replica %d: %s (%s) as flows, %.6g s", stage,
            p.rows[static_cast<std::size_t>(row)] * p.per_node, std::string(c.name).c_str(),
            std::string(models::group_name(c.group)).c_str(), sg4::Engine::get_clock() - start);
  if (row != 0) return;
  p.events.push_back({stage, std::string(c.name), std::string(models::group_name(c.group)), start,
                      sg4::Engine::get_clock() - start});
}

TrafficState& traffic_state(StepState& p, int row, int stage, const LayerTraffic& kind) {
  for (std::size_t k = 0; k < p.traffic.size(); ++k) {
    if (p.traffic[k].get() == &kind) return p.actor(row, stage).traffic[k];
  }
  throw std::logic_error("step engine: a kind of traffic the lowering did not keep");
}

// Keeps the span on the rank group's timeline and, for row 0 (replica 0), in the trace.
void record(StepState& p, int row, int stage, Activity a, double start, const std::string& name,
            int from_group, double sent) {
  const double now = sg4::Engine::get_clock();
  p.actor(row, stage).timeline.push_back({start, now, a, from_group, sent});
  if (row == 0) p.events.push_back({stage, name, activity_name(a), start, now - start});
}

// One flow between two platform hosts, waited for; the monitor sees it.
void transfer(StepState& p, int from, int to, const sg4::CommPtr& comm, double bytes) {
  p.monitor->flow_started(from, to, bytes);
  comm->wait();
  ++p.flows;
}

// The data-parallel collectives of a fraction `share` of the stage's parameters,
// each as its DpPhase says. There is a ring per tp x cp rank; with several
// replicas per node, only its node-crossing edges carry traffic over the
// network: one flow between neighbouring nodes' actors carries every ring's
// edge (a ring's channels spread over the node's NICs, as NCCL's do, which is
// the bandwidth of min(members per node, NICs) NICs the analytic engine gives
// each ring).
void dp_collectives(StepState& p, int row, int stage, double share, bool gather) {
  if (share <= 0) return;
  for (std::size_t i = 0; i < p.program.costs.dp_comms.size(); ++i) {
    const auto& c = p.program.costs.dp_comms[i];
    const bool is_gather = c.kind == models::CollectiveKind::all_gather;
    if (is_gather != gather) continue;
    play_dp_phase(p, row, stage, p.dp_phases[i], c.bytes, share);
  }
}

// `share` of one collective of `bytes` a GPU, as its DpPhase says.
void play_dp_phase(StepState& p, int row, int stage, const DpPhase& d, double bytes, double share) {
  if (d.whole) {
    if (d.whole_s > 0) sg4::this_actor::sleep_for(share * d.whole_s);
    return;
  }
  intra_node(d.before, share);
  dp_flows(p, row, stage, p.dp_rings * d.edge_factor * bytes * share, d.extra_latency_s);
  intra_node(d.after, share);
}

void collective_task(StepState& p, int row, int stage, const StepTask& t) {
  if (t.collective < 0 && p.program.traced) {  // a traced collective without a size: as traced
    if (t.seconds > 0) sg4::this_actor::sleep_for(t.seconds);
    return;
  }
  if (t.collective < 0) {
    dp_collectives(p, row, stage, t.share, t.gather);
    return;
  }
  const auto k = static_cast<std::size_t>(t.collective);
  play_dp_phase(p, row, stage, p.workload_phases[k], p.program.collectives[k].collective.bytes, 1);
}

// Compute: an execution on the rank group's host, so that communication kernels
// beside it can take their share of the host's rate; a sleep when they take none
// (the same time, and half the cost: 62 s against 35 s for every replica of the
// 12,288-GPU example).
void compute_for(const StepState& p, double seconds) {
  if (seconds <= 0) return;
  if (p.program.overlap_share > 0) {
    sg4::this_actor::execute(seconds * sg4::this_actor::get_host()->get_speed());
  } else {
    sg4::this_actor::sleep_for(seconds);
  }
}

// NCCL runs one communicator's collectives in order, on one stream: a rank's
// overlapped data-parallel collectives wait for each other, and while one runs
// its kernels take the profile's overlap_compute_share of the host's rate
// (SimGrid shares a host's rate max-min: compute beside gets the rest). Run at
// once, two would take two shares, and one waiting for another would take its
// share doing nothing.
void dp_beside_compute(StepState& p, int row, int stage, const StepTask& t) {
  ActorState& me = p.actor(row, stage);
  if (!me.dp_stream) me.dp_stream = sg4::Mutex::create();
  const std::scoped_lock stream(*me.dp_stream);
  sg4::ExecPtr kernels;
  if (p.program.overlap_share > 0 && t.takes_share) {
    kernels = sg4::this_actor::exec_init(1e30);  // runs until cancelled
    kernels->set_bound(p.program.overlap_share * sg4::this_actor::get_host()->get_speed());
    kernels->start();
  }
  collective_task(p, row, stage, t);
  if (kernels) kernels->cancel();
}

sg4::ActorPtr beside(const std::string& name, const std::function<void()>& work) {
  return sg4::Actor::create(name, sg4::this_actor::get_host(), work);
}

}  // namespace myriad::sim::step_detail
