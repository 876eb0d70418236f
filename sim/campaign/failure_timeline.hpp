// When a run was interrupted and what each interruption cost, read from its
// event log (campaign_event.hpp) as the engine streams it: the campaign
// report's failure timeline. An interruption (a failure or an eviction that
// stopped the job) is down from the failure until the job runs again, the next
// interruption or the run's end, whichever comes first (a failure during
// recovery starts recovery over, so its downtime is the next one's), and loses
// the work rolled back to the checkpoint it restarts from.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "sim/campaign/campaign_event.hpp"

namespace myriad::sim::campaign {

struct Interruption {
  double start_s = 0;
  double downtime_s = 0;   // detection, waiting for repairs, restart
  double lost_work_s = 0;  // rolled back, at the healthy pace
  std::string_view cause;  // the failed component, or "eviction"
  std::string_view domain;
  int first_node = -1;
  int node_count = 0;
  [[nodiscard]] double lost_s() const { return downtime_s + lost_work_s; }
};

class FailureTimeline {
 public:
  // The interruptions kept one by one: the first this many; the count and the
  // time lost cover all of them. Three months of a 100,000-GPU job at the
  // Llama 3 rates (12,500 nodes x 3.79 failures per 1000 node-days: 47 a day,
  // 4,300 in 91 days), and a bound when a what-if of failure rates gives far
  // more.
  static constexpr std::size_t kKept = 5000;

  // One run's events, in order.
  void add(const CampaignEvent& e);
  // The run ended at `wall_s`: an interruption still open lasts until then.
  void end(double wall_s);

  [[nodiscard]] const std::vector<Interruption>& kept() const { return kept_; }
  [[nodiscard]] long interruptions() const { return count_; }
  [[nodiscard]] double lost_s() const { return lost_s_; }

 private:
  void close(double at_s);

  std::vector<Interruption> kept_;
  Interruption current_;
  bool open_ = false;
  long count_ = 0;
  double lost_s_ = 0;
};

}  // namespace myriad::sim::campaign
