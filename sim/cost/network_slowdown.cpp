#include "sim/cost/network_slowdown.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "models/plan/placement.hpp"
#include "sim/cost/comm_cost.hpp"

namespace myriad::sim {

NetworkSlowdown network_slowdown(const scenario::Scenario& s, Traffic traffic) {
  NetworkSlowdown out;
  const auto& p = s.parallelism;
  const bool pipeline = traffic == Traffic::pp;
  const auto& tiers = s.cluster.network.tiers;
  const int gpn = s.cluster.gpus_per_node;
  const int group_gpus = p.tp * p.cp;
  // A rank group's share of a node's NICs (several groups a node, or several nodes a group).
  const double weight = static_cast<double>(group_gpus) / gpn;
  const std::vector<double> under = subtree_nodes(s.cluster);
  double uplinks = 1;  // a subtree's uplink bandwidth over its NICs', through the tiers below
  for (std::size_t tier = 0; tier + 1 < tiers.size(); ++tier) {
    uplinks /= tiers[tier].oversubscription;
    const double nodes = std::max(1.0, std::floor(under[tier]));
    // By subtree; for gradient reductions and pipeline transfers also by stage:
    // the stages reduce their gradients at different times (the last stage
    // first), and a stage's transfers go out a forward pass after the previous
    // stage's, so only one stage's send at once; every stage gathers its
    // parameters at the start of the step.
    std::map<std::pair<long long, int>, double> leaving;
    for (int stage = 0; stage < p.pp; ++stage) {
      for (int replica = 0; replica < p.dp; ++replica) {
        models::RankGroup to{stage, (replica + 1) % p.dp};
        if (pipeline) {
          if (stage + 1 == p.pp) continue;
          to = {stage + 1, replica};
        }
        const auto from_tree =
            static_cast<long long>(models::first_node(s, {stage, replica}) / nodes);
        const auto to_tree = static_cast<long long>(models::first_node(s, to) / nodes);
        const int when = traffic == Traffic::dp_gather ? 0 : stage;
        if (from_tree != to_tree) leaving[{from_tree, when}] += weight;
      }
    }
    for (const auto& [tree, bandwidth] : leaving) {
      const double share = std::min(1.0, bandwidth / nodes);
      const double factor = share / uplinks;
      if (factor > out.factor) out = {factor, static_cast<int>(tier), share, uplinks};
    }
  }
  return out;
}

bool oversubscribed_below_join(const scenario::ClusterSpec& c) {
  const int top = joining_tier(c, c.nodes());
  for (int i = 0; i < top && i < static_cast<int>(c.network.tiers.size()); ++i) {
    if (c.network.tiers[static_cast<std::size_t>(i)].oversubscription > 1) return true;
  }
  return false;
}

std::string describe(const NetworkSlowdown& n, const scenario::Scenario& s, Traffic traffic) {
  if (n.tier < 0) return "";
  const auto& tier = s.cluster.network.tiers[static_cast<std::size_t>(n.tier)];
  return fmt::format(
      "{}: {:.0f} % of a {} subtree's NIC bandwidth leaves it at once, through uplinks of "
      "1/{:.3g} of it: {:.2f}x slower than the NICs",
      traffic == Traffic::pp          ? "pipeline transfers"
      : traffic == Traffic::dp_gather ? "data-parallel parameter gathers"
                                      : "data-parallel gradient reductions",
      100 * n.leaving, tier.name.empty() ? fmt::format("tier-{}", n.tier) : tier.name,
      1 / n.uplinks, n.factor);
}

}  // namespace myriad::sim
