#include "sim/topology/fat_tree_platform.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include <simgrid/kernel/resource/NetworkModelIntf.hpp>

#include "sim/cost/comm_cost.hpp"

namespace myriad::sim {
namespace {

namespace sg4 = simgrid::s4u;

constexpr double kNeverBinds = 1e18;  // B/s

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

FatTreePlatform::FatTreePlatform(const models::scenario::ClusterSpec& cluster, double node_Bps,
                                 int nodes_per_host, bool weighted)
    : cluster_(cluster),
      node_Bps_(node_Bps),
      nodes_per_host_(nodes_per_host),
      weighted_(weighted),
      latency_s_(hop_latency(cluster, cluster.nodes())),
      under_(subtree_nodes(cluster)) {
  if (cluster_.network.tiers.empty()) {
    throw std::invalid_argument("the step engine needs at least one tier of switches");
  }
  double oversubscription = 1;
  const std::vector<bool> bind = uplinks_bind(cluster_);
  for (std::size_t i = 0; i + 1 < under_.size(); ++i) {
    oversubscription *= std::max(1.0, cluster_.network.tiers[i].oversubscription) /
                        models::scenario::uplinks_in_service(cluster_.network, i);
    uplink_Bps_.push_back(under_[i] * node_Bps_ / oversubscription);
    built_.push_back(!weighted_ || bind[i]);
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

bool FatTreePlatform::built(int tier) const {
  return tier >= static_cast<int>(built_.size()) || built_[static_cast<std::size_t>(tier)];
}

FatTreePlatform::Zone& FatTreePlatform::zone_of(int tier, int node) {
  if (!built(tier)) return zone_of(tier + 1, node);
  const auto key = std::make_pair(tier, subtree(tier, node));
  if (auto it = zones_.find(key); it != zones_.end()) return it->second;
  Zone& parent = zone_of(tier + 1, node);
  const auto& spec = cluster_.network.tiers[static_cast<std::size_t>(tier)];
  const std::string name =
      fmt::format("{}-{}", spec.name.empty() ? fmt::format("tier{}", tier) : spec.name, key.second);
  Zone z;
  z.zone = sg4::create_star_zone(name);
  z.zone->set_parent(parent.zone);
  bool holds_zones = false;  // a built tier below
  for (int below = 0; below < tier; ++below) holds_zones = holds_zones || built(below);
  z.gateway = gateway_of(z.zone, name, holds_zones);
  const double bw = uplink_Bps_[static_cast<std::size_t>(tier)];
  sg4::SplitDuplexLink* link = parent.zone->create_split_duplex_link(name + ".up", bw);
  link->seal();  // no latency: see the header
  parent.zone->add_route(z.zone->get_netpoint(), nullptr, z.gateway, z.gateway, {upward(link)},
                         true);
  z.uplink = static_cast<int>(links_.size());
  links_.push_back({name + ".up", spec.name, link->get_link_up(), link->get_link_down(), bw});
  return zones_.emplace(key, z).first->second;
}

int FatTreePlatform::add_host(const std::string& name, int first_node, double bw_factor,
                              int weight) {
  sg4::NetZone* leaf = zone_of(0, first_node).zone;
  sg4::Host* host = leaf->create_host(name, 1e9)->seal();
  const double bw = node_Bps_ * nodes_per_host_ * bw_factor * weight;
  sg4::SplitDuplexLink* link = leaf->create_split_duplex_link(name + ".nic", bw);
  link->set_latency(weighted_ ? 0 : latency_s_ / 2)->seal();
  std::vector<sg4::LinkInRoute> up{upward(link)};
  if (weighted_) up.insert(up.begin(), upward(latency_link(leaf, name, weight, kNeverBinds)));
  leaf->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, up, true);
  hosts_.push_back({host, first_node, static_cast<int>(links_.size()), link, bw / weight});
  links_.push_back({name + ".nic", "nic", link->get_link_up(), link->get_link_down(), bw});
  return static_cast<int>(hosts_.size()) - 1;
}

int FatTreePlatform::add_port(const std::string& name, int host, int weight) {
  if (!weighted_) throw std::logic_error("FatTreePlatform: ports need a weighted platform");
  const PlacedHost of = hosts_.at(static_cast<std::size_t>(host));
  sg4::NetZone* leaf = zone_of(0, of.node).zone;
  sg4::Host* port = leaf->create_host(name, 1e9)->seal();
  leaf->add_route(
      port->get_netpoint(), nullptr, nullptr, nullptr,
      {upward(latency_link(leaf, name, weight, weight * of.member_Bps)), upward(of.nic)}, true);
  hosts_.push_back({port, of.node, of.link, of.nic, of.member_Bps});
  return static_cast<int>(hosts_.size()) - 1;
}

// Split-duplex, so that a route from a port to itself (a class's ring edges
// between its own members) crosses it twice. A port's flows carry `weight`
// members' traffic, each at most its NICs' rate: the link's bandwidth bounds
// them so (SimGrid 3.32 ignores a rate set on a host-to-host flow).
sg4::SplitDuplexLink* FatTreePlatform::latency_link(sg4::NetZone* zone, const std::string& name,
                                                    int weight, double bw_Bps) const {
  sg4::SplitDuplexLink* link = zone->create_split_duplex_link(name + ".latency", bw_Bps);
  link->set_latency(latency_s_ / 2 / weight)->seal();
  return link;
}

void FatTreePlatform::seal() {
  // Children before parents: the map holds lower tiers first, the root last
  // (a zone seals its children too, gateway zones included).
  for (auto& [key, z] : zones_) z.zone->seal();
  if (!weighted_) return;
  // Every flow's delay is the hop's, whatever shares its route's latency gave it.
  const double latency = latency_s_;
  zones_.at({static_cast<int>(under_.size()) - 1, 0L})
      .zone->get_network_model()
      ->set_lat_factor_cb([latency](double /*size*/, const sg4::Host* /*src*/,
                                    const sg4::Host* /*dst*/, const std::vector<sg4::Link*>& links,
                                    const std::unordered_set<sg4::NetZone*>& /*zones*/) {
        double route = 0;
        for (const sg4::Link* l : links) route += l->get_latency();
        return route > 0 ? latency / route : 1.0;
      });
}

std::vector<LinkCrossing> FatTreePlatform::route(int from, int to) const {
  const PlacedHost& a = hosts_[static_cast<std::size_t>(from)];
  const PlacedHost& b = hosts_[static_cast<std::size_t>(to)];
  std::vector<LinkCrossing> up{{a.link, true}};
  std::vector<LinkCrossing> down{{b.link, false}};
  for (int tier = 0; tier + 1 < static_cast<int>(under_.size()); ++tier) {
    if (subtree(tier, a.node) == subtree(tier, b.node)) break;
    if (!built(tier)) continue;
    up.push_back({zones_.at({tier, subtree(tier, a.node)}).uplink, true});
    down.push_back({zones_.at({tier, subtree(tier, b.node)}).uplink, false});
  }
  up.insert(up.end(), down.rbegin(), down.rend());
  return up;
}

}  // namespace myriad::sim
