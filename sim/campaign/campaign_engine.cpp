#include "sim/campaign/campaign_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace myriad::sim::campaign {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

std::size_t at(Cause c) { return static_cast<std::size_t>(c); }

}  // namespace

// The event queue's storage, kept by the thread from one engine to the next: a
// campaign runs an engine for every seed and policy, each queue holding a clock
// for every node and failure process (150k events at 16k nodes), and a fresh
// vector each time cost the kernel's page faults as much as the run.
std::vector<CampaignEngine::Event>& CampaignEngine::spare_queue() {
  thread_local std::vector<Event> spare;
  return spare;
}

CampaignEngine::CampaignEngine(const models::scenario::Scenario& s, const ResolvedPolicy& policy,
                               StepTimeCache& steps, CampaignLimits limits, RandomStream random)
    : s_(s),
      policy_(policy),
      steps_(steps),
      limits_(limits),
      random_(random),
      queue_(std::move(spare_queue())),
      fabric_(s) {
  queue_.clear();
  const int job = steps_.job_nodes();
  const int total = job + policy_.spec->hot_spares;
  nodes_.assign(static_cast<std::size_t>(total), NodeState::spare);
  spares_ = IndexSet(total);
  for (int n = job; n < total; ++n) spares_.insert(n);
  empty_slots_ = IndexSet(job);
  node_gen_.assign(nodes_.size(), 0);
  slow_.assign(nodes_.size(), 1.0);
  repair_until_.assign(nodes_.size(), 0);
  slot_.assign(nodes_.size(), -1);
  holder_.assign(static_cast<std::size_t>(job), -1);
  lost_slot_.assign(static_cast<std::size_t>(job), false);
  for (int n = 0; n < job; ++n) {
    nodes_[static_cast<std::size_t>(n)] = NodeState::running;
    slot_[static_cast<std::size_t>(n)] = n;
    holder_[static_cast<std::size_t>(n)] = n;
  }
  running_nodes_ = job;
  // Domain processes keep one clock per domain; node processes one per node.
  const auto& processes = s_.faults.processes;
  span_.assign(processes.size(), 1);
  units_.assign(processes.size(), 1);
  domain_gen_.assign(processes.size(), {});
  for (std::size_t p = 0; p < processes.size(); ++p) {
    const auto domain = processes[p].domain;
    if (domain == models::scenario::Domain::node) continue;
    if (domain == models::scenario::Domain::plane) {  // one clock a plane, over every node
      domain_gen_[p].assign(static_cast<std::size_t>(models::scenario::domain_count(s_, domain)),
                            0);
      continue;
    }
    if (models::scenario::is_fabric_port(domain)) {  // one clock over all its units
      domain_gen_[p].assign(1, 0);
      units_[p] = models::scenario::fabric_units(s_.cluster, domain, processes[p].tier);
      continue;
    }
    span_[p] = std::max(1, models::scenario::domain_nodes(s_, domain));
    domain_gen_[p].assign(static_cast<std::size_t>((total + span_[p] - 1) / span_[p]), 0);
  }
  plane_until_.assign(static_cast<std::size_t>(std::max(1, s_.cluster.network.planes)), 0);
  plane_gen_.assign(plane_until_.size(), 0);
  for (const auto& e : s_.faults.events) injected_.push_back({&e, "injected"});
  for (const auto& e : s_.faults.replayed) injected_.push_back({&e, "replayed " + e.where});
  healthy_step_s_ = steps_.step_time_s(job);
  target_steps_ =
      limits_.target_tokens > 0 ? limits_.target_tokens / steps_.tokens_per_step() : kInfinity;
}

CampaignEngine::~CampaignEngine() {
  if (queue_.capacity() > spare_queue().capacity()) spare_queue() = std::move(queue_);
}

void CampaignEngine::push(double time, Kind kind, int node, int process, std::uint64_t gen) {
  queue_.push_back(Event{time, seq_++, kind, node, process, gen});
  if (!bulk_) std::push_heap(queue_.begin(), queue_.end(), Later{});
}

