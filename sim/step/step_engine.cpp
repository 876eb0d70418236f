#include "sim/step/step_engine.hpp"

#include <fmt/format.h>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/plan/pipeline_schedule.hpp"
#include "models/plan/rank_layout.hpp"
#include "models/plan/step_plan.hpp"
#include "sim/cost/comm_cost.hpp"
#include "sim/cost/network_slowdown.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/step/link_monitor.hpp"
#include "sim/step/step_actors.hpp"
#include "sim/step/step_lowering.hpp"
#include "sim/topology/fat_tree_platform.hpp"

XBT_LOG_NEW_DEFAULT_CATEGORY(myriad_step, "Myriad's step engine: stages, messages, collectives");

namespace myriad::sim {
namespace {

using models::PipelineTask;
using namespace step_detail;  // NOLINT(google-build-using-namespace): the engine's own parts

// A task's compute, slowed by the rank group's straggler factor; with layer
// collectives played as flows, layer by layer, each followed by them (a
// weight-gradient pass has none: GEMMs only).
void run_task(StepState& p, int row, int stage, const PipelineTask& t, double slow) {
  if (!p.layer_flows || !t.moves()) {
    compute_for(p, slow * p.program.pass_time(stage, t));
    return;
  }
  // The embedding or the head, an MoE model's dense layers and what partial
  // recomputation runs again, whose collectives stay priced inside their time.
  compute_for(p, slow * (p.program.ends_time(stage, t) + p.program.priced_layers_time(stage, t)));
  const auto& comms = t.forward ? p.program.costs.forward_comms : p.program.costs.backward_comms;
  const auto& plays = t.forward ? p.forward_play : p.backward_play;
  const auto& overlapped =
      t.forward ? p.program.costs.forward_beside : p.program.costs.backward_beside;
  const auto& beside_plays = t.forward ? p.forward_beside_play : p.backward_beside_play;
  const bool any_beside = std::any_of(beside_plays.begin(), beside_plays.end(),
                                      [](const std::vector<int>& k) { return !k.empty(); });
  const int layers = p.program.main_layers(stage, t.chunk);
  for (int l = 0; l < layers; ++l) {
    // Overlapped collectives played as flows: one after another beside the
    // layer's compute, which ends when they have.
    sg4::ActorPtr side;
    if (any_beside) {
      side = beside("layer-traffic", [&p, row, stage, &overlapped, &beside_plays] {
        for (std::size_t i = 0; i < overlapped.size(); ++i) {
          for (const int k : beside_plays[i]) {
            p.traffic[static_cast<std::size_t>(k)]->play(p, row, stage, overlapped[i],
                                                         Played::beside);
          }
        }
      });
    }
    compute_for(p, slow * p.layer_local.of(t));
    if (side) side->join();
    for (std::size_t i = 0; i < comms.size(); ++i) {
      for (const int k : plays[i]) {
        p.traffic[static_cast<std::size_t>(k)]->play(p, row, stage, comms[i], Played::exposed);
      }
    }
  }
}

// The mailbox a pass's messages arrive in on `stage`: one per direction of
// passes, and under DualPipe per direction of the pipeline too (its two
// directions' messages come from different neighbours, in no common order).
std::string pipeline_mailbox(const StepState& p, int row, int stage, const PipelineTask& t) {
  const bool both_ways = p.program.schedule == models::scenario::Schedule::dualpipe;
  return mailbox(t.forward ? "f" : "b", p.rows[row], stage) +
         (both_ways ? (t.chunk == 0 ? ".0" : ".1") : "");
}

// Waits for a task's input, checking it is the message the schedule expects.
void receive_input(StepState& p, int row, int stage, const PipelineTask& t) {
  const models::ChunkPlace source =
      models::input_of(p.program.schedule, p.pp, p.program.v, stage, t);
  sg4::Mailbox* in = sg4::Mailbox::by_name(pipeline_mailbox(p, row, stage, t));
  const double start = sg4::Engine::get_clock();
  const Tag* got = in->get<Tag>();
  // From the neighbour holding the position before (after) it: the previous
  // (next) stage's same chunk, or across the wrap of the interleaved schedule.
  const int expected = source.chunk;
  if (got->chunk != expected || got->micro_batch != t.micro_batch) {
    throw std::logic_error("step engine: pipeline messages arrived out of order");
  }
  const auto from = static_cast<int>(at(row, p.pp, source.stage));
  const double sent = p.actors[static_cast<std::size_t>(from)]
                          .sent_at[at(t.forward ? 0 : 1, p.program.v * p.program.m,
                                      static_cast<int>(at(expected, p.program.m, t.micro_batch)))];
  p.actor(row, stage).wait_s += sg4::Engine::get_clock() - start;
  record(p, row, stage, Activity::wait, start, "wait", from, sent);
  XBT_DEBUG("stage %d replica %d: %s c%d mb%d in after %.6g s", stage,
            p.rows[static_cast<std::size_t>(row)] * p.per_node, t.forward ? "fwd" : "bwd", t.chunk,
            t.micro_batch, sg4::Engine::get_clock() - start);
}

// A traced workload's messages: each send its own mailbox (the trace's tags are
// its own business), read by the task that depends on it.
std::string traced_mailbox(const StepState& p, int row, int stage, int task) {
  return fmt::format("w.{}.{}.{}", p.rows[static_cast<std::size_t>(row)], stage, task);
}

void receive_traced(StepState& p, int row, int stage, const StepTask& t) {
  for (const Dependency& d : t.after) {
    if (d.stage == stage) continue;
    const double start = sg4::Engine::get_clock();
    XBT_DEBUG("stage %d: %s waits for stage %d's task %d", stage, t.name().c_str(), d.stage,
              d.task);
    (void)sg4::Mailbox::by_name(traced_mailbox(p, row, d.stage, d.task))->get<Tag>();
    p.actor(row, stage).wait_s += sg4::Engine::get_clock() - start;
    const auto from = static_cast<int>(at(row, p.pp, d.stage));
    record(p, row, stage, Activity::wait, start, "wait", from,
           p.actors[static_cast<std::size_t>(from)].task_sent_at[static_cast<std::size_t>(d.task)]);
  }
}

void send_traced(StepState& p, int row, int stage, int task, const StepTask& t) {
  ActorState& me = p.actor(row, stage);
  const double start = sg4::Engine::get_clock();
  me.task_sent_at[static_cast<std::size_t>(task)] = start;
  const double bytes = t.bytes * p.group_gpus * p.weights[static_cast<std::size_t>(row)];
  const int to = p.traced_receiver[static_cast<std::size_t>(stage)][static_cast<std::size_t>(task)];
  sg4::Mailbox* out = sg4::Mailbox::by_name(traced_mailbox(p, row, stage, task));
  XBT_DEBUG("stage %d: task %d (%s) sends %.0f bytes to stage %d", stage, task, t.name().c_str(),
            bytes, to);
  if (bytes <= 0 || to < 0) {  // no size traced, or no receiver: its traced time
    if (t.seconds > 0) sg4::this_actor::sleep_for(t.seconds);
    out->put_init(&p.tags[0], 0)->detach();
    return;
  }
  const int dst = p.actor(row, to).host;
  if (t.stream == Stream::network) {
    p.monitor->flow_started(me.host, dst, bytes);
    out->put_init(&p.tags[0], static_cast<uint64_t>(bytes))->detach();
    ++p.flows;
    return;
  }
  transfer(p, me.host, dst, out->put_init(&p.tags[0], static_cast<uint64_t>(bytes))->start(),
           bytes);
  me.wait_s += sg4::Engine::get_clock() - start;
  record(p, row, stage, Activity::pp, start, "send");
}

void send_output(StepState& p, int row, int stage, const PipelineTask& t) {
  const models::ChunkPlace dest =
      models::output_of(p.program.schedule, p.pp, p.program.v, stage, t);
  const int to = dest.stage;
  PipelineTask arriving = t;
  arriving.chunk = dest.chunk;
  sg4::Mailbox* out = sg4::Mailbox::by_name(pipeline_mailbox(p, row, to, arriving));
  Tag* tag = &p.tags[at(t.chunk, p.program.m, t.micro_batch)];
  const auto bytes =
      static_cast<uint64_t>(p.pp_bytes_per_node * p.weights[static_cast<std::size_t>(row)]);
  const double start = sg4::Engine::get_clock();
  ActorState& me = p.actor(row, stage);
  me.sent_at[at(t.forward ? 0 : 1, p.program.v * p.program.m,
                static_cast<int>(at(t.chunk, p.program.m, t.micro_batch)))] = start;
  const int dst = p.actor(row, to).host;
  if (p.program.overlap_pp) {
    p.monitor->flow_started(me.host, dst, static_cast<double>(bytes));
    // Sent and let go: the next stage waits for it. (Kept to be waited for, each
    // send stayed in SimGrid's list of the actor's activities, which it searches
    // linearly at every completion.)
    out->put_init(tag, bytes)->detach();
    ++p.flows;
    return;
  }
  transfer(p, me.host, dst, out->put_init(tag, bytes)->start(), static_cast<double>(bytes));
  me.wait_s += sg4::Engine::get_clock() - start;
  record(p, row, stage, Activity::pp, start, "send");
}

// Waits for a task of the rank group's other stream: its end, or its start plus
// the lag (a lag measured in compute is slowed by the rank group's straggler factor).
void wait_for(StepState& p, int row, int stage, const Dependency& d, double slow) {
  if (d.stage != stage) return;  // a pipeline message: the pass receives it
  const int k = p.signal_of[static_cast<std::size_t>(stage)][static_cast<std::size_t>(d.task)];
  if (k < 0) return;  // on the same stream, before it: done
  Signal& signal = p.actor(row, stage).signals[static_cast<std::size_t>(k)];
  const sg4::SemaphorePtr& event = d.on_start ? signal.started : signal.done;
  event->acquire();
  event->release();
  if (d.on_start) {
    const double at = signal.start_s + slow * d.lag_s;
    if (at > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(at);
  }
}

// Tells the rank group's other stream that a task it waits for started (ended).
void signal(StepState& p, int row, int stage, int task, bool done) {
  const int k = p.signal_of[static_cast<std::size_t>(stage)][static_cast<std::size_t>(task)];
  if (k < 0) return;
  Signal& s = p.actor(row, stage).signals[static_cast<std::size_t>(k)];
  if (!done) s.start_s = sg4::Engine::get_clock();
  (done ? s.done : s.started)->release();
}

// The rank group's data-parallel communicator: its collectives one after another
// in program order, beside compute, each once what it waits for is there.
void play_dp_stream(StepState& p, int row, int stage, double slow) {
  const auto& tasks = p.program.stages[static_cast<std::size_t>(stage)].tasks;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const StepTask& t = tasks[i];
    if (t.stream != Stream::dp) continue;
    for (const Dependency& d : t.after) wait_for(p, row, stage, d, slow);
    signal(p, row, stage, static_cast<int>(i), false);
    dp_beside_compute(p, row, stage, t);
    signal(p, row, stage, static_cast<int>(i), true);
  }
}

// One rank group's step: the stage's program, its compute stream and let-go
// sends in order on this actor, its data-parallel stream on a helper beside it.
void play_stage(StepState& p, int row, int stage) {
  for (const char* kind : {"f", "b", "dp", "ep"}) {
    for (const char* parity : {"", ".0", ".1"}) {
      // ep.R.S.0 and .1, dp bare, f and b both (.0 and .1: DualPipe's directions)
      if ((*kind == 'e' && *parity == '\0') || (*kind == 'd' && *parity != '\0')) continue;
      sg4::Mailbox::by_name(mailbox(kind, p.rows[row], stage) + parity)
          ->set_receiver(sg4::Actor::self());
    }
  }
  const double slow = p.places[at(row, p.pp, stage)].slowdown;
  const auto& tasks = p.program.stages[static_cast<std::size_t>(stage)].tasks;
  if (p.program.traced) {  // a traced workload's messages to this rank group: its own mailboxes
    for (const StepTask& t : tasks) {
      for (const Dependency& d : t.after) {
        if (d.stage == stage) continue;
        sg4::Mailbox::by_name(traced_mailbox(p, row, d.stage, d.task))
            ->set_receiver(sg4::Actor::self());
      }
    }
  }
  ActorState& me = p.actor(row, stage);
  for (const int k : p.signal_of[static_cast<std::size_t>(stage)]) {
    if (k >= 0) me.signals.push_back({sg4::Semaphore::create(0), sg4::Semaphore::create(0), 0});
  }
  if (std::any_of(tasks.begin(), tasks.end(),
                  [](const StepTask& t) { return t.stream == Stream::dp; })) {
    (void)beside("dp-stream", [&p, row, stage, slow] { play_dp_stream(p, row, stage, slow); });
  }
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const StepTask& t = tasks[i];
    if (t.stream == Stream::dp) continue;
    const auto task = static_cast<int>(i);
    const bool input = std::any_of(t.after.begin(), t.after.end(),
                                   [stage](const Dependency& d) { return d.stage != stage; });
    if (input && p.program.traced) receive_traced(p, row, stage, t);
    if (input && !p.program.traced) {
      for (const PipelineTask* x : {&t.pass, t.pass.paired ? &t.pair : nullptr}) {
        if (x != nullptr &&
            models::input_of(p.program.schedule, p.pp, p.program.v, stage, *x).stage >= 0) {
          receive_input(p, row, stage, *x);
        }
      }
    }
    const double start = sg4::Engine::get_clock();
    for (const Dependency& d : t.after) wait_for(p, row, stage, d, slow);
    signal(p, row, stage, task, false);
    switch (t.kind) {
      case TaskKind::pass: {
        const double begun = sg4::Engine::get_clock();
        // An F&B pass: its time as priced where none of its all-to-alls are flows.
        if (t.pass.paired && p.pair_flows) {
          run_pair(p, row, stage, t, slow);
        } else if (t.pass.paired) {
          compute_for(p, slow * t.seconds);
        } else {
          run_task(p, row, stage, t.pass, slow);
        }
        record(p, row, stage, t.activity, begun, t.name());
        break;
      }
      case TaskKind::send:
        if (p.program.traced) {
          send_traced(p, row, stage, task, t);
        } else {
          send_output(p, row, stage, t.pass);
          if (t.pass.paired) send_output(p, row, stage, t.pair);  // an F&B pass's second output
        }
        break;
      case TaskKind::dp_collective:
        collective_task(p, row, stage, t);
        if (sg4::Engine::get_clock() > start) record(p, row, stage, Activity::dp, start, t.name());
        break;
      case TaskKind::join:
        if (sg4::Engine::get_clock() > start) record(p, row, stage, Activity::dp, start, t.name());
        break;
      case TaskKind::optimizer:
      case TaskKind::kernel:
        compute_for(p, slow * t.seconds);
        record(p, row, stage, t.activity, start, t.name());
        break;
    }
    signal(p, row, stage, task, true);
  }
  me.finished = true;
  XBT_VERB("stage %d replica %d: done at %.6g s, %.6g s waiting", stage,
           p.rows[static_cast<std::size_t>(row)] * p.per_node, sg4::Engine::get_clock(), me.wait_s);
}

// Which tasks another stream of their rank group waits for: those get signals.
std::vector<std::vector<int>> signals_needed(const StepProgram& program) {
  std::vector<std::vector<int>> slot;
  for (std::size_t stage = 0; stage < program.stages.size(); ++stage) {
    const auto& tasks = program.stages[stage].tasks;
    std::vector<int> of(tasks.size(), -1);
    for (const StepTask& t : tasks) {
      for (const Dependency& d : t.after) {
        if (static_cast<std::size_t>(d.stage) != stage) continue;
        if (tasks[static_cast<std::size_t>(d.task)].stream != t.stream || d.on_start) {
          of[static_cast<std::size_t>(d.task)] = 0;
        }
      }
    }
    int n = 0;
    for (int& k : of) k = k == 0 ? n++ : -1;
    slot.push_back(std::move(of));
  }
  return slot;
}

// Hosts for the simulated rank groups (and ghosts), each where its first node sits:
// rank groups are numbered replica-fastest (Megatron's order, dp before pp). A
// ghost sits where the next replica would (latency is the same everywhere and,
// without contention, so is bandwidth: where it sits does not change the result).
void build_platform(StepState& p, const models::scenario::Scenario& s) {
  p.platform =
      std::make_unique<FatTreePlatform>(s.cluster, p.node_Bps, p.nodes_per_group, p.classes);
  const int rows = static_cast<int>(p.rows.size());
  for (int row = 0; row < rows; ++row) {
    const int weight = p.weights[static_cast<std::size_t>(row)];
    for (int stage = 0; stage < p.pp; ++stage) {
      const ActorPlace& place = p.places[p.index(row, stage)];
      const std::string name =
          weight == 1
              ? fmt::format("stage{}-replica{}", stage, p.rows[static_cast<std::size_t>(row)])
              // a class: its link reports are its members' NICs together
              : fmt::format("stage{}-replicas{}-{}", stage, p.rows[static_cast<std::size_t>(row)],
                            p.rows[static_cast<std::size_t>(row)] + weight - 1);
      ActorState& a = p.actor(row, stage);
      a.host = p.platform->add_host(name, place.node, 1 / place.link, weight);
      a.ring_ready = sg4::Semaphore::create(0);
      p.replicas->add_ring_ports(p, row, stage, name);
    }
  }
  for (int row = 0; row < rows; ++row) {
    for (int stage = 0; stage < p.pp; ++stage) (void)p.replicas->add_ring_mirrors(p, s, row, stage);
  }
  // What each kind of layer traffic needs beside the rank groups (ghosts, ports).
  for (int row = 0; row < rows; ++row) {
    for (int stage = 0; stage < p.pp; ++stage) {
      ActorState& a = p.actor(row, stage);
      a.traffic.resize(p.traffic.size());
      for (const auto& kind : p.traffic) a.traffic_hosts += kind->add_hosts(p, s, row, stage);
    }
  }
  p.platform->seal();
  p.monitor = std::make_unique<LinkMonitor>(*p.platform);
}

StepSimulation collect(StepState& p) {
  StepSimulation r;
  r.step_time_s = sg4::Engine::get_clock();
  std::vector<std::vector<Span>> timelines;
  for (ActorState& a : p.actors) timelines.push_back(std::move(a.timeline));
  if (p.program.traced) {  // a trace ends where it ends, not with an optimizer step
    const auto unfinished = std::count_if(p.actors.begin(), p.actors.end(),
                                          [](const ActorState& a) { return !a.finished; });
    if (unfinished > 0 || !std::isfinite(r.step_time_s)) {
      throw std::runtime_error(fmt::format(
          "the step engine stopped at {} s with {} of {} rank groups unfinished playing the "
          "workload (a deadlock: a message its trace waits for that none sends in time)",
          r.step_time_s, unfinished, p.actors.size()));
    }
  } else {
    require_finished(timelines, r.step_time_s);
  }
  r.all_replicas = p.all_replicas;
  r.replicas_per_actor = p.per_node;
  for (const int row : p.rows) r.replicas.push_back(row * p.per_node);
  r.classes = p.classes;
  for (const int w : p.weights) r.class_sizes.push_back(w * p.per_node);
  for (const ActorState& a : p.actors) {
    r.hosts += 1 + (a.ghost >= 0 ? 1 : 0) + static_cast<std::size_t>(a.traffic_hosts);
  }
  r.actors = p.actors.size();
  r.flows = p.flows;
  std::size_t last = 0;
  for (std::size_t g = 0; g < timelines.size(); ++g) {
    const double finish = timelines[g].empty() ? 0 : timelines[g].back().end_s;
    const int row = static_cast<int>(g) / p.pp;
    r.groups.push_back({static_cast<int>(g) % p.pp,
                        p.rows[static_cast<std::size_t>(row)] * p.per_node, p.actors[g].wait_s,
                        finish, p.places[g].slowdown});
    if (finish > r.groups[last].finish_s) last = g;
  }
  for (int stage = 0; stage < p.pp; ++stage) r.wait_s.push_back(p.actor(0, stage).wait_s);
  r.breakdown = p.program.breakdown(timelines, r.step_time_s);
  r.critical_path = critical_path(timelines, p.pp);
  for (auto& stop : r.critical_path.groups) {
    stop.replica = p.rows[static_cast<std::size_t>(stop.replica)] * p.per_node;  // row -> replica
  }
  r.links = p.monitor->loads(r.step_time_s);
  r.events = std::move(p.events);
  r.stragglers = p.stragglers;
  return r;
}

}  // namespace

