#include "sim/analytic/network_notes.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "models/plan/rank_layout.hpp"
#include "models/scenario/units.hpp"
#include "sim/analytic/activation_offload.hpp"
#include "sim/cost/comm_cost.hpp"
#include "sim/cost/network_slowdown.hpp"

namespace myriad::sim {
namespace {

using models::GroupKind;

// In-network reduction where the data-parallel communicators outnumber the
// switches' (or ports') streaming aggregation trees (sharp_tree_sharers).
void add_sharp_note(const models::scenario::Scenario& s, std::vector<std::string>& notes) {
  const auto& net = s.cluster.network;
  if (net.in_network_reduction != models::scenario::InNetworkReduction::sharp) return;
  const models::GroupSpan dp = models::group_span(GroupKind::dp, s);
  const int sharers = sharp_tree_sharers(dp, s.cluster);
  if (sharers <= 1) return;
  const bool per_switch = net.sharp_trees == models::scenario::SharpTrees::per_switch;
  notes.push_back(fmt::format(
      "SHARP: {} data-parallel communicators need a streaming aggregation tree on each {}, "
      "which runs one at a time (sharp_trees: {}); NCCL runs those left without one on the "
      "point-to-point network and the step waits for them: their reductions are priced "
      "without SHARP",
      sharers, per_switch ? "leaf switch" : "NIC port", per_switch ? "per_switch" : "per_port"));
}

// What the fabric's oversubscription and hashing do to the data-parallel and
// pipeline traffic, and the expert all-to-alls' pricing.
std::vector<std::string> fabric_notes(const models::scenario::Scenario& s, const Pricer& pricer) {
  std::vector<std::string> notes;
  // Each tier's oversubscription as its uplinks in service make it.
  double worst = 1;
  const auto& tiers = s.cluster.network.tiers;
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    worst = std::max(worst, tiers[i].oversubscription /
                                models::scenario::uplinks_in_service(s.cluster.network, i));
  }
  const bool hashed = s.cluster.network.load_balancing == models::scenario::LoadBalancing::ecmp;
  if ((worst <= 1 && !hashed) || s.cluster.nodes() <= 1) return notes;
  const bool gathers = s.parallelism.zero > 0;  // parameters gathered only with ZeRO
  for (const Traffic t : {Traffic::dp_gather, Traffic::dp_reduce, Traffic::pp}) {
    const int degree = t == Traffic::pp ? s.parallelism.pp : s.parallelism.dp;
    if (t == Traffic::dp_gather && !gathers) continue;
    const std::string note = describe(pricer.network(t), s, t);
    if (degree > 1 && !note.empty()) notes.push_back(note);
  }
  if (notes.empty() && hashed) {
    notes.push_back(
        "ECMP: the flows leaving each subtree are hashed onto its up ports, but no port's "
        "flows, however they fall, want more than it carries");
  } else if (notes.empty()) {
    notes.push_back(fmt::format(
        "oversubscription up to 1:{:.3g}: no tier's uplinks bind the data-parallel rings or "
        "pipeline transfers (too few of their flows leave a subtree at once)",
        worst));
  }
  if (s.model.is_moe() && s.parallelism.ep > 1 && models::group_span(GroupKind::ep, s).nodes > 1) {
    notes.push_back(
        "expert all-to-alls leaving the node: divided by the largest oversubscription below the "
        "tier that joins the group");
  }
  return notes;
}

// Activation offload's copies beside the network traffic that shares a PCIe host
// link with them (activation_offload.hpp): how much a layer's collectives send.
void add_offload_note(const models::scenario::Scenario& s, const models::StepPlan& plan,
                      std::vector<std::string>& notes) {
  const auto& p = s.parallelism;
  if (p.offload_layers <= 0 && p.offload_modules.empty()) return;
  const LayerNetworkBytes b = layer_network_bytes(plan.layer, s);
  if (b.forward <= 0 && b.backward <= 0) return;
  notes.push_back(
      fmt::format("activation offload: the copies share each GPU's host link with what a layer's "
                  "collectives send over its NIC, {} in forward and {} in backward a "
                  "micro-batch (cluster.gpu.host_link_carries_network)",
                  models::scenario::format_human(b.forward, models::scenario::Dimension::bytes),
                  models::scenario::format_human(b.backward, models::scenario::Dimension::bytes)));
}

}  // namespace

std::vector<std::string> network_notes(const models::scenario::Scenario& s,
                                       const models::StepPlan& plan, const Pricer& pricer) {
  std::vector<std::string> notes = fabric_notes(s, pricer);
  add_sharp_note(s, notes);
  add_offload_note(s, plan, notes);
  return notes;
}

}  // namespace myriad::sim
