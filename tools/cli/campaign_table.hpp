// The rows of `myriad campaign`'s tables (the report and --vary's sensitivity
// table): each figure of a run, how it is written, and the paired differences
// that decide between policies.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/campaign/campaign_report.hpp"

namespace myriad::cli::campaign_table {

using Figure = std::function<double(const sim::campaign::RunResult&)>;

// How a figure is written: fixed decimals, or with a prefix (4.57 T), or as
// US dollars ($1.23 M).
enum class Style { fixed, si, dollars };

struct Row {
  std::string label;
  std::string key;  // in the JSON report
  Figure figure;
  int decimals = 0;
  Style style = Style::fixed;
  bool compact = false;  // in the default table (else only with --wide)
};

// 17.7 s, 45 min, 3.09 h, 33 d.
std::string duration(double s);
// Hours lost to cause c (sim::campaign::Cause) in a run.
double cause_h(const sim::campaign::RunResult& r, std::size_t c);
// Whether the scenario gave no policies: the one compared is the schema's defaults.
bool default_policy_only(const models::scenario::Scenario& s);
// Every figure of a run, in the table's order.
std::vector<Row> rows(const models::scenario::Scenario& s);
// The differences from the first policy that decide between policies: ETTR,
// days to the target (or tokens in fixed time), cost; goodput with --wide.
std::vector<Row> paired_rows(const models::scenario::Scenario& s,
                             const sim::campaign::CampaignReport& report);
// A mean and its 95 % half-width, written as the row says.
std::string shown(const sim::campaign::Interval& x, const Row& row);
// The same with a + on positive means (a difference).
std::string signed_shown(const sim::campaign::Interval& x, const Row& row);

}  // namespace myriad::cli::campaign_table
