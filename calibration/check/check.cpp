#include "calibration/check/check.hpp"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "calibration/fit/fit.hpp"

namespace myriad::calibration {

double CheckReport::composite_mean_error() const {
  double sum = 0;
  for (const auto& c : composites) sum += std::abs(c.error());
  return composites.empty() ? 0 : sum / static_cast<double>(composites.size());
}

double CheckReport::composite_max_error() const {
  double most = 0;
  for (const auto& c : composites) most = std::max(most, std::abs(c.error()));
  return most;
}

double transport_latency(const nlohmann::json& profile, const std::string& path) {
  const auto* at = "/provenance/transport/latency_per_step_s";
  const nlohmann::json::json_pointer pointer(at);
  if (!profile.contains(pointer) || !profile[pointer].is_number()) {
    throw std::runtime_error(fmt::format(
        "{}: no provenance.transport.latency_per_step_s: check needs a profile fitted by "
        "`myriad calibrate fit`",
        path));
  }
  return profile[pointer].get<double>();
}

CheckReport check_profile(const sim::DeviceProfile& profile, double latency_per_step_s,
                          const std::optional<RowsFile>& rows,
                          const std::vector<Composite>& composites, const RunnerOptions& options,
                          std::ostream& progress) {
  CheckReport report;
  report.profile = profile.file;
  if (rows) {
    for (const Row& r : rows->rows) {
      if (r.kind == "ceiling") continue;
      report.rows.push_back(
          {r.name, r.family, predict_row(r, profile, latency_per_step_s), r.median_s, r.check});
    }
  }
  std::vector<Case> cases;
  std::vector<double> predicted;
  for (const Composite& c : composites) {
    const CompositeWork work = c.build();  // for its descriptors; the run builds afresh
    predicted.push_back(predict_composite(work, profile, latency_per_step_s));
    cases.push_back({c.row, [build = c.build] { return build().instance; }});
  }
  const std::vector<Row> measured = run_cases(cases, options, progress);
  for (std::size_t i = 0; i < measured.size(); ++i) {
    report.composites.push_back(
        {measured[i].name, "composite", predicted[i], measured[i].median_s, measured[i].check});
  }
  return report;
}

nlohmann::json to_json(const CheckReport& report) {
  const auto lines = [](const std::vector<CheckLine>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& l : v) {
      a.push_back({{"name", l.name},
                   {"family", l.family},
                   {"predicted_s", l.predicted_s},
                   {"measured_s", l.measured_s},
                   {"error", l.error()},
                   {"check", l.check}});
    }
    return a;
  };
  return {{"profile", report.profile},
          {"composite_mean_abs_error", report.composite_mean_error()},
          {"composite_max_abs_error", report.composite_max_error()},
          {"composites", lines(report.composites)},
          {"rows", lines(report.rows)}};
}

}  // namespace myriad::calibration
