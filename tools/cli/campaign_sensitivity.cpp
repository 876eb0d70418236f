// `myriad campaign --vary KEY=VALUES`: the campaign once per value, the figures
// that decide against the value.
#include "tools/cli/campaign_sensitivity.hpp"

#include <fmt/format.h>

#include <cctype>
#include <ostream>
#include <stdexcept>

#include "models/scenario/loader.hpp"
#include "sim/planning/sweep.hpp"
#include "tools/cli/campaign_table.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

using sim::campaign::CampaignReport;
using sim::campaign::Interval;
using namespace campaign_table;  // NOLINT(google-build-using-namespace): this verb's rows

// `--vary KEY=VALUES`: the campaign once per value, the figures that decide
// against the value. `policies.KEY` (no index) sets KEY in every policy set.
std::vector<std::string> axis_overrides(const std::string& key, const std::string& value,
                                        const models::scenario::Scenario& base) {
  const std::string prefix = "policies.";
  const std::size_t policies = base.policies.size();
  if (key.rfind(prefix, 0) == 0 && key.size() > prefix.size() &&
      std::isdigit(static_cast<unsigned char>(key[prefix.size()])) == 0) {
    if (default_policy_only(base)) {  // no list to index: the default policy, with the key
      return {
          fmt::format("policies=[{{name: default, {}: {}}}]", key.substr(prefix.size()), value)};
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < policies; ++i) {
      out.push_back(fmt::format("policies.{}.{}={}", i, key.substr(prefix.size()), value));
    }
    return out;
  }
  return {key + "=" + value};
}

struct SensitivityPoint {
  std::string value;
  models::scenario::Scenario scenario;
  CampaignReport report;
};

// The figures a sensitivity table shows: ETTR, days (to a target) or tokens
// (in fixed days), and when priced the cost (to a target) or tokens per dollar.
std::vector<Row> sensitivity_rows(const models::scenario::Scenario& s,
                                  const CampaignReport& report) {
  std::vector<Row> out;
  for (const auto& row : rows(s)) {
    if (row.key == "ettr" || (row.key == "wall_days" && report.target_tokens > 0) ||
        (row.key == "tokens" && report.target_tokens == 0) ||
        (row.key == "cost_usd" && report.target_tokens > 0) ||
        (row.key == "tokens_per_usd" && report.target_tokens == 0)) {
      out.push_back(row);
    }
  }
  return out;
}

std::string sensitivity_text(const std::string& key, const std::vector<SensitivityPoint>& points,
                             int seeds) {
  const auto& first = points.front();
  std::string out =
      fmt::format("{}\n", first.scenario.name.empty() ? first.scenario.file : first.scenario.name);
  out += fmt::format("  {} over {} values; {} seeds each, mean ± 95% confidence interval\n", key,
                     points.size(), seeds);
  for (const auto& row : sensitivity_rows(first.scenario, first.report)) {
    std::vector<std::string> headers = {key};
    std::string align = "l";
    for (const auto& p : first.report.policies) {
      headers.push_back(p.name);
      align += "r";
    }
    Table t(headers, align);
    for (const auto& point : points) {
      std::vector<std::string> cells = {point.value};
      for (const auto& p : point.report.policies)
        cells.push_back(shown(p.over_seeds(row.figure), row));
      t.add(cells);
    }
    out += fmt::format("\n  {}\n", row.label);
    out += t.str();
  }
  return out;
}

nlohmann::json sensitivity_json(const std::string& key,
                                const std::vector<SensitivityPoint>& points) {
  nlohmann::json out = {{"vary", key}, {"points", nlohmann::json::array()}};
  for (const auto& point : points) {
    out["points"].push_back(
        {{"value", point.value}, {"campaign", campaign_json(point.scenario, point.report)}});
  }
  return out;
}

// The sensitivity report's data (tools/report/report.js, kind "sensitivity").
nlohmann::json sensitivity_html(const std::string& key, const std::vector<SensitivityPoint>& points,
                                const std::string& name, int seeds) {
  nlohmann::json values = nlohmann::json::array();
  const auto& first = points.front();
  const auto figures = sensitivity_rows(first.scenario, first.report);
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (const auto& p : points[i].report.policies) {
      nlohmann::json v = {{"value", points[i].value}, {"order", i}, {"policy", p.name}};
      for (const auto& row : figures) {
        const Interval x = p.over_seeds(row.figure);
        v[row.key] = {{"mean", x.mean}, {"low", x.low()}, {"high", x.high()}};
      }
      values.push_back(v);
    }
  }
  nlohmann::json titles = nlohmann::json::object();
  for (const auto& row : figures) titles[row.key] = row.label;
  nlohmann::json notes = nlohmann::json::array();
  for (const auto& point : points) {
    for (const auto& w : sim::campaign::campaign_warnings(point.report)) {
      notes.push_back(fmt::format("{}={}: {}", key, point.value, w));
    }
  }
  return {{"kind", "sensitivity"},
          {"title", fmt::format("myriad campaign {} --vary {}", name, key)},
          {"subtitle",
           fmt::format("{} against {}; {} seeds per value, mean and 95 % interval",
                       first.scenario.name.empty() ? name : first.scenario.name, key, seeds)},
          {"key", key},
          {"figures", titles},
          {"values", values},
          {"notes", notes}};
}