bool valid_step_log(const std::string& level) {
  return level.empty() || level == "verbose" || level == "debug";
}

StepSimulation simulate_step(const models::scenario::Scenario& s, const DeviceProfile& measured,
                             const StepOptions& options) {
  if (!valid_step_log(options.log)) {
    throw std::invalid_argument(
        fmt::format("step engine log '{}': expected verbose or debug", options.log));
  }
  const DeviceProfile profile = on_hardware(measured, s.cluster.gpu);
  std::vector<Straggler> stragglers = options.stragglers ? *options.stragglers : draw_stragglers(s);
  // A scenario the engine cannot play is refused here, leaving the process's one
  // engine unused.
  StepState p(
      lower_step(s, profile, std::move(stragglers), options.all_replicas, options.workload));
  // SimGrid aborts or crashes where an allocation fails (xbt_malloc throws
  // nothing), so the address space the step is expected to take is mapped once,
  // untouched, and given back before the engine starts: where it cannot be (a
  // `ulimit -v`), std::bad_alloc is thrown here and reported as out of memory.
  const double expected_bytes = static_cast<double>(p.rows.size()) * p.pp * kStepBytesPerRankGroup;
  // Through a volatile pointer, so that the pair is not optimized away.
  void* volatile reserved = ::operator new(static_cast<std::size_t>(expected_bytes));
  ::operator delete(reserved);
  static std::atomic<bool> ran{false};
  if (ran.exchange(true)) {
    throw std::logic_error("simulate_step: SimGrid runs one engine per process");
  }
  const int groups = p.pp * static_cast<int>(p.rows.size());
  p.actors.resize(static_cast<std::size_t>(groups));
  for (ActorState& a : p.actors) a.sent_at.assign(at(2, p.program.v * p.program.m, 0), 0.0);
  if (p.program.traced) {
    // Each send's receiver, once: the first other stage with a task that waits for it.
    for (const StageProgram& stage : p.program.stages) {
      p.traced_receiver.emplace_back(stage.tasks.size(), -1);
    }
    for (int to = p.pp - 1; to >= 0; --to) {
      for (const StepTask& t : p.program.stages[static_cast<std::size_t>(to)].tasks) {
        for (const Dependency& d : t.after) {
          if (d.stage != to) {
            p.traced_receiver[static_cast<std::size_t>(d.stage)][static_cast<std::size_t>(d.task)] =
                to;
          }
        }
      }
    }
    for (int row = 0; row < static_cast<int>(p.rows.size()); ++row) {
      for (int stage = 0; stage < p.pp; ++stage) {
        p.actor(row, stage)
            .task_sent_at.assign(p.program.stages[static_cast<std::size_t>(stage)].tasks.size(), 0);
      }
    }
  }
  p.signal_of = signals_needed(p.program);
  p.tags.resize(at(p.program.v, p.program.m, 0));
  for (int c = 0; c < p.program.v; ++c) {
    for (int j = 0; j < p.program.m; ++j) p.tags[at(c, p.program.m, j)] = Tag{c, j};
  }

  int argc = 1;
  char name[] = "myriad";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  if (!options.log.empty()) {
    xbt_log_control_set(fmt::format("myriad_step.thres:{}", options.log).c_str());
  }
  // With data-parallel overlap each rank group plays its data-parallel stream
  // on a helper beside it.
  const bool dp_stream =
      std::any_of(p.program.stages.begin(), p.program.stages.end(), [](const StageProgram& stage) {
        return std::any_of(stage.tasks.begin(), stage.tasks.end(),
                           [](const StepTask& t) { return t.stream == Stream::dp; });
      });
  const int helpers = p.program.overlap_dp || dp_stream ? 1 : 0;
  apply_engine_config(options.sanitizer_safe, groups * (1 + helpers));
  build_platform(p, s);
  for (int row = 0; row < static_cast<int>(p.rows.size()); ++row) {
    for (int stage = 0; stage < p.pp; ++stage) {
      sg4::Actor::create(fmt::format("stage-{}-replica-{}", stage, p.rows[row]),
                         p.platform->host(p.actor(row, stage).host),
                         [&p, row, stage] { play_stage(p, row, stage); });
    }
  }
  engine.run();
  return collect(p);
}

}  // namespace myriad::sim
