#include "models/scenario/network_checks.hpp"

#include <fmt/format.h>

#include <string>

#include "models/scenario/checker.hpp"
#include "models/scenario/units.hpp"

namespace myriad::models::scenario {

void check_network(const Checker& c) {
  const ClusterSpec& cl = c.s().cluster;
  if (cl.network.tiers.empty()) {
    c.error("cluster.network.tiers", "expected at least one tier of switches, found none");
    return;
  }
  // Rail-only, each rail is a network of its own: the tiers attach one NIC a node.
  const bool rail_only = cl.network.topology == Topology::rail_only;
  const double ports = static_cast<double>(cl.nodes()) * (rail_only ? 1 : cl.nics_per_node);
  const double capacity = network_endpoint_capacity(cl.network, nic_port_bw(cl));
  if (ports > capacity) {
    c.error("cluster.network.tiers",
            fmt::format("{}{}, but {} tier(s) of these switches attach at most {}: add a tier, "
                        "use switches of higher radix or less oversubscription{}",
                        rail_only
                            ? fmt::format("{} nodes = {} NIC ports on each rail", cl.nodes(), ports)
                            : fmt::format("{} nodes x {} NICs = {} NIC ports", cl.nodes(),
                                          cl.nics_per_node, ports),
                        cl.network.planes > 1 ? " on each plane" : "", cl.network.tiers.size(),
                        capacity, cl.network.planes > 1 ? "" : ", or split the NICs over planes"));
  }
  for (std::size_t i = 0; i < cl.network.tiers.size(); ++i) {
    const int down = cl.network.tiers[i].uplinks_down;
    if (down <= 0) continue;
    const std::string key = fmt::format("cluster.network.tiers[{}].uplinks_down", i);
    const double up = up_ports(cl.network, i);
    if (i + 1 == cl.network.tiers.size()) {
      c.error(key, "the top tier has no up ports: its ports all point down");
    } else if (down >= up) {
      c.error(key, fmt::format("{} of the {:.0f} up ports of each switch down cuts its subtree "
                               "off: expected fewer than {:.0f}",
                               down, up, up));
    }
  }
  if (cl.network.planes_down >= cl.network.planes) {
    c.error(
        "cluster.network.planes_down",
        fmt::format("{} of {} plane{} down leaves no path between nodes: expected fewer "
                    "than cluster.network.planes",
                    cl.network.planes_down, cl.network.planes, cl.network.planes == 1 ? "" : "s"));
  }
  if (cl.network.in_network_reduction == InNetworkReduction::sharp && !cl.network.rail_optimized &&
      cl.nics_per_node > 1) {
    // NVIDIA's NCCL-SHARP plugin guide: a switch holds at most 2 streaming
    // aggregation flows and NCCL opens one per NIC rail, so each leaf must see
    // one rail of every node.
    c.error("cluster.network.in_network_reduction",
            fmt::format("sharp needs rail_optimized: true: NCCL opens one aggregation flow per NIC "
                        "rail, a switch holds at most 2, and each leaf here sees all {} NICs of "
                        "a node",
                        cl.nics_per_node));
  }
  if (cl.network.sharp_trees != sharp_trees_for_nics(cl.nic_bw_Bps) &&
      cl.network.in_network_reduction != InNetworkReduction::sharp) {
    c.error("cluster.network.sharp_trees",
            "the switches' aggregation trees change nothing without in-network reduction: "
            "expected cluster.network.in_network_reduction: sharp, or no sharp_trees");
  }
  if (cl.network.topology == Topology::rail_only && !cl.network.rail_optimized) {
    // Rails are what a rail-only fabric is made of: NIC i of every node on rail i.
    c.error("cluster.network.topology",
            "rail_only needs rail_optimized: true: its tiers are each rail's own, so NIC i of "
            "every node must attach to rail i's leaves");
  }
  if (cl.network.topology == Topology::rail_only && !cl.network.pxn) {
    c.error("cluster.network.pxn",
            "a rail-only fabric carries no byte from one rail to another: a send to another rail "
            "must cross NVLink first (PXN); expected true, or topology: fat_tree");
  }
  if (cl.network.qps_per_connection != 1 && cl.network.load_balancing != LoadBalancing::ecmp) {
    c.error("cluster.network.qps_per_connection",
            fmt::format("{} queue pairs a connection change nothing unless flows are hashed: "
                        "expected cluster.network.load_balancing: ecmp, or 1",
                        cl.network.qps_per_connection));
  }
  if (cl.network.ecmp_hash != EcmpHash::per_switch &&
      cl.network.load_balancing != LoadBalancing::ecmp) {
    c.error("cluster.network.ecmp_hash",
            "how switches seed their hash changes nothing unless flows are hashed: expected "
            "cluster.network.load_balancing: ecmp, or per_switch");
  }
  const TierSpec& leaf = cl.network.tiers.front();
  if (leaf.port_bw_Bps < nic_port_bw(cl)) {
    c.warning("cluster.network.tiers[0].port_bandwidth",
              fmt::format("leaf ports ({}) are slower than the NICs' ports ({}): the NICs cannot "
                          "reach their rate",
                          format_human(leaf.port_bw_Bps, Dimension::bandwidth),
                          format_human(nic_port_bw(cl), Dimension::bandwidth)));
  }
}

}  // namespace myriad::models::scenario