void CampaignEngine::draw_clock(int node, int process) {
  const auto& failures = s_.faults.processes;
  const auto gen = node_gen_[static_cast<std::size_t>(node)];
  if (static_cast<std::size_t>(process) < failures.size()) {
    const auto& p = failures[static_cast<std::size_t>(process)];
    const double rate = p.rate_per_domain_s() * s_.faults.rate_scale;
    if (rate <= 0 || p.domain != models::scenario::Domain::node) return;
    const double dt = p.distribution == models::scenario::Lifetime::weibull
                          ? random_.weibull(p.shape, 1 / rate)
                          : random_.exponential(1 / rate);
    push(now_ + dt, Kind::failure, node, process, gen);
    return;
  }
  const auto& g = s_.faults.stragglers[static_cast<std::size_t>(process) - failures.size()];
  if (g.per_1000_node_days <= 0) return;
  const double mean_s = 1000.0 * 86400.0 / g.per_1000_node_days;
  push(now_ + random_.exponential(mean_s), Kind::failure, node, process, gen);
}

void CampaignEngine::draw_domain_clock(std::size_t process, int domain) {
  const auto& p = s_.faults.processes[process];
  // A spine or uplink process: exponential lifetimes, all its units' clocks as one.
  const double units = static_cast<double>(units_[process]);
  const double rate = p.rate_per_domain_s() * s_.faults.rate_scale * units;
  if (rate <= 0) return;
  const double dt = p.distribution == models::scenario::Lifetime::weibull
                        ? random_.weibull(p.shape, 1 / rate)
                        : random_.exponential(1 / rate);
  push(now_ + dt, Kind::domain_failure, domain, static_cast<int>(process),
       domain_gen_[process][static_cast<std::size_t>(domain)]);
}

void CampaignEngine::draw_clocks(int node) {
  const auto processes = s_.faults.processes.size() + s_.faults.stragglers.size();
  for (std::size_t p = 0; p < processes; ++p) draw_clock(node, static_cast<int>(p));
}

double CampaignEngine::slowest_factor() const {
  double f = 1;
  for (const int n : slow_nodes_) {
    if (nodes_[static_cast<std::size_t>(n)] == NodeState::running) {
      f = std::max(f, slow_[static_cast<std::size_t>(n)]);
    }
  }
  return f;
}

// Steps run this much slower while an upload is in flight.
double CampaignEngine::upload_factor() const {
  return upload_pending_ ? 1 + policy_.spec->upload_slowdown : 1;
}

double CampaignEngine::fabric_step_s(int nodes) {
  if (!fabric_.degraded()) return steps_.step_time_s(nodes, planes_down_);
  return steps_.step_time_s(nodes, planes_down_, fabric_.uplinks_down());
}

double CampaignEngine::step_time_now() {
  return fabric_step_s(running_nodes_) * slowest_factor() * upload_factor();
}

void CampaignEngine::advance(double to) {
  const double dt = to - now_;
  auto& by = result_.seconds_by_cause;
  switch (phase_) {
    case Phase::running: {
      // Excess over healthy pace: an upload's slowdown (a checkpoint's cost),
      // then the straggler's factor, then planes, spines and up ports out,
      // then fewer nodes.
      const double running = dt / upload_factor();
      by[at(Cause::checkpoint)] += dt - running;
      const double factor = slowest_factor();
      const double nodes_step_s = steps_.step_time_s(running_nodes_);
      const double step_s =
          planes_down_ > 0 || fabric_.degraded() ? fabric_step_s(running_nodes_) : nodes_step_s;
      done_steps_ += running / (step_s * factor);
      since_checkpoint_s_ += dt;
      by[at(Cause::stragglers)] += running - running / factor;
      by[at(Cause::fabric)] += running / factor * (1 - nodes_step_s / step_s);
      if (nodes_step_s != healthy_step_s_) {
        by[at(Cause::shrunk)] += running / factor * (nodes_step_s - healthy_step_s_) / step_s;
      }
      break;
    }
    case Phase::checkpointing:
      by[at(Cause::checkpoint)] += dt;
      break;
    case Phase::detecting:
      by[at(Cause::detection)] += dt;
      break;
    case Phase::waiting:
      by[at(Cause::repair_wait)] += dt;
      break;
    case Phase::restarting:
      by[at(Cause::restart)] += dt;
      break;
  }
  now_ = to;
}

