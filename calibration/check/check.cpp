#include "calibration/check/check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

namespace {

// The kernels of a composite larger than the calibration rows measured (by more
// than half again): GEMMs and attention by FLOPs, streaming kernels by bytes in
// their family. "attention forward at 2.0x, ..." of the largest measured; empty
// when every kernel is inside what was measured (or its kind was not measured).
std::string beyond_measured(const CompositeWork& work, const RowsFile& rows) {
  std::vector<std::pair<std::string, double>> beyond;  // label, size over the largest
  const auto visit = [&](models::OpClass cls, const std::string& family, bool backward,
                         double flops, double bytes) {
    const bool compute = cls == models::OpClass::gemm || cls == models::OpClass::attention;
    std::string label = family;
    if (cls == models::OpClass::gemm) label = "gemm";
    if (cls == models::OpClass::attention)
      label = backward ? "attention backward" : "attention forward";
    double largest = 0;
    for (const Row& r : rows.rows) {
      if (r.kind != RowKind::kernel) continue;
      const bool same =
          compute ? r.op_class == cls && (cls == models::OpClass::gemm || r.backward == backward)
                  : r.family == family;
      if (same) largest = std::max(largest, compute ? r.flops : r.bytes);
    }
    const double ratio = largest > 0 ? (compute ? flops : bytes) / largest : 0;
    if (ratio <= 1.5) return;
    const auto it =
        std::find_if(beyond.begin(), beyond.end(), [&](const auto& b) { return b.first == label; });
    if (it == beyond.end()) {
      beyond.emplace_back(label, ratio);
    } else {
      it->second = std::max(it->second, ratio);
    }
  };
  for (const Row& r : work.rows) {
    if (r.kind == RowKind::kernel) visit(r.op_class, r.family, r.backward, r.flops, r.bytes);
  }
  for (const models::Op& op : work.ops) {
    visit(op.cls, std::string(op.name), op.backward, op.flops,
          op.backward && op.backward_bytes > 0 ? op.backward_bytes : op.bytes);
  }
  std::string out;
  for (const auto& [label, ratio] : beyond) {
    out += fmt::format("{}{} at {:.1f}x", out.empty() ? "" : ", ", label, ratio);
  }
  return out.empty() ? out : out + " the largest measured";
}

}  // namespace

CheckReport check_profile(const sim::DeviceProfile& profile, const FittedTerms& terms,
                          const std::optional<RowsFile>& rows,
                          const std::vector<Composite>& composites,
                          const std::vector<Row>* measured_before, const RunnerOptions& options,
                          std::ostream& progress) {
  CheckReport report;
  report.profile = profile.file;
  if (rows) {
    for (const Row& r : rows->rows) {
      if (r.kind == RowKind::ceiling || r.times_s.empty()) continue;  // no times: the case errored
      report.rows.push_back({r.name, r.family, predict_row(r, profile, terms.latency_per_step_s),
                             r.best_s, r.check, ""});
    }
  }
  std::vector<Case> cases;
  std::vector<double> predicted;
  std::vector<std::string> extrapolated;
  for (const Composite& c : composites) {
    const CompositeWork work = c.descriptors();  // the run builds afresh
    predicted.push_back(predict_composite(work, profile, terms));
    extrapolated.push_back(rows ? beyond_measured(work, *rows) : std::string{});
    cases.push_back(timing_case(c));
  }
  if (measured_before != nullptr && measured_before->size() != composites.size()) {
    throw std::invalid_argument("check_profile: one measured row per composite expected");
  }
  const std::vector<Row> measured =
      measured_before != nullptr ? *measured_before : run_cases(cases, options, progress);
  for (std::size_t i = 0; i < measured.size(); ++i) {
    report.composites.push_back({measured[i].name, "composite", predicted[i], measured[i].best_s,
                                 measured[i].check, extrapolated[i]});
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
      if (!l.extrapolated.empty()) a.back()["extrapolated"] = l.extrapolated;
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
