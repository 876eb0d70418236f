// What one simulated campaign (one policy set, one seed) produced. Wall-clock
// time is split by cause; the causes add up to the wall clock:
//   wall = useful + detection + restart + repair_wait + lost_work + checkpoint
//          + stragglers + shrunk
// where useful and lost work are counted at the healthy step time, and a slow
// (straggling or shrunk) running second counts its excess over healthy pace.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace myriad::sim::campaign {

enum class Cause {
  useful,
  detection,
  restart,
  repair_wait,
  lost_work,
  checkpoint,
  stragglers,
  shrunk,
  fabric  // running slower on a degraded fabric (planes, spines or up ports out)
};
inline constexpr std::size_t kCauses = 9;
inline constexpr std::array<const char*, kCauses> kCauseNames = {
    "useful",     "detection",  "restart", "repair_wait", "lost_work",
    "checkpoint", "stragglers", "shrunk",  "fabric"};
inline constexpr std::size_t kComponents = 7;
inline constexpr std::array<const char*, kComponents> kComponentNames = {
    "gpu", "hbm", "nic", "switch", "link", "host", "software"};

struct RunResult {
  double wall_s = 0;
  double steps = 0;  // completed and kept
  double tokens = 0;
  bool reached_target = false;
  int nodes_in_service = 0;  // job and hot spares, for GPU-hours
  std::array<double, kCauses> seconds_by_cause{};
  std::array<int, kComponents> failures_by_component{};
  int interruptions = 0;  // failures and evictions that stopped the job or its recovery
  int restarts = 0;
  int checkpoints = 0;            // staged (in memory, or on their way to storage)
  int checkpoints_skipped = 0;    // due while an upload ran (upload_overlap: skip)
  int uploads = 0;                // checkpoints that reached storage
  double storage_bytes = 0;       // written to storage by those uploads
  int restores_from_storage = 0;  // in memory: failures that took both copies of a shard
  int straggler_onsets = 0;
  int evictions = 0;

  [[nodiscard]] double ettr() const { return wall_s > 0 ? seconds_by_cause[0] / wall_s : 0; }
  // Tokens over wall-clock time.
  [[nodiscard]] double goodput() const { return wall_s > 0 ? tokens / wall_s : 0; }
  // The GPU-hours the job and its hot spares held, on nodes of `gpus_per_node` GPUs
  // (their cost: sim::gpu_cost, sim/analytic/step_rates.hpp).
  [[nodiscard]] double gpu_hours(int gpus_per_node) const {
    return wall_s / 3600 * nodes_in_service * gpus_per_node;
  }
};

}  // namespace myriad::sim::campaign
