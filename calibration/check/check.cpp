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

FittedTerms fitted_terms(const nlohmann::json& profile, const std::string& path) {
  const auto* at = "/provenance/transport/latency_per_step_s";
  const nlohmann::json::json_pointer pointer(at);
  if (!profile.contains(pointer) || !profile[pointer].is_number()) {
    throw std::runtime_error(fmt::format(
        "{}: no provenance.transport.latency_per_step_s: check needs a profile fitted by "
        "`myriad calibrate fit`",
        path));
  }
  FittedTerms terms;
  terms.latency_per_step_s = profile[pointer].get<double>();
  const nlohmann::json::json_pointer host("/provenance/host");
  if (profile.contains(host) && !profile[host].is_null()) {
    const auto& h = profile[host];
    if (!h.is_object() || !h.contains("concurrent_threads") ||
        !h["concurrent_threads"].is_number_integer() || h["concurrent_threads"].get<int>() < 2 ||
        !h.contains("concurrent_slowdown") || !h["concurrent_slowdown"].is_number() ||
        !(h["concurrent_slowdown"].get<double>() > 0)) {
      throw std::runtime_error(
          fmt::format("{}: provenance.host: expected {{\"concurrent_threads\": an integer >= 2, "
                      "\"concurrent_slowdown\": a number > 0}}",
                      path));
    }
    terms.concurrent_threads = h["concurrent_threads"].get<int>();
    terms.concurrent_slowdown = h["concurrent_slowdown"].get<double>();
  }
  return terms;
}

CheckReport check_profile(const sim::DeviceProfile& profile, const FittedTerms& terms,
                          const std::optional<RowsFile>& rows,
                          const std::vector<Composite>& composites,
                          const std::vector<Row>* measured_before, const RunnerOptions& options,
                          std::ostream& progress) {
  CheckReport report;
  report.profile = profile.file;
  if (rows) {
    for (const Row& r : rows->rows) {
      if (r.kind == "ceiling" || r.times_s.empty()) continue;  // no times: the case errored
      report.rows.push_back(
          {r.name, r.family, predict_row(r, profile, terms.latency_per_step_s), r.best_s, r.check});
    }
  }
  std::vector<Case> cases;
  std::vector<double> predicted;
  for (const Composite& c : composites) {
    const CompositeWork work = c.descriptors();  // the run builds afresh
    predicted.push_back(predict_composite(work, profile, terms));
    cases.push_back(timing_case(c));
  }
  if (measured_before != nullptr && measured_before->size() != composites.size()) {
    throw std::invalid_argument("check_profile: one measured row per composite expected");
  }
  const std::vector<Row> measured =
      measured_before != nullptr ? *measured_before : run_cases(cases, options, progress);
  for (std::size_t i = 0; i < measured.size(); ++i) {
    report.composites.push_back(
        {measured[i].name, "composite", predicted[i], measured[i].best_s, measured[i].check});
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