RunResult CampaignEngine::run() {
  bulk_ = true;
  for (int n = 0; n < static_cast<int>(nodes_.size()); ++n) draw_clocks(n);
  for (std::size_t p = 0; p < domain_gen_.size(); ++p) {
    for (std::size_t d = 0; d < domain_gen_[p].size(); ++d)
      draw_domain_clock(p, static_cast<int>(d));
  }
  for (std::size_t i = 0; i < injected_.size(); ++i) {
    push(injected_[i].spec->at_s, Kind::injected, 0, static_cast<int>(i), 0);
  }
  std::make_heap(queue_.begin(), queue_.end(), Later{});
  bulk_ = false;
  while (true) {
    const double next_event = queue_.empty() ? kInfinity : queue_.front().time;
    double next = std::min(next_event, limits_.horizon_s);
    enum class Internal { none, done, checkpoint } internal = Internal::none;
    if (phase_ == Phase::running) {
      const double done_at = now_ + (target_steps_ - done_steps_) * step_time_now();
      if (done_at <= next) {
        next = done_at;
        internal = Internal::done;
      }
      const double checkpoint_at = now_ + std::max(0.0, policy_.interval_s - since_checkpoint_s_);
      if (checkpoint_at < next) {
        next = checkpoint_at;
        internal = Internal::checkpoint;
      }
    }
    advance(next);
    if (internal == Internal::done) {
      done_steps_ = target_steps_;
      result_.reached_target = true;
      break;
    }
    if (internal == Internal::checkpoint) {
      start_checkpoint();
      continue;
    }
    if (now_ >= limits_.horizon_s) break;
    std::pop_heap(queue_.begin(), queue_.end(), Later{});
    const Event e = queue_.back();
    queue_.pop_back();
    handle(e);
  }
  result_.wall_s = now_;
  result_.nodes_in_service = static_cast<int>(nodes_.size());
  result_.steps = done_steps_;
  result_.tokens = done_steps_ * steps_.tokens_per_step();
  result_.seconds_by_cause[at(Cause::useful)] = done_steps_ * healthy_step_s_;
  return result_;
}

