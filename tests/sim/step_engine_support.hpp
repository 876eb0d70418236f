// Helpers of the step engine tests. SimGrid runs one engine per process, so
// each simulation runs in a child process and sends back what the test needs.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <exception>
#include <string>
#include <string_view>

#include "models/scenario/loader.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/step/step_engine.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim::testing {

#ifdef MYRIAD_SANITIZE
inline constexpr bool kSanitizerSafe = true;
#else
inline constexpr bool kSanitizerSafe = false;
#endif

inline StepOptions options(bool all_replicas = false) {
  StepOptions o;
  o.all_replicas = all_replicas;
  o.sanitizer_safe = kSanitizerSafe;
  return o;
}

// What a child sends back: plain numbers, so that a pipe carries them.
struct ChildResult {
  double step_time_s = -1;  // -1: the child failed
  double compute_s = 0;     // passes of the busiest rank group: compute and exposed tp, cp, ep
  double bubble_s = 0;      // the breakdown's pipeline bubble
  double dp_s = 0;          // and its exposed data-parallel communication
  int path_stage = -1;      // the rank group longest on the critical path
  int path_replica = -1;
  int layer_flow_slices = 0;        // trace slices of tp, cp and ep collectives played as flows
  double most_utilized_link = 0;    // its mean utilization over the step
  double most_utilized_uplink = 0;  // likewise among the switch uplinks
  double nic_bytes_up = 0;          // the bytes every rank group's NIC link sent
};

inline ChildResult run_in_child(const models::scenario::Scenario& s, const StepOptions& o,
                                const DeviceProfile& profile = a100()) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    ChildResult r;
    try {
      const StepSimulation sim = simulate_step(s, profile, o);
      r.step_time_s = sim.step_time_s;
      for (const auto& part : sim.breakdown) {
        if (part.name == "compute" || part.name == "tp" || part.name == "cp" || part.name == "ep")
          r.compute_s += part.seconds;
        if (part.name == "bubble") r.bubble_s = part.seconds;
        if (part.name == "dp") r.dp_s = part.seconds;
      }
      for (const auto& l : sim.links) {
        r.most_utilized_link = std::max(r.most_utilized_link, l.utilization);
        if (l.tier != "nic")
          r.most_utilized_uplink = std::max(r.most_utilized_uplink, l.utilization);
        if (l.tier == "nic" && l.up) r.nic_bytes_up += l.bytes;
      }
      for (const auto& e : sim.events) {
        if (e.category == "tp" || e.category == "cp" || e.category == "ep") ++r.layer_flow_slices;
      }
      if (!sim.critical_path.groups.empty()) {
        r.path_stage = sim.critical_path.groups.front().stage;
        r.path_replica = sim.critical_path.groups.front().replica;
      }
    } catch (const std::exception&) {
    }
    const auto written = write(fds[1], &r, sizeof r);
    _exit(written == sizeof r ? 0 : 1);
  }
  close(fds[1]);
  ChildResult r;
  const auto got = read(fds[0], &r, sizeof r);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return got == sizeof r ? r : ChildResult{};
}

// Bit for bit: the same scenario gives the same step, breakdown, critical path and
// link loads, and a run that fails proves nothing.
inline void expect_same_result(const ChildResult& a, const ChildResult& b) {
  ASSERT_GT(a.step_time_s, 0) << "the first run failed";
  ASSERT_GT(b.step_time_s, 0) << "the second run failed";
  EXPECT_EQ(a.step_time_s, b.step_time_s);
  EXPECT_EQ(a.compute_s, b.compute_s);
  EXPECT_EQ(a.bubble_s, b.bubble_s);
  EXPECT_EQ(a.dp_s, b.dp_s);
  EXPECT_EQ(a.path_stage, b.path_stage);
  EXPECT_EQ(a.path_replica, b.path_replica);
  EXPECT_EQ(a.layer_flow_slices, b.layer_flow_slices);
  EXPECT_EQ(a.most_utilized_link, b.most_utilized_link);
  EXPECT_EQ(a.most_utilized_uplink, b.most_utilized_uplink);
}

// The simulated step time, or -1 when the child failed.
inline double simulate_in_child(const models::scenario::Scenario& s, bool all_replicas = false,
                                const DeviceProfile& profile = a100()) {
  return run_in_child(s, options(all_replicas), profile).step_time_s;
}

// A what-if that slows the step: both engines price `slower` above `faster`, and
// the step engine agrees with the closed form within `tolerance` on each.
inline void expect_both_engines_slower(const models::scenario::Scenario& faster,
                                       const models::scenario::Scenario& slower,
                                       const DeviceProfile& profile, double tolerance = 0.02) {
  const double closed_fast = estimate(faster, profile, Detail::summary).step_time_s;
  const double closed_slow = estimate(slower, profile, Detail::summary).step_time_s;
  EXPECT_GT(closed_slow, closed_fast);
  const double engine_fast = run_in_child(faster, options(), profile).step_time_s;
  const double engine_slow = run_in_child(slower, options(), profile).step_time_s;
  EXPECT_GT(engine_slow, engine_fast);
  EXPECT_NEAR(engine_fast / closed_fast, 1, tolerance)
      << engine_fast << " s against " << closed_fast;
  EXPECT_NEAR(engine_slow / closed_slow, 1, tolerance)
      << engine_slow << " s against " << closed_slow;
}

// Whether one of the report's network notes contains `text`.
inline bool notes_say(const StepReport& r, std::string_view text) {
  return std::any_of(r.network_notes.begin(), r.network_notes.end(),
                     [text](const std::string& n) { return n.find(text) != std::string::npos; });
}

}  // namespace myriad::sim::testing
