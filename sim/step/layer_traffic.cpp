#include "sim/step/layer_traffic.hpp"

#include "sim/step/step_lowering.hpp"

namespace myriad::sim {

// Each kind's factory (its own file): the kind for this scenario, or none where it
// does not apply.
LayerTrafficPtr make_expert_nvlink(const StepLowering& p, const models::scenario::Scenario& s);
LayerTrafficPtr make_expert_flows(const StepLowering& p, const models::scenario::Scenario& s);
LayerTrafficPtr make_group_flows(const StepLowering& p, const models::scenario::Scenario& s);

std::vector<LayerTrafficPtr> layer_traffic(const StepLowering& p,
                                           const models::scenario::Scenario& s) {
  // The registry, in the order a collective's hops are played.
  using Factory = LayerTrafficPtr (*)(const StepLowering&, const models::scenario::Scenario&);
  static constexpr Factory kKinds[] = {
      make_expert_nvlink,  // an expert all-to-all's part inside the node, over NVLink
      make_expert_flows,   // its part between the nodes of its group, as flows
      make_group_flows,    // tp and cp collectives of rank groups spanning nodes
  };
  std::vector<LayerTrafficPtr> kinds;
  for (const Factory make : kKinds) {
    if (LayerTrafficPtr kind = make(p, s)) kinds.push_back(std::move(kind));
  }
  return kinds;
}

}  // namespace myriad::sim
