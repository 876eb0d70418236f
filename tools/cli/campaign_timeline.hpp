// The campaign report's failure timeline: when the logged seed's runs were
// interrupted, policy by policy, and what each interruption cost
// (sim/campaign/failure_timeline.hpp). The text report sums them over time
// bins; the HTML report (tools/report/report.js) draws each one.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/campaign/campaign_report.hpp"
#include "sim/campaign/failure_timeline.hpp"

namespace myriad::cli {

class CampaignTimelines {
 public:
  // `policies` by index, as the engine's sink numbers them; `seed` the one logged.
  CampaignTimelines(std::vector<std::string> policies, int seed);

  void add(std::size_t policy, const sim::campaign::CampaignEvent& e);
  // The runs are done: each logged run's open interruption lasts to its end.
  void end(const sim::campaign::CampaignReport& report);

  // A table: rows of time bins (at most ten, of a round width), a column a
  // policy, each cell the interruptions begun in the bin and the hours they
  // lost; then the totals, and a note where a timeline keeps only its first.
  [[nodiscard]] std::string text() const;
  // {seed, interruptions: [{policy, day, hours_lost, downtime_h, lost_work_h,
  // cause, domain, nodes}], notes}.
  [[nodiscard]] nlohmann::json html() const;

 private:
  [[nodiscard]] std::vector<std::string> notes() const;

  std::vector<std::string> names_;
  int seed_;
  std::vector<sim::campaign::FailureTimeline> timelines_;
  double end_s_ = 0;  // the longest logged run
};

}  // namespace myriad::cli
