#include "models/transformer/moe_routing.hpp"

#include <algorithm>
#include <cmath>

namespace myriad::models {

std::vector<double> expert_shares(const scenario::MoeSpec& moe) {
  const int experts = moe.active_experts();
  std::vector<double> shares(static_cast<std::size_t>(std::max(experts, 0)), 1.0);
  switch (moe.skew) {
    case scenario::RouterSkew::uniform:
      break;
    case scenario::RouterSkew::zipf:
      for (int e = 0; e < experts; ++e) shares[e] = std::pow(e + 1.0, -moe.zipf_exponent);
      break;
    case scenario::RouterSkew::histogram:
      if (moe.histogram.size() == shares.size()) shares = moe.histogram;
      break;
  }
  double sum = 0;
  for (const double s : shares) sum += s;
  for (double& s : shares) s = sum > 0 ? s / sum : 0;
  return shares;
}

MoeLoad moe_load(const scenario::MoeSpec& moe, int ep) {
  MoeLoad load;
  const std::vector<double> shares = expert_shares(moe);
  const auto experts = static_cast<int>(shares.size());
  if (experts == 0 || ep < 1) return load;
  const double k = moe.top_k;
  // Slots the group routes per token a rank routes: ep ranks, top_k each.
  const double group = ep * k;
  const double capacity = moe.capacity_factor > 0 ? moe.capacity_factor * group / experts : 0;
  const int local = std::max(1, experts / ep);
  double kept = 0;
  double total = 0;
  for (int r = 0; r < ep; ++r) {
    double rank = 0;
    for (int e = r * local; e < std::min(experts, (r + 1) * local); ++e) {
      const double routed = group * shares[e];
      if (capacity > 0) {
        kept += std::min(routed, capacity);
        rank += capacity;  // padded to capacity
      } else {
        kept += routed;
        rank += routed;
      }
    }
    load.busiest_slots = std::max(load.busiest_slots, rank);
    load.rank_slots.push_back(rank);
    total += rank;
  }
  load.mean_slots = total / ep;
  load.dropped = std::max(0.0, 1 - kept / group);
  return load;
}

}  // namespace myriad::models
