// Days of training for one policy set and one seed, advanced from event to
// event: failures, detection, repairs, checkpoints and their uploads, straggler
// onsets and ends. Between events the job progresses by elapsed time over the
// step time of the current cluster state (StepTimeCache).
//
// The job runs on `job_nodes` nodes; `hot_spares` more wait idle. Every node in
// service (running or spare) carries a clock per failure process and per
// straggler process, renewed after each draw; a node under repair has none and
// comes back with fresh clocks (a repaired node is as good as new).
// A failure of a running node interrupts the job: progress rolls back to the
// last durable checkpoint; after detection and diagnosis, spares replace the
// nodes under repair, or the job waits for a repair (or, with
// `no_spare: shrink`, restarts on fewer data-parallel replicas until the next
// restart); then job start, communicator init, checkpoint load and warm-up. A
// failure during recovery starts the recovery over, as in Daly's model.
// A plane of a multi-plane fabric failing stops no node: the job runs on at
// the step time of the fabric with that plane out until it is repaired, and
// waits (as for a repair) while every plane is down. A spine or an up port
// failing neither: the job runs at the pace of the switch that lost the most up
// ports until it is back, and waits while some switch has none left
// (fabric_ports.hpp); a spine or uplink process runs one clock over all of its
// switches or ports, and a failure drawn on one already out is none.
// Stragglers: the slowest running node sets the pace (synchronous training
// waits for it at every collective); overlapping episodes on one node end
// together with the first to end.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "models/random/random_stream.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/campaign/campaign_event.hpp"
#include "sim/campaign/fabric_ports.hpp"
#include "sim/campaign/index_set.hpp"
#include "sim/campaign/repair_incidents.hpp"
#include "sim/campaign/resolved_policy.hpp"
#include "sim/campaign/run_result.hpp"
#include "sim/campaign/step_time_cache.hpp"

namespace myriad::sim::campaign {

using models::RandomStream;

struct CampaignLimits {
  double horizon_s = 0;               // stop here at the latest
  double target_tokens = 0;           // or when this many tokens are trained (0: no target)
  const EventSink* events = nullptr;  // every event, as it happens (nullptr: none)
};

class CampaignEngine {
 public:
  CampaignEngine(const models::scenario::Scenario& s, const ResolvedPolicy& policy,
                 StepTimeCache& steps, CampaignLimits limits, RandomStream random);
  ~CampaignEngine();
  CampaignEngine(const CampaignEngine&) = delete;
  CampaignEngine& operator=(const CampaignEngine&) = delete;
  CampaignEngine(CampaignEngine&&) = delete;
  CampaignEngine& operator=(CampaignEngine&&) = delete;

  RunResult run();

 private:
  enum class Phase { running, checkpointing, detecting, waiting, restarting };
  enum class NodeState { running, spare, repair };
  enum class Kind {
    failure,
    straggler_end,
    straggler_seen,
    repaired,
    phase_end,
    upload_done,
    peer_copy_done,
    domain_failure,   // node: the domain's index, process: its failure process
    domain_repaired,  // the same
    plane_repaired,   // node: the plane's index
    port_repaired,    // node: the spine's or port's index, process: index into port_kinds_
    injected          // process: index into injected_
  };
  struct Event {
    double time = 0;
    std::uint64_t seq = 0;
    Kind kind = Kind::failure;
    int node = 0;
    int process = 0;  // failure processes first, then straggler processes
    std::uint64_t gen = 0;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.time != b.time ? a.time > b.time : a.seq > b.seq;
    }
  };

  struct InjectedEvent {
    const models::scenario::InjectedEventSpec* spec = nullptr;
    std::string source;
  };

