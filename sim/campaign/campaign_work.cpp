#include "sim/campaign/campaign_work.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "models/scenario/fabric_domains.hpp"

namespace myriad::sim::campaign {

double RunWork::events() const {
  double n = 0;
  for (const auto& s : shares) n += s.events;
  return n;
}

double RunWork::compute_s() const {
  double s = 0;
  for (const auto& share : shares) s += share.events * share.cost_s;
  return s;
}

const WorkShare& RunWork::largest() const {
  static const WorkShare none{"", 0, 0};
  if (shares.empty()) return none;
  return *std::max_element(shares.begin(), shares.end(),
                           [](const WorkShare& a, const WorkShare& b) {
                             return a.events * a.cost_s < b.events * b.cost_s;
                           });
}
RunWork run_work(const models::scenario::Scenario& s, const ResolvedPolicy& policy,
                 std::size_t index, int job_nodes, double duration_s) {
  RunWork w;
  w.duration_s = duration_s;
  const int nodes = job_nodes + policy.spec->hot_spares;
  constexpr double kDay = 86400;
  // Failure clocks: one per node (or domain) in service, each renewed after it fires.
  for (std::size_t i = 0; i < s.faults.processes.size(); ++i) {
    const auto& p = s.faults.processes[i];
    const int span = p.domain == models::scenario::Domain::node
                         ? 1
                         : std::max(1, models::scenario::domain_nodes(s, p.domain));
    const int domains = (nodes + span - 1) / span;  // the domains the nodes touch, rounded up
    // A plane process runs a clock a plane; a spine or uplink process one over
    // its units, at their rate together.
    const auto clocks =
        models::scenario::is_fabric_port(p.domain)
            ? static_cast<double>(models::scenario::fabric_units(s.cluster, p.domain, p.tier))
        : p.domain == models::scenario::Domain::plane
            ? static_cast<double>(models::scenario::domain_count(s, p.domain))
            : static_cast<double>(domains);
    const std::string rate = p.per_1000_domain_days > 0 ? "per_1000_domain_days"
                             : p.per_component_hour > 0 ? "per_component_hour"
                                                        : "per_1000_node_days";
    w.shares.push_back({fmt::format("faults.processes[{}].{}", i, rate),
                        p.rate_per_domain_s() * s.faults.rate_scale * clocks * duration_s,
                        kFailureEventCost_s});
  }
  // Stragglers: an onset and an end each.
  for (std::size_t i = 0; i < s.faults.stragglers.size(); ++i) {
    const auto& g = s.faults.stragglers[i];
    w.shares.push_back({fmt::format("faults.stragglers[{}].per_1000_node_days", i),
                        2 * g.per_1000_node_days / (1000 * kDay) * nodes * duration_s,
                        kStragglerEventCost_s});
  }
  // Checkpoints: one start each, while running (at most one per interval of compute).
  const auto& spec = *policy.spec;
  const std::string key =
      spec.checkpoint_rule == models::scenario::CheckpointRule::fixed
          ? fmt::format("policies[{}].checkpoint_interval", index)
          : fmt::format(
                "policies[{}].checkpoint_rule: {} (an interval of {:.3g} s, from the "
                "checkpoint's size and the storage bandwidths)",
                index,
                spec.checkpoint_rule == models::scenario::CheckpointRule::young ? "young" : "daly",
                policy.interval_s);
  w.shares.push_back({key,
                      policy.interval_s > 0 ? duration_s / policy.interval_s : duration_s * 1e9,
                      kCheckpointCost_s});
  w.shares.push_back({"faults.events and faults.replay",
                      static_cast<double>(s.faults.events.size() + s.faults.replayed.size()),
                      kFailureEventCost_s});
  return w;
}

void check_campaign_work(const std::vector<RunWork>& by_policy,
                         const std::vector<std::string>& policy_names, std::size_t seeds) {
  double total_s = 0;
  double events = 0;
  for (std::size_t p = 0; p < by_policy.size(); ++p) {
    const RunWork& w = by_policy[p];
    total_s += w.compute_s() * static_cast<double>(seeds);
    events += w.events() * static_cast<double>(seeds);
    if (!(w.compute_s() <= kMaxRunCompute_s)) {
      const WorkShare& top = w.largest();
      throw std::invalid_argument(fmt::format(
          "policy set '{}' would handle about {:.3g} events in each seed's run of {:.3g} days, "
          "about {:.3g} s of computing, past the bound of {:g} s a run; most come from {} "
          "({:.3g} events): lower the rate or raise the interval, or shorten the run (--days, "
          "--tokens)",
          policy_names[p], w.events(), w.duration_s / 86400, w.compute_s(), kMaxRunCompute_s,
          top.key, top.events));
    }
  }
  if (!(total_s <= kMaxCampaignCompute_s)) {
    throw std::invalid_argument(fmt::format(
        "the campaign would handle about {:.3g} events ({} seeds x {} policy sets), about {:.0f} "
        "s of computing on one core, past the bound of {:g} s: fewer seeds (--seeds) or a "
        "shorter run (--days, --tokens)",
        events, seeds, by_policy.size(), total_s, kMaxCampaignCompute_s));
  }
}

}  // namespace myriad::sim::campaign
