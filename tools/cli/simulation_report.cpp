#include "tools/cli/simulation_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>

#include "models/plan/rank_layout.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

constexpr std::size_t kTopLinks = 10;
constexpr std::size_t kTopGroups = 8;

// The global ranks of a rank group: groups are numbered replica-fastest, each
// holding tp x cp consecutive ranks (Megatron's order: tp, cp, dp, pp).
std::string ranks_of(const models::scenario::Scenario& s, int stage, int replica) {
  const int size = s.parallelism.tp * s.parallelism.cp;
  const int first = (stage * s.parallelism.dp + replica) * size;
  return fmt::format("{}-{}", first, first + size - 1);
}

std::string group_name(int stage, int replica) {
  return fmt::format("stage {} replica {}", stage, replica);
}

// The largest wait among the simulated replicas of each stage.
const sim::RankGroupTime& most_waiting(const sim::StepSimulation& r, int stage) {
  const sim::RankGroupTime* best = nullptr;
  for (const auto& g : r.groups) {
    if (g.stage == stage && (best == nullptr || g.wait_s > best->wait_s)) best = &g;
  }
  return *best;
}

std::string comparison_text(const sim::StepReport& analytic, const sim::StepSimulation& r,
                            double mfu, double tokens_per_s) {
  Table t({"", "simulated", "estimated"}, "lrr");
  t.add({"step time", seconds(r.step_time_s), seconds(analytic.step_time_s)});
  t.add({fmt::format("MFU ({} peak)", analytic.headline_peak()), percent(mfu),
         percent(analytic.headline_mfu())});
  t.add({"tokens/s", si_count(tokens_per_s), si_count(analytic.tokens_per_s)});
  const double gap = (r.step_time_s - analytic.step_time_s) / analytic.step_time_s;
  return t.str() + fmt::format("  simulated - estimated: {:+.2f} %\n\n", gap * 100);
}

std::string waiting_text(const sim::StepSimulation& r) {
  Table t({"stage", "waiting, replica 0", "most waiting replica", "its wait", "share of step"},
          "rrrrr");
  for (std::size_t stage = 0; stage < r.wait_s.size(); ++stage) {
    const auto& worst = most_waiting(r, static_cast<int>(stage));
    t.add({std::to_string(stage), seconds(r.wait_s[stage]), std::to_string(worst.replica),
           seconds(worst.wait_s), percent(worst.wait_s / r.step_time_s)});
  }
  return t.str() + "\n";
}

std::string critical_path_text(const models::scenario::Scenario& s, const sim::StepSimulation& r) {
  Table parts({"critical path", "time", "share"}, "lrr");
  for (const auto& part : r.critical_path.by_activity) {
    if (part.seconds > 0) {
      parts.add({part.name, seconds(part.seconds), percent(part.seconds / r.step_time_s)});
    }
  }
  Table groups({"rank group on it", "ranks", "time on path", "slowdown"}, "llrr");
  const auto& stops = r.critical_path.groups;
  for (std::size_t i = 0; i < std::min(stops.size(), kTopGroups); ++i) {
    const auto& g = stops[i];
    double slow = 1;
    for (const auto& group : r.groups) {
      if (group.stage == g.stage && group.replica == g.replica) slow = group.slowdown;
    }
    groups.add({group_name(g.stage, g.replica), ranks_of(s, g.stage, g.replica), seconds(g.seconds),
                fmt::format("{:.2f}", slow)});
  }
  return parts.str() +
         fmt::format("  the path moves between rank groups {} times across {} of them\n\n",
                     r.critical_path.hops, stops.size()) +
         groups.str() + "\n";
}

// The busiest links, and the busiest switch uplinks where those are all NICs: a
// network engineer looks for the oversubscribed tiers.
std::vector<const sim::LinkLoad*> busiest_links(const sim::StepSimulation& r, std::size_t n) {
  std::vector<const sim::LinkLoad*> out;
  for (std::size_t i = 0; i < std::min(r.links.size(), n); ++i) out.push_back(&r.links[i]);
  std::size_t uplinks = 0;
  for (const auto& l : r.links) {
    if (uplinks == n) break;
    if (l.tier == "nic") continue;
    if (std::find(out.begin(), out.end(), &l) == out.end()) out.push_back(&l);
    ++uplinks;
  }
  return out;
}

std::string links_text(const sim::StepSimulation& r) {
  Table t({"link (mean utilization over the step)", "tier", "direction", "bandwidth", "carried",
           "utilization"},
          "lllrrr");
  for (const sim::LinkLoad* l : busiest_links(r, kTopLinks)) {
    t.add({l->name, l->tier, l->up ? "up" : "down", fmt::format("{:.0f} GB/s", l->bw_Bps / 1e9),
           fmt::format("{:.1f} GB", l->bytes / 1e9), percent(l->utilization)});
  }
  return t.str() + "\n";
}

// Where a node's rank group sits (the first of its replicas, with rank groups
// smaller than a node: what the critical path names).
struct GroupOfNode {
  int stage = 0;
  int replica = 0;
  double on_path_s = 0;  // time the critical path spent on it
};

GroupOfNode group_of_node(const models::scenario::Scenario& s, const sim::StepSimulation& r,
                          int node) {
  const models::RankGroup at = models::group_on_node(s, node);
  GroupOfNode g{at.stage, at.replica / r.replicas_per_actor * r.replicas_per_actor, 0};
  for (const auto& stop : r.critical_path.groups) {
    if (stop.stage == g.stage && stop.replica == g.replica) g.on_path_s = stop.seconds;
  }
  return g;
}

