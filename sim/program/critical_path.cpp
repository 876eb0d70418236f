#include "sim/program/critical_path.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <stdexcept>

namespace myriad::sim {
namespace {

constexpr std::array kActivities = {Activity::forward, Activity::backward, Activity::pp,
                                    Activity::wait,    Activity::dp,       Activity::optimizer};

// The last span of `spans` that starts before `t`; spans.size() when none does.
std::size_t span_before(const std::vector<Span>& spans, double t) {
  const double eps = 1e-12 * std::max(1.0, t);
  const auto it = std::lower_bound(spans.begin(), spans.end(), t - eps,
                                   [](const Span& s, double v) { return s.start_s < v; });
  if (it == spans.begin()) return spans.size();
  return static_cast<std::size_t>(it - spans.begin()) - 1;
}

}  // namespace

void require_finished(const std::vector<std::vector<Span>>& timelines, double step_s) {
  std::size_t unfinished = 0;
  for (const auto& t : timelines) {
    unfinished += t.empty() || t.back().activity != Activity::optimizer ? 1 : 0;
  }
  if (unfinished > 0 || !std::isfinite(step_s)) {
    throw std::runtime_error(fmt::format(
        "internal error: the step engine stopped at {} s with {} of {} rank groups unfinished "
        "(a deadlock or a non-finite time); no result is reported. Please report it with the "
        "scenario",
        step_s, unfinished, timelines.size()));
  }
}

const char* activity_name(Activity a) {
  switch (a) {
    case Activity::forward:
      return "forward";
    case Activity::backward:
      return "backward";
    case Activity::pp:
      return "pp";
    case Activity::wait:
      return "wait";
    case Activity::dp:
      return "dp";
    case Activity::optimizer:
      return "optimizer";
  }
  return "?";
}

CriticalPath critical_path(const std::vector<std::vector<Span>>& timelines, int pp) {
  CriticalPath path;
  std::array<double, kActivities.size()> by{};
  std::map<int, double> on_group;  // ordered: deterministic
  int g = -1;
  double t = 0;
  for (std::size_t i = 0; i < timelines.size(); ++i) {
    if (!timelines[i].empty() && timelines[i].back().end_s > t) {
      t = timelines[i].back().end_s;
      g = static_cast<int>(i);
    }
  }
  const auto add = [&](Activity a, double seconds) {
    by[static_cast<std::size_t>(a)] += seconds;
    on_group[g] += seconds;
  };
  const double eps = 1e-12 * std::max(1.0, t);
  while (g >= 0) {
    const auto& spans = timelines[static_cast<std::size_t>(g)];
    const std::size_t i = span_before(spans, t);
    if (i == spans.size()) break;
    const Span& s = spans[i];
    if (s.end_s < t) {  // a gap in the timeline: the group waited on nothing recorded
      add(Activity::wait, t - s.end_s);
      t = s.end_s;
    }
    if (s.activity == Activity::wait && s.from_group >= 0) {
      add(Activity::pp, t - std::max(s.sent_s, s.start_s));
      if (s.sent_s >= s.start_s && s.sent_s < t - eps) {
        t = s.sent_s;
        g = s.from_group;
        ++path.hops;
        continue;
      }
      t = s.start_s;
      continue;
    }
    add(s.activity, t - s.start_s);
    t = s.start_s;
  }
  for (const Activity a : kActivities) {
    path.by_activity.push_back({activity_name(a), by[static_cast<std::size_t>(a)]});
  }
  for (const auto& [group, seconds] : on_group) {
    path.groups.push_back({group % pp, group / pp, seconds});
  }
  std::stable_sort(path.groups.begin(), path.groups.end(),
                   [](const auto& a, const auto& b) { return a.seconds > b.seconds; });
  return path;
}

std::vector<BreakdownPart> timeline_breakdown(const std::vector<Span>& spans, double step_s,
                                              const PassShares& shares) {
  double passes = 0;
  double pp = 0;
  double dp = 0;
  double optimizer = 0;
  for (const Span& s : spans) {
    const double d = s.end_s - s.start_s;
    switch (s.activity) {
      case Activity::forward:
      case Activity::backward:
        passes += d;
        break;
      case Activity::pp:
        pp += d;
        break;
      case Activity::dp:
        dp += d;
        break;
      case Activity::optimizer:
        optimizer += d;
        break;
      case Activity::wait:
        break;
    }
  }
  const double busy = passes + pp + dp + optimizer;
  using models::GroupKind;
  const GroupTimes& comm = shares.comm;
  return {{"compute", passes * (1 - shares.total())},
          {"tp", passes * comm[GroupKind::tp]},
          {"cp", passes * comm[GroupKind::cp]},
          {"ep", passes * comm[GroupKind::ep]},
          {"pp", pp},
          {"bubble", std::max(0.0, step_s - busy)},
          {"dp", dp + passes * comm[GroupKind::dp]},
          {"offload", passes * shares.offload},
          {"host", passes * shares.host},
          {"optimizer", optimizer}};
}

PassShares pass_shares(const StageCosts& costs, const StageLayers& n, bool first, bool last) {
  const auto both = [](const PassTimes& t) { return t.forward + t.backward; };
  double total = n.layers * both(costs.layer) + n.dense * both(costs.dense_layer) +
                 n.again * both(costs.recompute_layer) +
                 n.dense_again * both(costs.recompute_dense_layer);
  ExposedComm comm;
  const auto add = [&](const ExposedComm& c, double k) { comm += c.scaled(k); };
  add(costs.layer_comm, n.layers);
  add(costs.dense_layer_comm, n.dense);
  add(costs.recompute_layer_comm, n.again);
  add(costs.recompute_dense_layer_comm, n.dense_again);
  double host = n.layers * costs.layer.host + n.dense * costs.dense_layer.host +
                n.again * costs.recompute_layer.host +
                n.dense_again * costs.recompute_dense_layer.host;
  // Fine-grained activation offload's waits, inside the layers' passes.
  double offload = n.layers * costs.layer.offload + n.dense * costs.dense_layer.offload;
  if (first) {
    total += costs.embedding.forward + costs.embedding.backward;
    add(costs.embedding_comm, 1);
    host += costs.embedding.host;
    offload += costs.offload.forward + costs.offload.backward;
    total += costs.offload.forward + costs.offload.backward;
  }
  if (last) {
    total += costs.head.forward + costs.head.backward;
    add(costs.head_comm, 1);
    host += costs.head.host;
  }
  if (total <= 0) return {};
  return {comm.scaled(1 / total), offload / total, host / total};
}

std::vector<BreakdownPart> step_breakdown(const std::vector<std::vector<Span>>& timelines, int pp,
                                          const std::vector<PassShares>& shares, double step_s) {
  std::size_t busiest = 0;
  double most = -1;
  for (std::size_t g = 0; g < timelines.size(); ++g) {
    double passes = 0;
    for (const Span& s : timelines[g]) {
      if (s.activity == Activity::forward || s.activity == Activity::backward) {
        passes += s.end_s - s.start_s;
      }
    }
    if (passes > most + 1e-12 * std::max(1.0, most)) {
      most = passes;
      busiest = g;
    }
  }
  if (timelines.empty()) return {};
  const auto stage = static_cast<std::size_t>(static_cast<int>(busiest) % pp);
  return timeline_breakdown(timelines[busiest], step_s, shares[stage]);
}

}  // namespace myriad::sim