  static std::vector<Event>& spare_queue();
  void push(double time, Kind kind, int node, int process, std::uint64_t gen);
  void draw_clock(int node, int process);
  void draw_clocks(int node);
  void advance(double to);
  void handle(const Event& e);
  void on_clock(const Event& e);
  void on_failure(int node, int process);
  void on_domain_failure(const Event& e);
  void on_injected(const InjectedEvent& e);
  // A failure of nodes [first, first + count): counted once, the running ones
  // interrupt the job; with `replace` they leave for repair until `until`.
  void take_down(int first, int count, models::scenario::Component component,
                 models::scenario::Domain domain, int id, bool replace, double until,
                 const std::string& source);
  void draw_domain_clock(std::size_t process, int domain);
  // A plane of the fabric fails until `until`: no node stops, every NIC loses
  // its port on it; with every plane down the job stops until one is back.
  void take_plane_down(int plane, models::scenario::Component component, double until,
                       const std::string& source);
  void on_plane_repaired(const Event& e);
  // A spine or an up port of tier `tier` fails until `until` (nothing where it
  // is out already); with a switch left without up ports the job stops.
  void take_port_down(models::scenario::Domain domain, int tier, long long unit,
                      models::scenario::Component component, double until,
                      const std::string& source);
  void on_port_repaired(const Event& e);
  // The step time of the fabric as it is now, on `nodes` nodes.
  [[nodiscard]] double fabric_step_s(int nodes);
  void start_straggler(int node, double slowdown, double end, int process,
                       const std::string& source);
  void on_straggler_onset(int node, int process);
  void on_phase_end();
  void interrupt(bool detect);
  void send_to_repair(int node, double until);
  void restart_or_wait();
  void start_checkpoint();
  void stage_checkpoint();
  void end_checkpoint();
  void begin_upload(double steps);
  void on_upload_done();
  void make_durable(double steps);
  [[nodiscard]] double upload_factor() const;
  [[nodiscard]] double slowest_factor() const;
  [[nodiscard]] double step_time_now();
  [[nodiscard]] int peer_of(int slot) const;
  [[nodiscard]] bool logging() const { return limits_.events != nullptr; }
  void emit(const CampaignEvent& e) const;
  [[nodiscard]] CampaignEvent event(EventKind kind) const;
  // An event with a step (and a duration), when logging.
  void emit_step(EventKind kind, double step, double duration_s = 0) const;

  const models::scenario::Scenario& s_;
  const ResolvedPolicy& policy_;
  StepTimeCache& steps_;
  CampaignLimits limits_;
  RandomStream random_;
  // The events to come, a heap by Later (earliest on top; time then sequence, a
  // total order: the same events pop in the same order however the heap was
  // built). Its storage is the thread's, kept from run to run (take_queue).
  std::vector<Event> queue_;
  bool bulk_ = false;  // run()'s first clocks: appended, made a heap once
  std::uint64_t seq_ = 0;

  std::vector<NodeState> nodes_;
  std::vector<std::uint64_t> node_gen_;
  std::vector<double> repair_until_;  // by node, while under repair
  // Domain failure processes: nodes per domain, and each domain's clock
  // generation (0 for node processes, which keep their clocks on the nodes).
  std::vector<int> span_;
  std::vector<long long> units_;  // by process: a spine or uplink process's switches or ports
  std::vector<std::vector<std::uint64_t>> domain_gen_;
  std::vector<InjectedEvent> injected_;
  bool shrunk_ = false;       // the last restart was on fewer nodes than the job
  std::vector<double> slow_;  // step time factor of each node, 1 when healthy
  // Planes of a multi-plane fabric: when each is back (0: in service).
  std::vector<double> plane_until_;
  std::vector<std::uint64_t> plane_gen_;
  int planes_down_ = 0;
  // Spines and up ports out, and the (domain, tier) of each kind failing.
  FabricPorts fabric_;
  std::vector<std::pair<models::scenario::Domain, int>> port_kinds_;
  std::vector<int> slow_nodes_;
  int running_nodes_ = 0;

  Phase phase_ = Phase::running;
  std::uint64_t phase_gen_ = 0;
  // Checkpoints: the upload in flight (one at a time), a staged one queued
  // behind it, a checkpoint blocked until it ends; in-memory copies to peers.
  std::uint64_t upload_gen_ = 0;
  bool upload_pending_ = false;
  double uploading_steps_ = 0;
  bool queued_ = false;
  double queued_steps_ = 0;
  bool blocked_ = false;
  bool staged_to_storage_ = true;
  int since_persistent_ = 0;  // in-memory checkpoints since the last one sent to storage
  std::uint64_t peer_gen_ = 0;
  double peer_steps_ = 0;        // the in-memory copy being sent to peers
  double memory_steps_ = 0;      // the last complete in-memory checkpoint
  std::vector<int> slot_;        // by node: its position in the job (-1: none)
  std::vector<int> holder_;      // by position: the node there (-1: empty)
  IndexSet spares_;              // nodes that are spare
  IndexSet empty_slots_;         // positions with no node (holder_ -1)
  std::vector<bool> lost_slot_;  // by position: host memory lost since the last copy
  bool memory_lost_ = false;     // this failure took both copies of a shard
  bool from_storage_ = false;    // the recovery under way loads from storage
  double now_ = 0;
  double healthy_step_s_ = 0;
  double target_steps_ = 0;
  double done_steps_ = 0;
  double durable_steps_ = 0;
  double staged_steps_ = 0;
  double since_checkpoint_s_ = 0;  // running time since the last checkpoint or restart
  RepairIncidents repairs_;        // the log's repairs by incident, while logging
  RunResult result_;
};

}  // namespace myriad::sim::campaign
