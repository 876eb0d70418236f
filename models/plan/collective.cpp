#include "models/plan/collective.hpp"

namespace myriad::models {

std::string_view collective_name(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce:
      return "all-reduce";
    case CollectiveKind::all_gather:
      return "all-gather";
    case CollectiveKind::reduce_scatter:
      return "reduce-scatter";
    case CollectiveKind::all_to_all:
      return "all-to-all";
    case CollectiveKind::send_recv:
      return "send/recv";
  }
  return "?";
}

std::string_view group_name(GroupKind g) {
  switch (g) {
    case GroupKind::tp:
      return "tp";
    case GroupKind::cp:
      return "cp";
    case GroupKind::ep:
      return "ep";
    case GroupKind::dp:
      return "dp";
    case GroupKind::pp:
      return "pp";
  }
  return "?";
}

}  // namespace myriad::models
