// One entry of a campaign's event log: what happened, when, to which nodes,
// and what it cost. The engine hands each to a sink as it happens (nothing is
// kept); `myriad campaign --events FILE` writes them as JSON Lines or CSV.
#pragma once

#include <array>
#include <functional>
#include <string>
#include <string_view>

namespace myriad::sim::campaign {

enum class EventKind {
  failure,             // a node or a domain failed (component, domain, id, nodes)
  straggler_onset,     // a node runs slow (slowdown, duration_s when known)
  straggler_end,       // it runs at full speed again
  eviction,            // a straggler evicted (policy: evict)
  repaired,            // a node is back, as a spare
  rollback,            // the job lost work back to a checkpoint (lost_work_s, step, detail)
  detected,            // detection and diagnosis ended
  waiting,             // no spare: the job waits for repairs (nodes: running of the job)
  restart,             // restart began (duration_s; nodes: how many; detail: shrink, grow)
  running,             // training again
  checkpoint_blocked,  // a checkpoint waits for the previous upload
  checkpoint_skipped,  // a checkpoint given up: the previous upload still runs
  checkpoint_started,  // the stage to host memory began (duration_s)
  checkpoint_staged,   // staged: training resumes (step)
  upload_started,      // to storage (duration_s, step)
  upload_done,         // durable in storage (step)
  peer_copy_done,      // in peers' memory (step)
  plane_repaired,      // a plane of the fabric is back (id; detail: planes still down)
  port_repaired,       // a spine or an up port is back (domain, id; detail: the worst switch)
};

inline constexpr std::array<std::string_view, 19> kEventNames = {"failure",
                                                                 "straggler_onset",
                                                                 "straggler_end",
                                                                 "eviction",
                                                                 "repaired",
                                                                 "rollback",
                                                                 "detected",
                                                                 "waiting",
                                                                 "restart",
                                                                 "running",
                                                                 "checkpoint_blocked",
                                                                 "checkpoint_skipped",
                                                                 "checkpoint_started",
                                                                 "checkpoint_staged",
                                                                 "upload_started",
                                                                 "upload_done",
                                                                 "peer_copy_done",
                                                                 "plane_repaired",
                                                                 "port_repaired"};

[[nodiscard]] inline std::string_view event_name(EventKind k) {
  return kEventNames[static_cast<std::size_t>(k)];
}

// How much of the log to keep (`campaign --events-level`). A checkpoint comes
// every interval whether anything fails or not: four to five lines (stage,
// staged, upload, done, peer copy) each time, which at a Young interval of tens
// of seconds are over 99 % of a month's log and say nothing the interval does
// not. `failures` keeps what departs from that routine: failures, evictions,
// stragglers, rollbacks, detection, waits, restarts and repairs; `all` every
// event.
enum class EventLevel { failures, all };

inline constexpr std::array<std::string_view, 2> kEventLevelNames = {"failures", "all"};

// Checkpoint and upload progress: the routine that `failures` leaves out. A
// blocked or skipped checkpoint is routine too: the policy's answer to an
// upload that outlasts the interval, which then comes at every checkpoint
// (the campaign warns of it once).
[[nodiscard]] constexpr bool routine(EventKind k) {
  switch (k) {
    case EventKind::checkpoint_blocked:
    case EventKind::checkpoint_skipped:
    case EventKind::checkpoint_started:
    case EventKind::checkpoint_staged:
    case EventKind::upload_started:
    case EventKind::upload_done:
    case EventKind::peer_copy_done:
      return true;
    case EventKind::failure:
    case EventKind::straggler_onset:
    case EventKind::straggler_end:
    case EventKind::eviction:
    case EventKind::repaired:
    case EventKind::rollback:
    case EventKind::detected:
    case EventKind::waiting:
    case EventKind::restart:
    case EventKind::running:
    case EventKind::plane_repaired:
    case EventKind::port_repaired:
      return false;
  }
  return false;
}

[[nodiscard]] constexpr bool logged_at(EventLevel level, EventKind k) {
  return level == EventLevel::all || !routine(k);
}

struct CampaignEvent {
  double time_s = 0;
  EventKind kind = EventKind::failure;
  std::string_view component;  // failures
  std::string_view domain;     // failures: node, leaf, pod, rack or plane
  int id = -1;                 // the node or domain index (-1: none)
  int first_node = -1;         // the nodes it concerns: first_node .. + node_count - 1
  int node_count = 0;
  bool interrupts = false;  // a failure or eviction that stopped the job
  double duration_s = 0;    // repair, restart, stage, upload, straggler episode
  double lost_work_s = 0;   // rollback: work lost, at the healthy pace
  double step = -1;         // checkpoints and rollbacks: the step (-1: none)
  double slowdown = 0;      // straggler onsets
  std::string detail;       // where an injected event came from; what a rollback loaded
};

using EventSink = std::function<void(const CampaignEvent&)>;

}  // namespace myriad::sim::campaign