void CampaignEngine::handle(const Event& e) {
  switch (e.kind) {
    case Kind::failure:
      on_clock(e);
      return;
    case Kind::straggler_end:
      if (e.gen == node_gen_[static_cast<std::size_t>(e.node)] &&
          slow_[static_cast<std::size_t>(e.node)] > 1) {
        slow_[static_cast<std::size_t>(e.node)] = 1;
        std::erase(slow_nodes_, e.node);
        if (logging()) {
          auto ev = event(EventKind::straggler_end);
          ev.first_node = e.node;
          ev.node_count = 1;
          emit(ev);
        }
      }
      return;
    case Kind::straggler_seen:
      if (e.gen == node_gen_[static_cast<std::size_t>(e.node)] &&
          slow_[static_cast<std::size_t>(e.node)] > 1 &&
          nodes_[static_cast<std::size_t>(e.node)] == NodeState::running &&
          phase_ == Phase::running) {
        ++result_.evictions;
        if (logging()) {
          auto ev = event(EventKind::eviction);
          ev.first_node = e.node;
          ev.node_count = 1;
          ev.interrupts = true;
          emit(ev);
          repairs_.open({}, "node", e.node, e.node, 1);
        }
        send_to_repair(e.node, -1);
        interrupt(false);
      }
      return;
    case Kind::repaired:
      if (e.gen != node_gen_[static_cast<std::size_t>(e.node)]) return;
      nodes_[static_cast<std::size_t>(e.node)] = NodeState::spare;
      spares_.insert(e.node);
      draw_clocks(e.node);
      // One event for all the nodes of one incident (repair_incidents.hpp).
      if (auto ev = logging() ? repairs_.back(e.node, now_) : std::nullopt) emit(*ev);
      if (phase_ == Phase::waiting) restart_or_wait();
      return;
    case Kind::phase_end:
      if (e.gen == phase_gen_) on_phase_end();
      return;
    case Kind::upload_done:
      if (e.gen == upload_gen_ && upload_pending_) on_upload_done();
      return;
    case Kind::peer_copy_done:
      if (e.gen == peer_gen_) {
        memory_steps_ = peer_steps_;
        std::fill(lost_slot_.begin(), lost_slot_.end(), false);  // every shard twice again
        emit_step(EventKind::peer_copy_done, memory_steps_);
      }
      return;
    case Kind::plane_repaired:
      on_plane_repaired(e);
      return;
    case Kind::port_repaired:
      on_port_repaired(e);
      return;
    case Kind::domain_failure:
      if (e.gen ==
          domain_gen_[static_cast<std::size_t>(e.process)][static_cast<std::size_t>(e.node)]) {
        on_domain_failure(e);
      }
      return;
    case Kind::domain_repaired:
      if (e.gen ==
          domain_gen_[static_cast<std::size_t>(e.process)][static_cast<std::size_t>(e.node)]) {
        draw_domain_clock(static_cast<std::size_t>(e.process), e.node);
      }
      return;
    case Kind::injected:
      on_injected(injected_[static_cast<std::size_t>(e.process)]);
      return;
  }
}

// A checkpoint comes due. With an upload still in flight, one bound for storage
// waits for it (block), gives way (skip: in memory only its upload), or stages
// now and queues its upload (queue).
void CampaignEngine::start_checkpoint() {
  const auto* spec = policy_.spec;
  staged_to_storage_ = !spec->in_memory || since_persistent_ + 1 >= policy_.persistent_every;
  if (spec->async_upload && staged_to_storage_ && upload_pending_) {
    switch (spec->upload_overlap) {
      case models::scenario::UploadOverlap::block:
        phase_ = Phase::checkpointing;
        blocked_ = true;
        ++phase_gen_;
        if (logging()) emit(event(EventKind::checkpoint_blocked));
        return;
      case models::scenario::UploadOverlap::skip:
        ++result_.checkpoints_skipped;
        if (logging()) emit(event(EventKind::checkpoint_skipped));
        if (!spec->in_memory) {
          since_checkpoint_s_ = 0;
          return;
        }
        staged_to_storage_ = false;  // the in-memory copy still goes to the peers
        break;
      case models::scenario::UploadOverlap::queue:
        break;
    }
  }
  stage_checkpoint();
}

void CampaignEngine::stage_checkpoint() {
  phase_ = Phase::checkpointing;
  blocked_ = false;
  staged_steps_ = done_steps_;
  push(now_ + policy_.stall_s, Kind::phase_end, 0, 0, ++phase_gen_);
  emit_step(EventKind::checkpoint_started, staged_steps_, policy_.stall_s);
}

// Staged: training resumes; the copy goes to the peers and, when bound for
// storage, uploads (or was uploaded during the stall, when not asynchronous).
void CampaignEngine::end_checkpoint() {
  const auto* spec = policy_.spec;
  ++result_.checkpoints;
  since_checkpoint_s_ = 0;
  phase_ = Phase::running;
  emit_step(EventKind::checkpoint_staged, staged_steps_);
  if (spec->in_memory) {
    peer_steps_ = staged_steps_;
    push(now_ + policy_.peer_copy_s, Kind::peer_copy_done, 0, 0, ++peer_gen_);
    since_persistent_ = staged_to_storage_ ? 0 : since_persistent_ + 1;
  }
  if (!staged_to_storage_) return;
  if (!spec->async_upload) {
    make_durable(staged_steps_);
  } else if (!upload_pending_) {
    begin_upload(staged_steps_);
  } else {  // queue: this one waits; a newer one replaces it
    queued_ = true;
    queued_steps_ = staged_steps_;
  }
}

