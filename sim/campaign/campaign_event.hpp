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
};

inline constexpr std::array<std::string_view, 17> kEventNames = {"failure",
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
                                                                 "peer_copy_done"};

[[nodiscard]] inline std::string_view event_name(EventKind k) {
  return kEventNames[static_cast<std::size_t>(k)];
}

struct CampaignEvent {
  double time_s = 0;
  EventKind kind = EventKind::failure;
  std::string_view component;  // failures
  std::string_view domain;     // failures: node, leaf, pod or rack
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
