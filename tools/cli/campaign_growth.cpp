#include "tools/cli/campaign_growth.hpp"

#include <fmt/format.h>

#include <vector>

#include "tools/cli/report_table.hpp"

namespace myriad::cli {

using sim::campaign::CampaignReport;
using sim::campaign::Interval;
using sim::campaign::PolicyReport;

namespace {

// Each policy's days, seed by seed: the small model's training, then the grown
// model's; in all; without growth; and what growth saves (paired by seed).
struct GrowthDays {
  Interval small, grown, total, without, saved;
};

GrowthDays growth_days(const PolicyReport& small, const PolicyReport& grown,
                       const PolicyReport& without) {
  std::vector<double> a, b, total, c, saved;
  for (std::size_t i = 0; i < grown.runs.size(); ++i) {
    a.push_back(small.runs[i].wall_s / 86400);
    b.push_back(grown.runs[i].wall_s / 86400);
    total.push_back(a.back() + b.back());
    c.push_back(without.runs[i].wall_s / 86400);
    saved.push_back(c.back() - total.back());
  }
  using sim::campaign::summarize;
  return {summarize(a), summarize(b), summarize(total), summarize(c), summarize(saved)};
}

}  // namespace

std::string growth_text(const sim::GrowthPhase& g, const CampaignReport& small,
                        const CampaignReport& grown, const CampaignReport& without) {
  std::string out = fmt::format("growth (what-if): {}\n", sim::describe_growth(g));
  std::vector<std::string> headers = {"days, mean ± 95% interval"};
  std::string align = "l";
  for (const auto& p : grown.policies) {
    headers.push_back(p.name);
    align += "r";
  }
  Table t(headers, align);
  std::vector<GrowthDays> days;
  for (std::size_t i = 0; i < grown.policies.size(); ++i) {
    days.push_back(growth_days(small.policies[i], grown.policies[i], without.policies[i]));
  }
  const auto add = [&](const std::string& label, Interval GrowthDays::*field) {
    std::vector<std::string> row = {label};
    for (const auto& d : days) {
      const Interval x = d.*field;
      row.push_back(x.half_width == 0 ? fmt::format("{:.1f}", x.mean)
                                      : fmt::format("{:.1f} ± {:.1f}", x.mean, x.half_width));
    }
    t.add(row);
  };
  add(fmt::format("{}, {} tokens", g.from, si_count(small.target_tokens)), &GrowthDays::small);
  add(fmt::format("the model, {} tokens", si_count(grown.target_tokens)), &GrowthDays::grown);
  t.add_rule();
  add("in all, grown", &GrowthDays::total);
  add(fmt::format("without growth, {} tokens", si_count(without.target_tokens)),
      &GrowthDays::without);
  add("saved (paired by seed)", &GrowthDays::saved);
  return out + t.str();
}

nlohmann::json growth_json(const sim::GrowthPhase& g, const CampaignReport& small,
                           const CampaignReport& grown, const CampaignReport& without) {
  nlohmann::json policies = nlohmann::json::object();
  const auto interval = [](const Interval& x) {
    return nlohmann::json{{"mean", x.mean}, {"half_width", x.half_width}};
  };
  for (std::size_t i = 0; i < grown.policies.size(); ++i) {
    const GrowthDays d = growth_days(small.policies[i], grown.policies[i], without.policies[i]);
    policies[grown.policies[i].name] = {{"small_days", interval(d.small)},
                                        {"grown_days", interval(d.grown)},
                                        {"total_days", interval(d.total)},
                                        {"without_growth_days", interval(d.without)},
                                        {"saved_days", interval(d.saved)}};
  }
  return {{"from", g.from},
          {"small_tokens", small.target_tokens},
          {"grown_tokens", grown.target_tokens},
          {"without_growth_tokens", without.target_tokens},
          {"saved_fraction", g.saved_fraction},
          {"source", g.source},
          {"policies", policies}};
}

}  // namespace myriad::cli