const char* component_name(const sim::Straggler& g) {
  return g.component == models::scenario::Component::link ? "link" : "gpu";
}

std::string stragglers_text(const models::scenario::Scenario& s, const sim::StepSimulation& r) {
  if (r.stragglers.empty()) return "  stragglers: none this step\n";
  Table t({"straggling node", "slows", "by", "process", "rank group", "ranks", "on critical path"},
          "rlrlllr");
  for (const auto& g : r.stragglers) {
    const GroupOfNode at = group_of_node(s, r, g.node);
    t.add({std::to_string(g.node), component_name(g), fmt::format("{:.2f}", g.slowdown), g.process,
           group_name(at.stage, at.replica), ranks_of(s, at.stage, at.replica),
           seconds(at.on_path_s)});
  }
  return t.str() + fmt::format("  ({} of {} nodes slow, drawn from seed {})\n", r.stragglers.size(),
                               s.cluster.nodes(), s.seed);
}

}  // namespace

sim::StepReport simulated_step_report(const models::scenario::Scenario& s,
                                      const sim::StepReport& analytic,
                                      const sim::StepSimulation& simulated) {
  sim::StepReport r = analytic;
  r.step_time_s = simulated.step_time_s;
  r.set_rates(sim::step_rates(s, r.model_flops, r.hardware_flops, r.step_time_s));
  r.breakdown = simulated.breakdown;
  return r;
}

std::string simulation_text(const models::scenario::Scenario& s, const sim::StepReport& analytic,
                            const sim::StepSimulation& simulated) {
  const sim::StepReport played = simulated_step_report(s, analytic, simulated);
  return comparison_text(analytic, simulated, played.headline_mfu(), played.tokens_per_s) +
         waiting_text(simulated) + critical_path_text(s, simulated) + links_text(simulated) +
         stragglers_text(s, simulated);
}

nlohmann::json simulation_json(const models::scenario::Scenario& s, const sim::StepReport& analytic,
                               const sim::StepSimulation& r) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& g : r.groups) {
    groups.push_back({{"stage", g.stage},
                      {"replica", g.replica},
                      {"ranks", ranks_of(s, g.stage, g.replica)},
                      {"wait_s", g.wait_s},
                      {"finish_s", g.finish_s},
                      {"slowdown", g.slowdown}});
  }
  nlohmann::json path = nlohmann::json::object();
  for (const auto& part : r.critical_path.by_activity) path[part.name] = part.seconds;
  nlohmann::json on_path = nlohmann::json::array();
  for (const auto& g : r.critical_path.groups) {
    on_path.push_back({{"stage", g.stage},
                       {"replica", g.replica},
                       {"ranks", ranks_of(s, g.stage, g.replica)},
                       {"seconds", g.seconds}});
  }
  nlohmann::json links = nlohmann::json::array();
  for (const sim::LinkLoad* l : busiest_links(r, 2 * kTopLinks)) {
    links.push_back({{"name", l->name},
                     {"tier", l->tier},
                     {"direction", l->up ? "up" : "down"},
                     {"bandwidth_Bps", l->bw_Bps},
                     {"bytes", l->bytes},
                     {"utilization", l->utilization}});
  }
  nlohmann::json stragglers = nlohmann::json::array();
  for (const auto& g : r.stragglers) {
    const GroupOfNode at = group_of_node(s, r, g.node);
    stragglers.push_back({{"node", g.node},
                          {"component", component_name(g)},
                          {"slowdown", g.slowdown},
                          {"process", g.process},
                          {"stage", at.stage},
                          {"replica", at.replica},
                          {"ranks", ranks_of(s, at.stage, at.replica)},
                          {"critical_path_s", at.on_path_s}});
  }
  return {{"analytic_step_time_s", analytic.step_time_s},
          {"relative_difference", (r.step_time_s - analytic.step_time_s) / analytic.step_time_s},
          {"all_replicas", r.all_replicas},
          {"replicas_simulated", r.replicas},
          {"replica_classes", r.classes},
          {"class_sizes", r.class_sizes},
          {"replicas_per_actor", r.replicas_per_actor},
          {"hosts", r.hosts},
          {"actors", r.actors},
          {"flows", r.flows},
          {"wait_per_stage_s", r.wait_s},
          {"rank_groups", groups},
          {"critical_path",
           {{"by_activity", path}, {"rank_groups", on_path}, {"hops", r.critical_path.hops}}},
          {"links_by_utilization", links},
          {"stragglers", stragglers}};
}

nlohmann::json chrome_trace(const sim::StepSimulation& simulated) {
  nlohmann::json events = nlohmann::json::array();
  for (std::size_t stage = 0; stage < simulated.wait_s.size(); ++stage) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 0},
                      {"tid", stage},
                      {"args", {{"name", fmt::format("stage {} (replica 0)", stage)}}}});
  }
  for (const auto& e : simulated.events) {
    events.push_back({{"name", e.name},
                      {"cat", e.category},
                      {"ph", "X"},
                      {"pid", 0},
                      {"tid", e.stage},
                      {"ts", e.start_s * 1e6},
                      {"dur", e.duration_s * 1e6}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
}

}  // namespace myriad::cli
