#include "models/place/op_graph.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>
#include <random>
#include <sstream>
#include <stdexcept>

namespace myriad::models::place {
namespace {

std::string label(const OpGraph& g, int v) {
  const std::string& name = g.nodes[v].name;
  return name.empty() ? "#" + std::to_string(v) : "'" + name + "'";
}

[[noreturn]] void fail(const std::string& what) { throw std::invalid_argument("OpGraph: " + what); }

void check_cost(const OpGraph& g, int v, const char* field, double value) {
  if (std::isfinite(value) && value >= 0) return;
  std::ostringstream s;
  s << "op " << label(g, v) << " has " << field << " = " << value << "; it must be finite and >= 0";
  fail(s.str());
}

void check_edges(const OpGraph& g) {
  const int n = static_cast<int>(g.nodes.size());
  for (std::size_t e = 0; e < g.edges.size(); ++e) {
    const OpEdge& edge = g.edges[e];
    if (edge.from < 0 || edge.from >= n || edge.to < 0 || edge.to >= n) {
      fail("edge " + std::to_string(e) + " (" + std::to_string(edge.from) + " -> " +
           std::to_string(edge.to) + ") has an end outside the " + std::to_string(n) + " ops");
    }
    if (!std::isfinite(edge.bytes) || edge.bytes < 0) {
      std::ostringstream s;
      s << "edge " << e << " (" << label(g, edge.from) << " -> " << label(g, edge.to)
        << ") has bytes = " << edge.bytes << "; it must be finite and >= 0";
      fail(s.str());
    }
  }
}

// Kahn's algorithm; the result is short of some ops exactly when there is a cycle.
std::vector<int> kahn(const OpGraph& g, const Adjacency& adj) {
  const int n = static_cast<int>(g.nodes.size());
  std::vector<int> missing(n);
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int v = 0; v < n; ++v) {
    missing[v] = static_cast<int>(adj.in[v].size());
    if (missing[v] == 0) ready.push(v);
  }
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int v = ready.top();
    ready.pop();
    order.push_back(v);
    for (int e : adj.out[v]) {
      if (--missing[g.edges[e].to] == 0) ready.push(g.edges[e].to);
    }
  }
  return order;
}

// Every op Kahn left behind has a predecessor left behind too, so walking back
// from one of them must come round to an op already seen: that loop is a cycle.
std::string describe_cycle(const OpGraph& g, const Adjacency& adj, const std::vector<int>& order) {
  const int n = static_cast<int>(g.nodes.size());
  std::vector<bool> sorted(n, false);
  for (int v : order) sorted[v] = true;
  int v = 0;
  while (sorted[v]) ++v;
  std::vector<int> seen_at(n, -1);
  std::vector<int> walk;
  while (seen_at[v] < 0) {
    seen_at[v] = static_cast<int>(walk.size());
    walk.push_back(v);
    for (int e : adj.in[v]) {
      if (!sorted[g.edges[e].from]) {
        v = g.edges[e].from;
        break;
      }
    }
  }
  std::vector<int> cycle(walk.begin() + seen_at[v], walk.end());
  std::reverse(cycle.begin(), cycle.end());  // walked against the edges
  std::string text;
  for (int u : cycle) text += label(g, u) + " -> ";
  return text + label(g, cycle.front());
}

std::vector<int> checked_order(const OpGraph& g) {
  check_edges(g);
  const Adjacency adj = adjacency(g);
  std::vector<int> order = kahn(g, adj);
  if (order.size() != g.nodes.size()) fail("cycle " + describe_cycle(g, adj, order));
  return order;
}

// Uniform in [0, 1) from the top 53 bits: the same on every standard library.
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }
double between(std::mt19937_64& rng, double lo, double hi) { return lo + (hi - lo) * unit(rng); }

}  // namespace

void OpGraph::validate() const {
  for (int v = 0; v < static_cast<int>(nodes.size()); ++v) {
    check_cost(*this, v, "compute_s", nodes[v].compute_s);
    check_cost(*this, v, "memory_bytes", nodes[v].memory_bytes);
    check_cost(*this, v, "temp_bytes", nodes[v].temp_bytes);
    if (nodes[v].group < -1) {
      std::ostringstream s;
      s << "op " << label(*this, v) << " has group = " << nodes[v].group
        << "; it must be -1 (none) or a group id >= 0";
      throw std::invalid_argument(s.str());
    }
  }
  (void)checked_order(*this);
}

std::vector<int> OpGraph::topo_order() const { return checked_order(*this); }

int OpGraph::groups() const {
  int n = 0;
  for (const OpNode& node : nodes) n = std::max(n, node.group + 1);
  return n;
}

Adjacency adjacency(const OpGraph& g) {
  Adjacency adj;
  adj.in.resize(g.nodes.size());
  adj.out.resize(g.nodes.size());
  for (int e = 0; e < static_cast<int>(g.edges.size()); ++e) {
    adj.out[g.edges[e].from].push_back(e);
    adj.in[g.edges[e].to].push_back(e);
  }
  return adj;
}

OpGraph random_layered_graph(const LayeredGraphSpec& spec) {
  if (spec.nodes < 0 || spec.width < 1 || spec.max_parents < 1) {
    throw std::invalid_argument(
        "random_layered_graph: need nodes >= 0, width >= 1 and max_parents >= 1");
  }
  std::mt19937_64 rng(spec.seed);
  OpGraph g;
  g.nodes.reserve(spec.nodes);
  for (int v = 0; v < spec.nodes; ++v) {
    g.nodes.push_back({"op" + std::to_string(v), between(rng, 1e-4, 1e-3), between(rng, 1e6, 1e7),
                       between(rng, 0, 1e6)});
    const int layer_start = v - v % spec.width;
    if (layer_start == 0) continue;
    const int parents = 1 + static_cast<int>(rng() % spec.max_parents);
    std::vector<int> chosen;
    while (static_cast<int>(chosen.size()) < std::min(parents, spec.width)) {
      const int u = layer_start - spec.width + static_cast<int>(rng() % spec.width);
      if (std::find(chosen.begin(), chosen.end(), u) != chosen.end()) continue;
      chosen.push_back(u);
      g.edges.push_back({u, v, between(rng, 1e5, 1e7)});
    }
  }
  return g;
}

}  // namespace myriad::models::place
