#include "tools/cli/campaign_timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

using sim::campaign::Interruption;

constexpr double kHour = 3600;
constexpr double kDay = 86400;
constexpr std::size_t kMaxBins = 10;

// The narrowest round width that cuts [0, end_s] into at most kMaxBins bins.
double bin_width(double end_s) {
  static constexpr std::array<double, 16> kWidths = {
      1 * kHour, 2 * kHour, 3 * kHour, 6 * kHour, 12 * kHour, 1 * kDay,  2 * kDay,   5 * kDay,
      7 * kDay,  10 * kDay, 14 * kDay, 30 * kDay, 60 * kDay,  91 * kDay, 182 * kDay, 365 * kDay};
  for (const double w : kWidths) {
    if (std::ceil(end_s / w) <= static_cast<double>(kMaxBins)) return w;
  }
  return std::ceil(end_s / static_cast<double>(kMaxBins) / (365 * kDay)) * 365 * kDay;
}

std::string cell(long count, double lost_s) {
  return count == 0 ? std::string("0") : fmt::format("{}, {:.1f} h", count, lost_s / kHour);
}

std::string nodes_text(const Interruption& i) {
  if (i.node_count <= 1) return fmt::format("{}", i.first_node);
  return fmt::format("{}-{}", i.first_node, i.first_node + i.node_count - 1);
}

}  // namespace

CampaignTimelines::CampaignTimelines(std::vector<std::string> policies, int seed)
    : names_(std::move(policies)), seed_(seed), timelines_(names_.size()) {}

void CampaignTimelines::add(std::size_t policy, const sim::campaign::CampaignEvent& e) {
  timelines_.at(policy).add(e);
}

void CampaignTimelines::end(const sim::campaign::CampaignReport& report) {
  const auto seed = static_cast<std::size_t>(seed_);
  for (std::size_t p = 0; p < timelines_.size() && p < report.policies.size(); ++p) {
    const double wall_s = report.policies[p].runs.at(seed).wall_s;
    timelines_[p].end(wall_s);
    end_s_ = std::max(end_s_, wall_s);
  }
}

std::vector<std::string> CampaignTimelines::notes() const {
  std::vector<std::string> out;
  for (std::size_t p = 0; p < timelines_.size(); ++p) {
    const auto& t = timelines_[p];
    if (t.kept().size() < static_cast<std::size_t>(t.interruptions())) {
      out.push_back(fmt::format(
          "{}: the timeline holds the first {} of its {} interruptions (to day {:.1f}); the "
          "totals count all",
          names_[p], t.kept().size(), t.interruptions(), t.kept().back().start_s / kDay));
    }
  }
  return out;
}

std::string CampaignTimelines::text() const {
  const double width = bin_width(std::max(end_s_, kHour));
  const bool days = width >= kDay;
  const double unit = days ? kDay : kHour;
  const auto bins = static_cast<std::size_t>(std::max(1.0, std::ceil(end_s_ / width)));
  std::vector<std::string> headers = {days ? "days" : "hours"};
  std::string align = "l";
  for (const auto& name : names_) {
    headers.push_back(name);
    align += "r";
  }
  Table table(headers, align);
  for (std::size_t b = 0; b < bins; ++b) {
    std::vector<std::string> row = {fmt::format("{:g}-{:g}", static_cast<double>(b) * width / unit,
                                                static_cast<double>(b + 1) * width / unit)};
    for (const auto& t : timelines_) {
      long count = 0;
      double lost_s = 0;
      for (const auto& i : t.kept()) {
        if (std::min(bins - 1, static_cast<std::size_t>(i.start_s / width)) == b) {
          ++count;
          lost_s += i.lost_s();
        }
      }
      row.push_back(cell(count, lost_s));
    }
    table.add(row);
  }
  table.add_rule();
  std::vector<std::string> total = {"total"};
  for (const auto& t : timelines_) total.push_back(cell(t.interruptions(), t.lost_s()));
  table.add(total);
  std::string out = fmt::format(
      "\n  failure timeline of seed {} (--event-seed): interruptions, and the hours they lost "
      "(down until running again, and work rolled back)\n",
      seed_);
  out += table.str();
  for (const auto& note : notes()) out += "  " + note + "\n";
  return out;
}

nlohmann::json CampaignTimelines::html() const {
  nlohmann::json points = nlohmann::json::array();
  for (std::size_t p = 0; p < timelines_.size(); ++p) {
    for (const auto& i : timelines_[p].kept()) {
      points.push_back({{"policy", names_[p]},
                        {"day", i.start_s / kDay},
                        {"hours_lost", i.lost_s() / kHour},
                        {"downtime_h", i.downtime_s / kHour},
                        {"lost_work_h", i.lost_work_s / kHour},
                        {"cause", i.cause},
                        {"domain", i.domain},
                        {"nodes", nodes_text(i)}});
    }
  }
  nlohmann::json notes_json = nlohmann::json::array();
  for (const auto& note : notes()) notes_json.push_back(note);
  return {{"seed", seed_}, {"interruptions", points}, {"notes", notes_json}};
}

}  // namespace myriad::cli
