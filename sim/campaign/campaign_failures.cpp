// What fails and what it takes down: node and domain failures (random and
// injected), planes of the fabric, stragglers. The event loop and recovery are
// in campaign_engine.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "models/scenario/fabric_domains.hpp"
#include "models/scenario/reliability_spec.hpp"
#include "sim/campaign/campaign_engine.hpp"

namespace myriad::sim::campaign {

void CampaignEngine::on_clock(const Event& e) {
  if (e.gen != node_gen_[static_cast<std::size_t>(e.node)]) return;  // node left service
  if (static_cast<std::size_t>(e.process) < s_.faults.processes.size()) {
    on_failure(e.node, e.process);
  } else {
    on_straggler_onset(e.node, e.process);
  }
}

void CampaignEngine::on_failure(int node, int process) {
  const auto& p = s_.faults.processes[static_cast<std::size_t>(process)];
  if (!p.replace_node) draw_clock(node, process);
  take_down(node, 1, p.component, models::scenario::Domain::node, node, p.replace_node, -1,
            "random");
}

// A leaf, pod or rack fails: all of its nodes at once. Its clock stops until
// it is repaired (or restarts at once, when nothing is replaced).
void CampaignEngine::on_domain_failure(const Event& e) {
  const auto process = static_cast<std::size_t>(e.process);
  const auto& p = s_.faults.processes[process];
  auto& gen = domain_gen_[process][static_cast<std::size_t>(e.node)];
  ++gen;
  if (p.domain == models::scenario::Domain::plane) {  // its clock stops until it is back
    const double until = now_ + random_.exponential(policy_.spec->repair_s);
    push(until, Kind::domain_repaired, e.node, e.process, gen);
    take_plane_down(e.node, p.component, until, "random");
    return;
  }
  if (models::scenario::is_fabric_port(p.domain)) {
    // One clock over every switch or port: a unit drawn at random, none where
    // it is out already (the rate of those in service).
    const long long units = units_[process];
    const auto unit =
        std::min(units - 1, static_cast<long long>(random_.uniform() * static_cast<double>(units)));
    const double until = now_ + random_.exponential(policy_.spec->repair_s);
    take_port_down(p.domain, p.tier, unit, p.component, until, "random");
    draw_domain_clock(process, e.node);
    return;
  }
  double until = -1;
  if (p.replace_node) {
    until = now_ + random_.exponential(policy_.spec->repair_s);
    push(until, Kind::domain_repaired, e.node, e.process, gen);
  } else {
    draw_domain_clock(process, e.node);
  }
  take_down(e.node * span_[process], span_[process], p.component, p.domain, e.node, p.replace_node,
            until, "random");
}

void CampaignEngine::on_injected(const InjectedEvent& e) {
  const auto& spec = *e.spec;
  if (spec.slowdown > 0) {
    const int node = spec.id;
    if (node < static_cast<int>(nodes_.size()) &&
        nodes_[static_cast<std::size_t>(node)] != NodeState::repair) {
      start_straggler(node, spec.slowdown, spec.until_s, -1, e.source);
    }
    return;
  }
  if (models::scenario::is_fabric_port(spec.domain)) {
    take_port_down(
        spec.domain, spec.tier, spec.id, spec.component,
        now_ + (spec.repair_s > 0 ? spec.repair_s : random_.exponential(policy_.spec->repair_s)),
        e.source);
    return;
  }
  if (spec.domain == models::scenario::Domain::plane) {
    take_plane_down(
        spec.id, spec.component,
        now_ + (spec.repair_s > 0 ? spec.repair_s : random_.exponential(policy_.spec->repair_s)),
        e.source);
    return;
  }
  const int span = std::max(1, models::scenario::domain_nodes(s_, spec.domain));
  double until = -1;
  if (spec.replace_node) {
    until =
        now_ + (spec.repair_s > 0 ? spec.repair_s : random_.exponential(policy_.spec->repair_s));
  }
  take_down(spec.id * span, span, spec.component, spec.domain, spec.id, spec.replace_node, until,
            e.source);
}

int CampaignEngine::peer_of(int slot) const {
  // Positions pair across the halves of the job (k with k + N/2), so that a
  // leaf or rack, which takes neighbours, rarely holds both copies of a shard.
  const int job = static_cast<int>(holder_.size());
  const int half = job / 2;
  if (half == 0) return slot;
  return slot < half ? slot + half : slot - half;
}

void CampaignEngine::take_down(int first, int count, models::scenario::Component component,
                               models::scenario::Domain domain, int id, bool replace, double until,
                               const std::string& source) {
  ++result_.failures_by_component[static_cast<std::size_t>(component)];
  const int end = std::min(first + count, static_cast<int>(nodes_.size()));
  first = std::min(first, end);
  bool any_running = false;
  for (int n = first; n < end; ++n) {
    any_running = any_running || nodes_[static_cast<std::size_t>(n)] == NodeState::running;
  }
  if (policy_.spec->in_memory && replace) {
    // Host memory is gone with the node; each lost shard survives in its peer's
    // memory unless the peer lost its memory too since the last copy.
    std::vector<int> lost;
    for (int n = first; n < end; ++n) {
      const int slot = slot_[static_cast<std::size_t>(n)];
      if (nodes_[static_cast<std::size_t>(n)] != NodeState::running || slot < 0) continue;
      lost_slot_[static_cast<std::size_t>(slot)] = true;
      lost.push_back(slot);
    }
    for (const int slot : lost) {
      const int peer = peer_of(slot);
      if (peer == slot || lost_slot_[static_cast<std::size_t>(peer)]) memory_lost_ = true;
    }
  }
  if (replace && until < 0) until = now_ + random_.exponential(policy_.spec->repair_s);
  const bool interrupts = any_running && phase_ != Phase::waiting;
  if (logging()) {
    auto ev = event(EventKind::failure);
    ev.component = kComponentNames[static_cast<std::size_t>(component)];
    ev.domain = models::scenario::domain_name(domain);
    ev.id = id;
    ev.first_node = first;
    ev.node_count = end - first;
    ev.interrupts = interrupts;
    ev.duration_s = replace ? until - now_ : 0;
    ev.detail = source;
    emit(ev);
    if (replace) repairs_.open(ev.component, ev.domain, id, first, end - first);
  }
  if (replace) {
    for (int n = first; n < end; ++n) {
      const auto i = static_cast<std::size_t>(n);
      if (nodes_[i] != NodeState::repair || repair_until_[i] < until) send_to_repair(n, until);
    }
  }
  // A job waiting for nodes is not running: the failure costs it nothing more.
  if (interrupts) interrupt(true);
}

void CampaignEngine::take_plane_down(int plane, models::scenario::Component component, double until,
                                     const std::string& source) {
  ++result_.failures_by_component[static_cast<std::size_t>(component)];
  const auto k = static_cast<std::size_t>(plane);
  const bool was_up = plane_until_[k] == 0;
  if (!was_up && plane_until_[k] >= until) return;  // down already, for longer
  if (was_up) ++planes_down_;
  plane_until_[k] = until;
  push(until, Kind::plane_repaired, plane, 0, ++plane_gen_[k]);
  const bool all = planes_down_ == static_cast<int>(plane_until_.size());
  const bool interrupts = all && was_up && phase_ != Phase::waiting;
  if (logging()) {
    auto ev = event(EventKind::failure);
    ev.component = kComponentNames[static_cast<std::size_t>(component)];
    ev.domain = models::scenario::domain_name(models::scenario::Domain::plane);
    ev.id = plane;
    ev.interrupts = interrupts;
    ev.duration_s = until - now_;
    ev.detail = fmt::format("{}; {} of {} planes down", source, planes_down_, plane_until_.size());
    emit(ev);
  }
  if (interrupts) interrupt(true);
}

void CampaignEngine::on_plane_repaired(const Event& e) {
  const auto k = static_cast<std::size_t>(e.node);
  if (e.gen != plane_gen_[k] || plane_until_[k] == 0) return;
  plane_until_[k] = 0;
  --planes_down_;
  if (logging()) {
    auto ev = event(EventKind::plane_repaired);
    ev.domain = models::scenario::domain_name(models::scenario::Domain::plane);
    ev.id = e.node;
    ev.detail = fmt::format("{} of {} planes down", planes_down_, plane_until_.size());
    emit(ev);
  }
  if (phase_ == Phase::waiting) restart_or_wait();
}

void CampaignEngine::take_port_down(models::scenario::Domain domain, int tier, long long unit,
                                    models::scenario::Component component, double until,
                                    const std::string& source) {
  const bool was_cut = fabric_.cut_off();
  if (!fabric_.fail(domain, tier, unit)) return;  // out already: no failure
  ++result_.failures_by_component[static_cast<std::size_t>(component)];
  const auto kind = std::pair{domain, tier};
  auto at = std::find(port_kinds_.begin(), port_kinds_.end(), kind);
  if (at == port_kinds_.end()) at = port_kinds_.insert(port_kinds_.end(), kind);
  push(until, Kind::port_repaired, static_cast<int>(unit),
       static_cast<int>(at - port_kinds_.begin()), 0);
  const bool interrupts = !was_cut && fabric_.cut_off() && phase_ != Phase::waiting;
  if (logging()) {
    auto ev = event(EventKind::failure);
    ev.component = kComponentNames[static_cast<std::size_t>(component)];
    ev.domain = models::scenario::domain_name(domain);
    ev.id = static_cast<int>(unit);
    ev.interrupts = interrupts;
    ev.duration_s = until - now_;
    ev.detail =
        fmt::format("{}; {}", source, fabric_.describe(FabricPorts::losing_tier(domain, tier)));
    emit(ev);
  }
  if (interrupts) interrupt(true);
}

void CampaignEngine::on_port_repaired(const Event& e) {
  const auto [domain, tier] = port_kinds_[static_cast<std::size_t>(e.process)];
  fabric_.repair(domain, tier, e.node);
  if (logging()) {
    auto ev = event(EventKind::port_repaired);
    ev.domain = models::scenario::domain_name(domain);
    ev.id = e.node;
    ev.detail = fabric_.describe(FabricPorts::losing_tier(domain, tier));
    emit(ev);
  }
  if (phase_ == Phase::waiting) restart_or_wait();
}

void CampaignEngine::on_straggler_onset(int node, int process) {
  const auto& g =
      s_.faults.stragglers[static_cast<std::size_t>(process) - s_.faults.processes.size()];
  const double end = now_ + random_.exponential(g.duration_s);
  start_straggler(node, g.slowdown, end, process, g.name);
  draw_clock(node, process);
}

void CampaignEngine::start_straggler(int node, double slowdown, double end, int process,
                                     const std::string& source) {
  ++result_.straggler_onsets;
  auto& factor = slow_[static_cast<std::size_t>(node)];
  if (factor == 1) slow_nodes_.push_back(node);
  factor = std::max(factor, slowdown);
  const auto gen = node_gen_[static_cast<std::size_t>(node)];
  if (logging()) {
    auto ev = event(EventKind::straggler_onset);
    ev.first_node = node;
    ev.node_count = 1;
    ev.slowdown = slowdown;
    ev.duration_s = end - now_;
    ev.detail = source;
    emit(ev);
  }
  push(end, Kind::straggler_end, node, process, gen);
  if (policy_.spec->straggler_action == models::scenario::StragglerAction::evict &&
      nodes_[static_cast<std::size_t>(node)] == NodeState::running && phase_ == Phase::running) {
    const double seen_after = policy_.spec->straggler_detect_steps * step_time_now();
    push(now_ + seen_after, Kind::straggler_seen, node, process, gen);
  }
}

}  // namespace myriad::sim::campaign
