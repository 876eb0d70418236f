#include "models/plan/rank_layout.hpp"

#include <algorithm>
#include <map>
#include <vector>

namespace myriad::models {
namespace {

// Distance between neighbouring ranks of each dimension.
struct Strides {
  long long tp = 1, cp = 1, dp = 1, pp = 1;
};

Strides strides(const scenario::Scenario& s) {
  const auto& p = s.parallelism;
  Strides st;
  st.cp = p.tp;
  const long long group = static_cast<long long>(p.tp) * p.cp;
  if (p.placement == scenario::RankOrder::tp_cp_pp_dp) {
    st.pp = group;
    st.dp = group * p.pp;
  } else {
    st.dp = group;
    st.pp = group * p.dp;
  }
  return st;
}

// The span of ranks member(0), ..., member(size - 1) on nodes of `gpn` GPUs.
// Members in increasing order (every group's are, in both placements) are
// counted node by node without allocating; others through a map.
template <typename Member>
GroupSpan span(int size, int gpn, Member member) {
  GroupSpan g;
  g.size = size;
  g.nodes = 0;
  g.per_node = 1;
  long long node = -1;
  int count = 0;
  bool increasing = true;
  long long last = -1;
  long long gap = 0;  // nodes between consecutive members, the farthest
  for (int i = 0; i < size && increasing; ++i) {
    const long long rank = member(i);
    increasing = rank > last;
    if (increasing && last >= 0) gap = std::max(gap, rank / gpn - last / gpn);
    last = rank;
    if (rank / gpn != node) {
      node = rank / gpn;
      ++g.nodes;
      count = 0;
    }
    g.per_node = std::max(g.per_node, ++count);
  }
  if (increasing) {
    g.reach = static_cast<int>(last / gpn - member(0) / gpn + 1);
    g.neighbour_reach = static_cast<int>(gap + 1);
    return g;
  }
  std::map<long long, int> per_node;
  for (int i = 0; i < size; ++i) ++per_node[member(i) / gpn];
  g.nodes = static_cast<int>(per_node.size());
  g.reach = static_cast<int>(per_node.rbegin()->first - per_node.begin()->first + 1);
  gap = 0;
  for (int i = 1; i < size; ++i) {
    const long long a = member(i - 1) / gpn;
    const long long b = member(i) / gpn;
    gap = std::max(gap, a > b ? a - b : b - a);
  }
  g.neighbour_reach = static_cast<int>(gap + 1);
  g.per_node = 1;
  for (const auto& [n, c] : per_node) g.per_node = std::max(g.per_node, c);
  return g;
}

// The span of ranks start, start + stride, ...: where the stride is whole nodes
// (data- and pipeline-parallel groups mostly are), one member a node, counted
// without a walk.
GroupSpan progression(int size, long long start, long long stride, int gpn) {
  if (stride <= 0 || stride % gpn != 0) {
    return span(size, gpn, [&](int i) { return start + i * stride; });
  }
  GroupSpan g;
  g.size = size;
  g.per_node = 1;
  g.nodes = size;
  g.reach = static_cast<int>(static_cast<long long>(size - 1) * (stride / gpn) + 1);
  g.neighbour_reach = size > 1 ? static_cast<int>(stride / gpn + 1) : 1;
  return g;
}

// The worse of two spans for a collective: more nodes, or as many with fewer
// members in the fullest (more of the group's traffic leaves its nodes).
bool worse(const GroupSpan& a, const GroupSpan& b) {
  return a.nodes != b.nodes ? a.nodes > b.nodes : a.per_node < b.per_node;
}

// Whether ranks member(0), ..., member(size - 1) sit at the same local ranks in
// every node they span (rank_layout.hpp, GroupSpan::rails_match).
template <typename Member>
bool rail_symmetric(int size, int gpn, Member member) {
  std::map<long long, std::vector<long long>> locals;
  for (int i = 0; i < size; ++i) {
    const long long rank = member(i);
    locals[rank / gpn].push_back(rank % gpn);
  }
  for (auto& [node, at] : locals) std::sort(at.begin(), at.end());
  const auto& first = locals.begin()->second;
  return std::all_of(locals.begin(), locals.end(),
                     [&](const auto& node) { return node.second == first; });
}

// Calls start(s) for the first rank of each group of a kind whose groups start
// at each of the first `inner` ranks of every block of `block` ranks, taken
// modulo the node (groups that start alike within their nodes span alike): at
// most gpus_per_node starts.
template <typename Start>
void for_each_start(long long block, long long inner, int gpn, Start start) {
  std::vector<char> seen(static_cast<std::size_t>(gpn), 0);
  long long first = 0;  // a block's first rank, modulo the node
  do {
    for (long long j = 0; j < std::min<long long>(inner, gpn); ++j) {
      const auto at = static_cast<std::size_t>((first + j) % gpn);
      if (seen[at]) continue;
      seen[at] = 1;
      start(static_cast<long long>(at));
    }
    first = (first + block) % gpn;
  } while (first != 0);
}

// The most spread of a kind's groups: `size` ranks `stride` apart, starting at
// each of the first `inner` ranks of every block of `block` ranks. A group whose
// size or stride does not divide a node straddles nodes where others do not (tp
// 6 on 8-GPU nodes: ranks 0-5 in one node, 6-11 over two); a collective waits
// for its slowest group, so the group priced is the most spread. Starts are taken
// modulo the node: at most gpus_per_node spans are computed.
GroupSpan most_spread(int size, long long stride, long long block, long long inner, int gpn) {
  const auto along = [&](long long start) { return progression(size, start, stride, gpn); };
  GroupSpan worst = along(0);
  for_each_start(block, inner, gpn, [&](long long start) {
    const GroupSpan g = along(start);
    if (worse(g, worst)) worst = g;
  });
  return worst;
}

// Whether every group of such a kind (as most_spread takes them) sits on the
// same rails in each node it spans: one that does not holds the collective up.
bool rails_match_all(int size, long long stride, long long block, long long inner, int gpn) {
  bool match = true;
  for_each_start(block, inner, gpn, [&](long long start) {
    match = match && rail_symmetric(size, gpn, [&](int i) { return start + i * stride; });
  });
  return match;
}

// Megatron-LM's expert groups: a stage's tp * cp * dp ranks in order (tp
// fastest, then cp, then dp) cut into etp ranks, ep of those, expert dp. The
// group holding rank 0, member by member.
auto expert_member(const scenario::ParallelSpec& p, const Strides& st) {
  const long long block = static_cast<long long>(p.tp) * p.cp;
  const long long etp = p.etp > 0 ? p.etp : p.tp;
  const long long dp_stride = st.dp;
  return [block, etp, dp_stride](int i) {
    const long long q = i * etp;
    return q % block + q / block * dp_stride;
  };
}

// How a kind's groups lie on the ranks, ep's aside: `size` ranks `stride`
// apart, starting at each of the first `inner` ranks of every block of `block`
// ranks (most_spread); data- and pipeline-parallel groups alike, the one
// holding rank 0 taken (`one`).
struct Strided {
  int size = 1;
  long long stride = 1;
  long long block = 1;
  long long inner = 1;
  bool one = false;
};

Strided strided(GroupKind group, const scenario::ParallelSpec& p, const Strides& st) {
  switch (group) {
    case GroupKind::tp:  // starting at every multiple of tp
      return {p.tp, st.tp, p.tp, 1, false};
    case GroupKind::cp:  // starting at each tp rank of every tp x cp block
      return {p.cp, st.cp, static_cast<long long>(p.tp) * p.cp, p.tp, false};
    case GroupKind::dp:
      return {p.dp, st.dp, 1, 1, true};
    case GroupKind::pp:
      return {p.pp, st.pp, 1, 1, true};
    case GroupKind::ep:
      break;
  }
  return {};
}

}  // namespace

GroupSpan group_span(GroupKind group, const scenario::Scenario& s) {
  const auto& p = s.parallelism;
  const int gpn = s.cluster.gpus_per_node;
  const Strides st = strides(s);
  const bool rails = s.cluster.network.topology == scenario::Topology::rail_only;
  GroupSpan g;
  if (group == GroupKind::ep) {
    g = span(p.ep, gpn, expert_member(p, st));
    if (rails && g.nodes > 1) g.rails_match = rail_symmetric(p.ep, gpn, expert_member(p, st));
    return g;
  }
  const Strided k = strided(group, p, st);
  g = k.one ? progression(k.size, 0, k.stride, gpn)
            : most_spread(k.size, k.stride, k.block, k.inner, gpn);
  if (rails && g.nodes > 1) {
    g.rails_match = k.stride % gpn == 0 ||
                    (k.one ? rail_symmetric(k.size, gpn, [&](int i) { return i * k.stride; })
                           : rails_match_all(k.size, k.stride, k.block, k.inner, gpn));
  }
  return g;
}

int first_node(const scenario::Scenario& s, RankGroup g) {
  const Strides st = strides(s);
  return static_cast<int>((g.stage * st.pp + g.replica * st.dp) / s.cluster.gpus_per_node);
}

RankGroup group_on_node(const scenario::Scenario& s, int node) {
  const auto& p = s.parallelism;
  const long long group = static_cast<long long>(node) * s.cluster.gpus_per_node /
                          (static_cast<long long>(p.tp) * p.cp);
  if (p.placement == scenario::RankOrder::tp_cp_pp_dp) {
    return {static_cast<int>(group % p.pp), static_cast<int>(group / p.pp)};
  }
  return {static_cast<int>(group / p.dp), static_cast<int>(group % p.dp)};
}

}  // namespace myriad::models
