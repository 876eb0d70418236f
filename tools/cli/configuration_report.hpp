// The data of a configurations report (tools/report/html_report.hpp) from what
// `sweep` and `plan` evaluated: each configuration's parameters, figures,
// breakdown, memory and scenario (as `myriad check` resolves it, stored as the
// lines that differ from the base scenario's), the Pareto front, the objective.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/planning/layout_search.hpp"

namespace myriad::cli {

// A column of the report: its key in a row's data and how it is labeled.
struct ReportColumn {
  std::string key;
  std::string label;
};

class ConfigurationReport {
 public:
  // `base`: the scenario every configuration changes (its resolved YAML is the
  // reference the rows' scenarios are stored against); `command`: how a row is
  // reproduced, before its --set arguments.
  ConfigurationReport(std::string title, std::string subtitle,
                      const models::scenario::Scenario& base, std::string command,
                      const std::vector<ReportColumn>& parameters);

  // A configuration the engine estimated.
  void add(const nlohmann::json& parameters, const models::scenario::Scenario& s,
           const sim::StepReport& r, const sim::LayoutMetrics& m,
           const std::vector<std::string>& sets, bool front = false, int rank = 0);
  // One it refused, with why.
  void add_invalid(const nlohmann::json& parameters, const std::string& problem);

  void set_objective(const sim::Objective& objective);
  // The front's objectives (two, for the plot's default axes) and what it means.
  void set_front(const std::vector<std::string>& keys, const std::string& note);
  void add_note(const std::string& note);
  [[nodiscard]] std::size_t rows() const { return rows_.size(); }

  [[nodiscard]] nlohmann::json data() const;

 private:
  nlohmann::json head_;
  std::vector<std::string> base_lines_;
  std::string command_;
  nlohmann::json rows_ = nlohmann::json::array();
};

// The key of an objective (sim::known_objectives: "step-time") among the metrics.
std::string metric_key(const std::string& objective);

// The metrics a configurations report plots, with their labels.
const std::vector<ReportColumn>& report_metrics();

}  // namespace myriad::cli