// The one key --vary varies, and its values; nothing, said, where --vary does
// not go with the rest.
std::optional<sim::SweepAxis> sensitivity_axis(const CampaignCliOptions& o,
                                               const models::scenario::Scenario& base,
                                               const sim::campaign::CampaignOptions& options,
                                               Streams io) {
  try {
    if (o.vary.size() > 1) {
      throw std::invalid_argument(
          fmt::format("--vary: {} axes; a campaign varies one key at a time (sweep spans several)",
                      o.vary.size()));
    }
    if (!o.events_file.empty()) {
      throw std::invalid_argument("--events logs one campaign; it does not go with --vary");
    }
    if (base.training.growth.given() && options.days == 0) {
      throw std::invalid_argument(
          "--vary does not go with training.growth; run the campaign for each value instead");
    }
    return sim::parse_axis(o.vary.front());
  } catch (const std::invalid_argument& e) {
    io.err << fmt::format("myriad campaign: error: {}\n", e.what());
    return std::nullopt;
  }
}

}  // namespace

int run_sensitivity(const CampaignCliOptions& o, Streams io, const Environment& env,
                    const models::scenario::Scenario& base, const std::string& text,
                    const sim::campaign::CampaignOptions& options) {
  const auto found = sensitivity_axis(o, base, options, io);
  if (!found) return kExitBadInput;
  const sim::SweepAxis& axis = *found;
  // Every value loaded and checked (its scenario, profile and work) before any
  // campaign runs, so that a bad last value cannot discard the finished ones.
  std::vector<SensitivityPoint> points;
  std::vector<sim::DeviceProfile> profiles;
  for (const std::string& value : axis.values) {
    ScenarioOptions varied = o.scenario;
    for (auto& x : axis_overrides(axis.key, value, base)) {
      varied.overrides.push_back(std::move(x));
    }
    SensitivityPoint point;
    point.value = value;
    try {
      point.scenario = models::scenario::load_scenario_text(
          text, scenario_name(o.scenario), {preset_path(varied, env), varied.overrides});
    } catch (const models::scenario::ScenarioError& e) {
      io.err << fmt::format("myriad campaign: --vary {}={}: ", axis.key, value) << e.what();
      return kExitBadInput;
    }
    auto profile = profile_for(point.scenario, o.profile, io, env);
    if (!profile) return kExitBadInput;
    try {
      sim::campaign::check_campaign(point.scenario, *profile, options);
    } catch (const std::invalid_argument& e) {
      io.err << fmt::format("myriad campaign: error: --vary {}={}: {}\n", axis.key, value,
                            e.what());
      return kExitBadInput;
    }
    points.push_back(std::move(point));
    profiles.push_back(std::move(*profile));
  }
  for (std::size_t i = 0; i < points.size(); ++i) {
    io.err << fmt::format("campaign: {}={} ({} of {})\n", axis.key, points[i].value, i + 1,
                          points.size());
    ProgressLine line(io, env, "campaign");
    sim::campaign::CampaignOptions own = options;
    own.progress = [&line](std::size_t done, std::size_t total) {
      line.update(done, total, "runs");
    };
    points[i].report = sim::campaign::run_campaign(points[i].scenario, profiles[i], own);
  }
  if (!o.json_file.empty() &&
      !write_json(o.json_file, sensitivity_json(axis.key, points), "campaign", io)) {
    return kExitFailure;
  }
  if (!o.report_file.empty() &&
      !write_html_report(o.report_file,
                         sensitivity_html(axis.key, points, scenario_name(o.scenario), o.seeds),
                         "campaign", io, env)) {
    return kExitFailure;
  }
  io.out << sensitivity_text(axis.key, points, o.seeds);
  for (const auto& point : points) {
    for (const auto& w : sim::campaign::campaign_warnings(point.report)) {
      io.err << fmt::format("campaign: warning: {}={}: {}\n", axis.key, point.value, w);
    }
  }
  return kExitOk;
}

}  // namespace myriad::cli
