#include "sim/cost/overlap_share.hpp"

#include <algorithm>

namespace myriad::sim {

double overlap_share(const models::Collective& c, const DeviceProfile& p) {
  if (c.group == models::GroupKind::tp && p.sms > 0) {
    if (c.kind == models::CollectiveKind::all_gather) {
      return std::min(1.0, kUserbuffersAllGatherSms / p.sms);
    }
    if (c.kind == models::CollectiveKind::reduce_scatter) {
      return std::min(1.0, kUserbuffersReduceScatterSms / p.sms);
    }
  }
  return p.overlap_compute_share();
}

}  // namespace myriad::sim
