// A collective a rank takes part in: which, over which parallel group, how big.
// Cost models turn it into time; the step engine into flows.
#pragma once

#include <string_view>

namespace myriad::models {

enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };
enum class GroupKind { tp, cp, ep, dp, pp };

std::string_view collective_name(CollectiveKind k);
std::string_view group_name(GroupKind g);

struct Collective {
  std::string_view name;  // "tp.ag.attn", "dp.rs.grads"
  CollectiveKind kind = CollectiveKind::all_reduce;
  GroupKind group = GroupKind::tp;
  double bytes = 0;  // the collective's message size as nccl-tests counts it (full buffer)
};

}  // namespace myriad::models
