// Collectives, in one vocabulary for every layer: which collective, by which
// algorithm, over which parallel group, how big; and nccl-tests' accounting of
// their bandwidth. The plan's collectives, the kernels' schedules, the cost
// models and calibration's rows all use these.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace myriad::models {

enum class CollectiveKind : std::uint8_t {
  all_reduce,
  all_gather,
  reduce_scatter,
  all_to_all,  // uniform and uneven (all-to-all-v) alike
  broadcast,
  send_recv,
};

enum class CollectiveAlgorithm : std::uint8_t {
  none,          // nothing moves: a group of one, or an empty message
  ring,          // NCCL's ring (`channels` rings over disjoint chunks)
  nvls,          // NVLink SHARP: the all-reduce done in the NVLink switch
  tree,          // NCCL's two complementary binary trees
  hierarchical,  // reduce-scatter inside nodes, across them, all-gather inside
  pairwise,      // all-to-all: at step k, rank r sends to r+k and receives from r-k
  two_hop,       // all-to-all: one copy a node over the network, NVLink inside it, overlapped
  chain,         // pipelined chain from the root
  p2p,           // one message, point to point
  sharp,         // in the scale-out switches: InfiniBand SHARP (NCCL's CollNet), NVLink inside
};

enum class GroupKind { tp, cp, ep, dp, pp };

// "all-reduce", for reports.
std::string_view collective_name(CollectiveKind k);
// "all_reduce", as rows, profiles and schedules write it.
std::string_view collective_key(CollectiveKind k);
std::optional<CollectiveKind> collective_from_key(std::string_view key);
// "ring", "nvls", "tree", ...
std::string_view algorithm_name(CollectiveAlgorithm a);
std::optional<CollectiveAlgorithm> algorithm_from_name(std::string_view name);
std::string_view group_name(GroupKind g);

// nccl-tests' bus bandwidth factor (its doc/PERFORMANCE.md): the bytes on the
// busiest link of a ring of n ranks over the collective's size, so that busbw =
// size / time * factor compares with the link rate whatever n: 2(n-1)/n for
// all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for a
// broadcast or a transfer. Throws std::invalid_argument for n < 1.
double busbw_factor(CollectiveKind k, double n);

// The steps of a ring over n ranks (each a send and a receive, each paying the
// link's latency once): 2(n-1) for all-reduce, n-1 for the others.
double ring_steps(CollectiveKind k, double n);

struct Collective {
  std::string_view name;  // "tp.ag.attn", "dp.rs.grads"
  CollectiveKind kind = CollectiveKind::all_reduce;
  GroupKind group = GroupKind::tp;
  double bytes = 0;  // the collective's message size as nccl-tests counts it (full buffer)
  // A two-hop all-to-all (node-limited routing, model.moe.max_nodes_per_token): a
  // token reaches at most `hop_nodes` nodes, crossing the network once to each, of
  // its `hop_copies` copies (top_k) that NVLink then forwards inside the node.
  // 0: every copy crosses on its own.
  double hop_nodes = 0;
  double hop_copies = 0;
  // Where a layer's collective is issued among its phase's ops: after this many
  // of them (Phase::issue); -1: not placed (the data-parallel ones).
  int after_ops = -1;
};

}  // namespace myriad::models