void CampaignEngine::begin_upload(double steps) {
  upload_pending_ = true;
  uploading_steps_ = steps;
  push(now_ + policy_.upload_s, Kind::upload_done, 0, 0, ++upload_gen_);
  emit_step(EventKind::upload_started, steps, policy_.upload_s);
}

// A checkpoint is in storage: a failure from now on rolls back to it.
void CampaignEngine::make_durable(double steps) {
  durable_steps_ = steps;
  ++result_.uploads;
  result_.storage_bytes += policy_.checkpoint_bytes;
  emit_step(EventKind::upload_done, steps);
}

void CampaignEngine::on_upload_done() {
  upload_pending_ = false;
  make_durable(uploading_steps_);
  if (queued_) {
    queued_ = false;
    begin_upload(queued_steps_);
  }
  if (blocked_ && phase_ == Phase::checkpointing) stage_checkpoint();
}

void CampaignEngine::on_phase_end() {
  switch (phase_) {
    case Phase::checkpointing:
      end_checkpoint();
      return;
    case Phase::detecting:
      if (logging()) {
        auto ev = event(EventKind::detected);
        ev.duration_s = policy_.detect_s;
        emit(ev);
      }
      restart_or_wait();
      return;
    case Phase::restarting:
      ++result_.restarts;
      since_checkpoint_s_ = 0;
      phase_ = Phase::running;
      from_storage_ = false;
      if (logging()) {
        auto ev = event(EventKind::running);
        ev.node_count = running_nodes_;
        emit(ev);
      }
      return;
    case Phase::running:
    case Phase::waiting:
      return;
  }
}

void CampaignEngine::interrupt(bool detect) {
  // A failure during recovery interrupts the job again: it restarts recovery.
  ++result_.interruptions;
  // Back to the last checkpoint that survives: in a peer's memory, unless this
  // failure took both copies of a shard; else the last one in storage. Uploads
  // and peer copies in flight lose the failed node's shard: abandoned.
  double back_to = durable_steps_;
  std::string loads = "from storage";
  if (policy_.spec->in_memory) {
    if (memory_lost_) {
      if (!from_storage_) ++result_.restores_from_storage;
      from_storage_ = true;
      memory_steps_ = durable_steps_;
      loads = "from storage: both copies of a shard lost";
    } else {
      back_to = std::max(back_to, memory_steps_);
      if (!from_storage_) loads = "from peer memory";
    }
    memory_lost_ = false;
    ++peer_gen_;
  }
  const double lost_s = std::max(0.0, done_steps_ - back_to) * healthy_step_s_;
  if (done_steps_ > back_to) {
    result_.seconds_by_cause[at(Cause::lost_work)] += lost_s;
    done_steps_ = back_to;
  }
  if (logging()) {
    auto ev = event(EventKind::rollback);
    ev.lost_work_s = lost_s;
    ev.step = done_steps_;
    ev.detail = loads + (upload_pending_ ? "; the upload in flight is abandoned" : "");
    emit(ev);
  }
  upload_pending_ = false;
  queued_ = false;
  blocked_ = false;
  ++upload_gen_;
  ++phase_gen_;
  if (detect) {
    phase_ = Phase::detecting;
    push(now_ + policy_.detect_s, Kind::phase_end, 0, 0, phase_gen_);
  } else {
    restart_or_wait();
  }
}

