// The cluster's network as the step engine builds it in SimGrid: the scenario's
// fat tree (folded Clos) with one aggregated switch group per subtree.
//
// A host stands for a rank group's nodes, their NICs aggregated into one
// split-duplex link (NICs x rate x efficiency, the profile's). Hosts sit in the
// star zone of their leaf group: the leaf switches that serve their nodes (on a
// rail-optimized network the eight rail leaves of the same nodes together; on a
// rack network one ToR). Leaf groups sit in the star zone of their tier-1
// subtree (pod), and so on up to the top tier, which joins everything. Each
// subtree below the top reaches its parent through one aggregated uplink
// carrying what its switches' up ports carry: its nodes' NIC bandwidth divided
// by the oversubscription of its tier and of every tier below it. With 1:1 at
// every tier no uplink can bind before the NICs do, so the fabric is
// non-blocking; with 1:7 above a pod the pod's traffic leaving it shares a
// seventh of its NIC bandwidth. ECMP is taken as perfect: the switches of a
// group act as one, and flows share the group's uplinks by max-min fairness.
// Subtree sizes are those of sim/cost (subtree_nodes), so both engines agree on
// which nodes a tier joins.
//
// Latency: every flow crosses the same latency, the network hop of the tier
// that joins the whole cluster (hop_latency in sim/cost/comm_cost.hpp), half
// on each host link; uplinks carry none. A flow inside a leaf is thus charged a
// few microseconds too many, on purpose: SimGrid's CM02 shares a link between
// flows in inverse proportion to their route latency (its sharing penalty is
// the latency: TCP's round-trip unfairness), while an RDMA fabric shares per
// flow. Equal latencies give equal shares, and keep the step time of a
// non-blocking fabric identical to the star this replaced.
//
// Weighted platforms (the step engine's classes of replicas): a host may stand
// for `weight` rank groups that live the same step, its NIC link theirs
// together, and its flows carry their traffic together. Such a flow must take
// `weight` shares of every link it crosses, so its route's latency, which is
// its sharing penalty, is 1/weight of the others': each host's latency sits on
// a link of its own (L / 2 / weight), and a latency factor restores every
// flow's delay to the hop's L. Flows of another weight from the same NICs (a
// class's ring edge to the next class, weight 1) leave from a port: a host of
// its own latency on the same NIC link. A weighted platform builds no zone for
// a tier whose uplinks cannot bind (uplinks_bind: 1:1 there and below): they
// change no rate, and a class may then span that tier's subtrees, its host in
// the zone of the lowest tier that binds (or the top's).
#pragma once

#include <simgrid/s4u.hpp>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "models/scenario/cluster_spec.hpp"

namespace myriad::sim {

// One split-duplex link of the platform, for utilization reports.
struct PlatformLink {
  std::string name;  // "group-3.nic", "leaf-2.up"
  std::string tier;  // "nic" for a host's link, else the tier whose subtree it leaves
  simgrid::s4u::Link* up = nullptr;    // towards the top tier
  simgrid::s4u::Link* down = nullptr;  // away from it
  double bw_Bps = 0;                   // per direction
};

// A link and the direction a flow crosses it in.
struct LinkCrossing {
  int link = 0;  // index into FatTreePlatform::links()
  bool up = true;
};

class FatTreePlatform {
 public:
  // node_Bps: one node's NICs together, at the profile's efficiency.
  FatTreePlatform(const models::scenario::ClusterSpec& cluster, double node_Bps, int nodes_per_host,
                  bool weighted = false);
  FatTreePlatform(const FatTreePlatform&) = delete;
  FatTreePlatform& operator=(const FatTreePlatform&) = delete;
  ~FatTreePlatform() = default;

  // A host for the rank group whose first node is `first_node`, its link at
  // `bw_factor` of its NICs' bandwidth (a degraded link); returns its index.
  // On a weighted platform the host stands for `weight` such rank groups.
  int add_host(const std::string& name, int first_node, double bw_factor = 1, int weight = 1);
  // Weighted platforms: a host on the NIC link of host `host` whose flows take
  // `weight` shares; returns its index.
  int add_port(const std::string& name, int host, int weight);
  // Seals every zone (on a weighted platform, sets the latency factor); no
  // host may be added after.
  void seal();

  [[nodiscard]] simgrid::s4u::Host* host(int index) const { return hosts_[index].host; }
  [[nodiscard]] const std::vector<PlatformLink>& links() const { return links_; }
  // The links a flow from host `from` to host `to` crosses, in order.
  [[nodiscard]] std::vector<LinkCrossing> route(int from, int to) const;

 private:
  struct Zone {
    simgrid::s4u::NetZone* zone = nullptr;
    simgrid::kernel::routing::NetPoint* gateway = nullptr;
    int uplink = -1;  // index into links_; none for the top tier's zone
  };
  struct PlacedHost {
    simgrid::s4u::Host* host = nullptr;
    int node = 0;
    int link = 0;  // its NIC link, index into links_
    simgrid::s4u::SplitDuplexLink* nic = nullptr;
    double member_Bps = 0;  // one of the rank groups it stands for: its NICs' rate
  };
  // Weighted platforms: a host's own latency link, for flows of `weight` shares.
  simgrid::s4u::SplitDuplexLink* latency_link(simgrid::s4u::NetZone* zone, const std::string& name,
                                              int weight, double bw_Bps) const;
  // The zone of tier `tier`'s subtree that holds `node`, created with its ancestors.
  Zone& zone_of(int tier, int node);
  [[nodiscard]] long subtree(int tier, int node) const;
  // Whether tier `tier` has zones (every tier on a plain platform; the top always).
  [[nodiscard]] bool built(int tier) const;

  models::scenario::ClusterSpec cluster_;
  double node_Bps_ = 0;
  int nodes_per_host_ = 1;
  bool weighted_ = false;
  double latency_s_ = 0;                        // every route's
  std::vector<double> under_;                   // per tier: nodes under one subtree
  std::vector<double> uplink_Bps_;              // per tier below the top: one subtree's uplink
  std::vector<bool> built_;                     // per tier below the top: has zones
  std::map<std::pair<int, long>, Zone> zones_;  // (tier, subtree) -> zone; top is (top, 0)
  std::vector<PlacedHost> hosts_;
  std::vector<PlatformLink> links_;
};

}  // namespace myriad::sim
