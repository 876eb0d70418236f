#include "sim/topology/fat_tree_platform.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "sim/cost/comm_cost.hpp"

namespace myriad::sim {
namespace {

namespace sg4 = simgrid::s4u;

sg4::LinkInRoute upward(const sg4::SplitDuplexLink* link) {
  return {link, sg4::LinkInRoute::Direction::UP};
}

// The router through which a zone's traffic enters and leaves it. A zone that
// holds other zones gets its router inside a zone of its own: SimGrid's
// hierarchical routing looks a route up by the destination's index in the
// zone of their common ancestor, and a router sitting beside child zones in
// that ancestor is looked up by the index of the ancestor's own netpoint
// (measured on 3.32: the route to pod 1's router came out through the first
// leaf group of pod 1, without the hosts' links).
simgrid::kernel::routing::NetPoint* gateway_of(sg4::NetZone* zone, const std::string& name,
                                               bool holds_zones) {
  if (!holds_zones) return zone->create_router(name + ".gw");
  sg4::NetZone* own = sg4::create_star_zone(name + ".gw-zone");
  own->set_parent(zone);
  simgrid::kernel::routing::NetPoint* router = own->create_router(name + ".gw");
  zone->add_route(own->get_netpoint(), nullptr, router, router, {}, true);
  return router;
}

}  // namespace

FatTreePlatform::FatTreePlatform(const scenario::ClusterSpec& cluster, double node_Bps,
                                 int nodes_per_host)
    : cluster_(cluster),
      node_Bps_(node_Bps),
      nodes_per_host_(nodes_per_host),
      under_(subtree_nodes(cluster)) {
  if (cluster_.network.tiers.empty()) {
    throw std::invalid_argument("the step engine needs at least one tier of switches");
  }
  double oversubscription = 1;
  for (std::size_t i = 0; i + 1 < under_.size(); ++i) {
    oversubscription *= std::max(1.0, cluster_.network.tiers[i].oversubscription);
    uplink_Bps_.push_back(under_[i] * node_Bps_ / oversubscription);
  }
  // The top tier joins everything: one zone, created first so that it is the root.
  const int top = static_cast<int>(under_.size()) - 1;
  Zone root;
  root.zone = sg4::create_star_zone(
      cluster_.network.tiers.back().name.empty() ? "top" : cluster_.network.tiers.back().name);
  zones_.emplace(std::make_pair(top, 0L), root);
}

long FatTreePlatform::subtree(int tier, int node) const {
  if (tier + 1 >= static_cast<int>(under_.size())) return 0;
  return static_cast<long>(node / under_[static_cast<std::size_t>(tier)]);
}

FatTreePlatform::Zone& FatTreePlatform::zone_of(int tier, int node) {
  const auto key = std::make_pair(tier, subtree(tier, node));
  if (auto it = zones_.find(key); it != zones_.end()) return it->second;
  Zone& parent = zone_of(tier + 1, node);
  const auto& spec = cluster_.network.tiers[static_cast<std::size_t>(tier)];
  const std::string name =
      fmt::format("{}-{}", spec.name.empty() ? fmt::format("tier{}", tier) : spec.name, key.second);
  Zone z;
  z.zone = sg4::create_star_zone(name);
  z.zone->set_parent(parent.zone);
  z.gateway = gateway_of(z.zone, name, tier > 0);
  const double bw = uplink_Bps_[static_cast<std::size_t>(tier)];
  sg4::SplitDuplexLink* link = parent.zone->create_split_duplex_link(name + ".up", bw);
  link->seal();  // no latency: see the header
  parent.zone->add_route(z.zone->get_netpoint(), nullptr, z.gateway, z.gateway, {upward(link)},
                         true);
  z.uplink = static_cast<int>(links_.size());
  links_.push_back({name + ".up", spec.name, link->get_link_up(), link->get_link_down(), bw});
  return zones_.emplace(key, z).first->second;
}

int FatTreePlatform::add_host(const std::string& name, int first_node, double bw_factor) {
  sg4::NetZone* leaf = zone_of(0, first_node).zone;
  sg4::Host* host = leaf->create_host(name, 1e9)->seal();
  const double bw = node_Bps_ * nodes_per_host_ * bw_factor;
  sg4::SplitDuplexLink* link = leaf->create_split_duplex_link(name + ".nic", bw);
  link->set_latency(hop_latency(cluster_, cluster_.nodes()) / 2)->seal();
  leaf->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {upward(link)}, true);
  hosts_.push_back({host, first_node, static_cast<int>(links_.size())});
  links_.push_back({name + ".nic", "nic", link->get_link_up(), link->get_link_down(), bw});
  return static_cast<int>(hosts_.size()) - 1;
}

void FatTreePlatform::seal() {
  // Children before parents: the map holds lower tiers first, the root last
  // (a zone seals its children too, gateway zones included).
  for (auto& [key, z] : zones_) z.zone->seal();
}

std::vector<LinkCrossing> FatTreePlatform::route(int from, int to) const {
  const PlacedHost& a = hosts_[static_cast<std::size_t>(from)];
  const PlacedHost& b = hosts_[static_cast<std::size_t>(to)];
  std::vector<LinkCrossing> up{{a.link, true}};
  std::vector<LinkCrossing> down{{b.link, false}};
  for (int tier = 0; tier + 1 < static_cast<int>(under_.size()); ++tier) {
    if (subtree(tier, a.node) == subtree(tier, b.node)) break;
    up.push_back({zones_.at({tier, subtree(tier, a.node)}).uplink, true});
    down.push_back({zones_.at({tier, subtree(tier, b.node)}).uplink, false});
  }
  up.insert(up.end(), down.rbegin(), down.rend());
  return up;
}

}  // namespace myriad::sim