void CampaignEngine::send_to_repair(int node, double until) {
  if (until < 0) until = now_ + random_.exponential(policy_.spec->repair_s);
  repair_until_[static_cast<std::size_t>(node)] = until;
  auto& state = nodes_[static_cast<std::size_t>(node)];
  if (state == NodeState::running) --running_nodes_;
  if (state == NodeState::spare) spares_.erase(node);
  state = NodeState::repair;
  auto& slot = slot_[static_cast<std::size_t>(node)];
  if (slot >= 0) {
    holder_[static_cast<std::size_t>(slot)] = -1;
    empty_slots_.insert(slot);
    lost_slot_[static_cast<std::size_t>(slot)] = true;  // its replacement holds nothing yet
    slot = -1;
  }
  slow_[static_cast<std::size_t>(node)] = 1;
  std::erase(slow_nodes_, node);
  const auto gen = ++node_gen_[static_cast<std::size_t>(node)];
  if (logging()) repairs_.sent(node);
  push(until, Kind::repaired, node, 0, gen);
}

void CampaignEngine::restart_or_wait() {
  // A restart takes the whole job: running nodes plus spares up to its size,
  // the lowest-numbered spares first.
  while (running_nodes_ < steps_.job_nodes()) {
    const int n = spares_.lowest();
    if (n < 0) break;
    spares_.erase(n);
    nodes_[static_cast<std::size_t>(n)] = NodeState::running;
    ++running_nodes_;
    // It takes the first position left empty.
    const int free = empty_slots_.lowest();
    if (free >= 0) {
      empty_slots_.erase(free);
      holder_[static_cast<std::size_t>(free)] = n;
      slot_[static_cast<std::size_t>(n)] = free;
    }
  }
  const bool whole = running_nodes_ == steps_.job_nodes();
  const bool shrink = policy_.spec->no_spare == models::scenario::NoSpare::shrink &&
                      running_nodes_ >= steps_.min_nodes() &&
                      steps_.step_time_s(running_nodes_) > 0;
  // With every plane of the fabric down, or a switch without up ports, nothing
  // runs: wait for one back.
  const bool fabric = planes_down_ < static_cast<int>(plane_until_.size()) && !fabric_.cut_off();
  ++phase_gen_;
  if (fabric && (whole || shrink)) {
    phase_ = Phase::restarting;
    const double restart_s =
        from_storage_ || !policy_.spec->in_memory ? policy_.storage_restart_s : policy_.restart_s;
    push(now_ + restart_s, Kind::phase_end, 0, 0, phase_gen_);
    if (logging()) {
      auto ev = event(EventKind::restart);
      ev.duration_s = restart_s;
      ev.node_count = running_nodes_;
      if (!whole) {
        ev.detail = fmt::format("shrunk: {} of {} nodes", running_nodes_, steps_.job_nodes());
      } else if (shrunk_) {
        ev.detail = fmt::format("grown back to {} nodes", running_nodes_);
      }
      ev.detail +=
          (ev.detail.empty() ? "" : "; ") + std::string(from_storage_ || !policy_.spec->in_memory
                                                            ? "loads from storage"
                                                            : "loads from peer memory");
      emit(ev);
    }
    shrunk_ = !whole;
  } else {
    const bool already = phase_ == Phase::waiting;  // a repair came, not enough
    phase_ = Phase::waiting;
    if (logging() && !already) {
      auto ev = event(EventKind::waiting);
      ev.node_count = running_nodes_;
      ev.detail = fmt::format("{} of {} nodes", running_nodes_, steps_.job_nodes());
      emit(ev);
    }
  }
}

void CampaignEngine::emit_step(EventKind kind, double step, double duration_s) const {
  if (!logging()) return;
  auto ev = event(kind);
  ev.step = step;
  ev.duration_s = duration_s;
  emit(ev);
}

CampaignEvent CampaignEngine::event(EventKind kind) const {
  CampaignEvent e;
  e.time_s = now_;
  e.kind = kind;
  return e;
}

void CampaignEngine::emit(const CampaignEvent& e) const { (*limits_.events)(e); }

}  // namespace myriad::sim::campaign
