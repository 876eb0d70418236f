#include "tools/cli/campaign_table.hpp"

#include <fmt/format.h>

#include "models/scenario/units.hpp"
#include "sim/analytic/step_rates.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli::campaign_table {

using sim::campaign::CampaignReport;
using sim::campaign::Interval;
using sim::campaign::RunResult;

// 17.7 s, 45 min, 3.09 h, 33 d.
std::string duration(double s) {
  return models::scenario::format_human(s, models::scenario::Dimension::time);
}

double cause_h(const RunResult& r, std::size_t c) { return r.seconds_by_cause[c] / 3600; }

// Whether the scenario gave no policies: the one compared is the schema's defaults.
bool default_policy_only(const models::scenario::Scenario& s) {
  return s.origins.find("policies") == s.origins.end();  // not in the file, not by --set
}

std::vector<Row> rows(const models::scenario::Scenario& s) {
  const int gpus_per_node = s.cluster.gpus_per_node;
  const Figure gpu_hours = [gpus_per_node](const RunResult& r) {
    return r.gpu_hours(gpus_per_node);
  };
  std::vector<Row> out = {
      {"effective training time ratio", "ettr", [](const RunResult& r) { return r.ettr(); }, 4,
       Style::fixed, true},
      {"goodput (tokens/s)", "goodput_tokens_per_s", [](const RunResult& r) { return r.goodput(); },
       0, Style::si, true},
      {"tokens trained", "tokens", [](const RunResult& r) { return r.tokens; }, 0, Style::si, true},
      {"wall-clock days", "wall_days", [](const RunResult& r) { return r.wall_s / 86400; }, 2,
       Style::fixed, true},
      {"GPU-hours (job and spares)", "gpu_hours", gpu_hours, 0, Style::si, true},
      {"tokens per GPU-hour", "tokens_per_gpu_hour",
       [gpu_hours](const RunResult& r) {
         const double h = gpu_hours(r);
         return h > 0 ? r.tokens / h : 0;
       },
       0, Style::si, true},
  };
  if (const double usd = s.cluster.price_per_gpu_hour; usd > 0) {
    out.push_back(
        {"cost (US$)", "cost_usd",
         [gpu_hours, usd](const RunResult& r) { return sim::gpu_cost(usd, gpu_hours(r)); }, 0,
         Style::dollars, true});
    out.push_back({"tokens per US$", "tokens_per_usd",
                   [gpu_hours, usd](const RunResult& r) {
                     const double cost = sim::gpu_cost(usd, gpu_hours(r));
                     return cost > 0 ? r.tokens / cost : 0;
                   },
                   0, Style::si, true});
  }
  const std::vector<Row> more = {
      {"interruptions", "interruptions", [](const RunResult& r) { return r.interruptions; }, 1,
       Style::fixed, true},
      {"restarts", "restarts", [](const RunResult& r) { return r.restarts; }, 1},
      {"checkpoints", "checkpoints", [](const RunResult& r) { return r.checkpoints; }, 0, Style::si,
       true},
      {"checkpoints skipped (upload still running)", "checkpoints_skipped",
       [](const RunResult& r) { return r.checkpoints_skipped; }, 0, Style::si},
      {"uploads to storage", "uploads", [](const RunResult& r) { return r.uploads; }, 0, Style::si},
      {"storage written (TB)", "storage_written_TB",
       [](const RunResult& r) { return r.storage_bytes / 1e12; }, 1, Style::si, true},
      {"storage write, average (GB/s)", "storage_write_average_GBps",
       [](const RunResult& r) { return r.wall_s > 0 ? r.storage_bytes / r.wall_s / 1e9 : 0; }, 2,
       Style::fixed, true},
      {"restores from storage (both memory copies lost)", "restores_from_storage",
       [](const RunResult& r) { return r.restores_from_storage; }, 1},
      {"straggler evictions", "evictions", [](const RunResult& r) { return r.evictions; }, 1},
  };
  out.insert(out.end(), more.begin(), more.end());
  for (std::size_t c = 1; c < sim::campaign::kCauses; ++c) {
    out.push_back({fmt::format("hours lost: {}", sim::campaign::kCauseNames[c]),
                   fmt::format("lost_hours.{}", sim::campaign::kCauseNames[c]),
                   [c](const RunResult& r) { return cause_h(r, c); }, 1, Style::fixed, true});
  }
  for (std::size_t c = 0; c < sim::campaign::kComponents; ++c) {
    out.push_back({fmt::format("failures: {}", sim::campaign::kComponentNames[c]),
                   fmt::format("failures.{}", sim::campaign::kComponentNames[c]),
                   [c](const RunResult& r) { return r.failures_by_component[c]; }, 1});
  }
  return out;
}

// The differences from the first policy that decide between policies: ETTR,
// days to the target (or tokens in fixed time), cost; goodput with --wide.
std::vector<Row> paired_rows(const models::scenario::Scenario& s, const CampaignReport& report) {
  std::vector<Row> out;
  for (const auto& row : rows(s)) {
    const bool days = row.key == "wall_days" && report.target_tokens > 0;
    const bool tokens = row.key == "tokens" && report.target_tokens == 0;
    const bool cost = row.key == "cost_usd" && report.target_tokens > 0;  // else all equal
    if (row.key == "ettr" || days || tokens || cost || row.key == "goodput_tokens_per_s") {
      Row r = row;
      r.compact = row.key != "goodput_tokens_per_s";
      out.push_back(r);
    }
  }
  return out;
}

std::string shown(const Interval& x, const Row& row) {
  const auto one = [&row](double v) {
    switch (row.style) {
      case Style::si:
        return v < 0 ? "-" + si_count(-v) : si_count(v);
      case Style::dollars:
        return v < 0 ? "-$" + si_count(-v) : "$" + si_count(v);
      case Style::fixed:
        break;
    }
    return fmt::format("{:.{}f}", v, row.decimals);
  };
  if (x.half_width == 0) return one(x.mean);
  return one(x.mean) + " ± " + one(x.half_width);
}

std::string signed_shown(const Interval& x, const Row& row) {
  const std::string text = shown(x, row);
  return x.mean > 0 ? "+" + text : text;
}

}  // namespace myriad::cli::campaign_table
