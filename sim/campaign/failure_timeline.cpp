#include "sim/campaign/failure_timeline.hpp"

#include <algorithm>

namespace myriad::sim::campaign {

void FailureTimeline::close(double at_s) {
  if (!open_) return;
  open_ = false;
  current_.downtime_s = std::max(0.0, at_s - current_.start_s);
  ++count_;
  lost_s_ += current_.lost_s();
  if (kept_.size() < kKept) kept_.push_back(current_);
}

void FailureTimeline::add(const CampaignEvent& e) {
  switch (e.kind) {
    case EventKind::failure:
    case EventKind::eviction:
      if (!e.interrupts) return;
      close(e.time_s);
      current_ = Interruption{};
      current_.start_s = e.time_s;
      current_.cause = e.kind == EventKind::eviction ? "eviction" : e.component;
      current_.domain = e.domain.empty() ? std::string_view("node") : e.domain;
      current_.first_node = e.first_node;
      current_.node_count = e.node_count;
      open_ = true;
      return;
    case EventKind::rollback:
      if (open_) current_.lost_work_s += e.lost_work_s;
      return;
    case EventKind::running:
      close(e.time_s);
      return;
    default:
      return;
  }
}

void FailureTimeline::end(double wall_s) { close(wall_s); }

}  // namespace myriad::sim::campaign
