#include "sim/analytic/leave_one_out.hpp"

#include <algorithm>

#include "models/numeric/golden_section.hpp"

namespace myriad::sim {
namespace {

constexpr int kRounds = 3;
constexpr int kGoldenSteps = 30;

// A suite's mean and max errors beyond its bounds weigh this much more than the
// pooled mean: the fit keeps every suite it sees within bounds where it can.
constexpr double kBoundWeight = 10;

struct Pooled {
  double mean = 0;    // |error| over every row of every suite
  double excess = 0;  // how far suites' mean and max errors are beyond their bounds
  [[nodiscard]] double objective() const { return mean + kBoundWeight * excess; }
};

Pooled pooled_error(const std::vector<const Suite*>& suites, const DeviceProfile& profile) {
  const ProfileLookup lookup = [&](const models::scenario::Scenario&) -> const DeviceProfile& {
    return profile;
  };
  Pooled p;
  double sum = 0;
  std::size_t rows = 0;
  for (const Suite* suite : suites) {
    const ValidationResult r = evaluate(*suite, lookup);
    sum += r.mean_abs_rel_error * static_cast<double>(r.rows.size());
    rows += r.rows.size();
    p.excess += std::max(0.0, r.mean_abs_rel_error - r.bound_mean) +
                std::max(0.0, r.max_abs_rel_error - r.bound_max);
  }
  p.mean = rows > 0 ? sum / static_cast<double>(rows) : 0;
  return p;
}

}  // namespace

const std::vector<FreeParameter>& free_parameters() {
  static const std::vector<FreeParameter> params = {
      {"sustained_clock_fraction", 0.7, 1.0,
       [](const DeviceProfile& p) { return p.sustained_clock; },
       [](DeviceProfile& p, double v) { p.sustained_clock = v; }},
      {"attention_fwd_efficiency", 0.2, 0.9,
       [](const DeviceProfile& p) { return p.attention_fwd_efficiency; },
       [](DeviceProfile& p, double v) {
         p.attention_bwd_efficiency *= v / p.attention_fwd_efficiency;
         p.attention_fwd_efficiency = v;
       }},
      {"gemm_k_half", 0, 256, [](const DeviceProfile& p) { return p.gemm_k_half; },
       [](DeviceProfile& p, double v) { p.gemm_k_half = v; }},
      {"kernel_overhead_s", 0, 20e-6, [](const DeviceProfile& p) { return p.kernel_overhead_s; },
       [](DeviceProfile& p, double v) { p.kernel_overhead_s = v; }},
  };
  return params;
}

ParameterFit fit_parameters(const std::vector<const Suite*>& suites, const DeviceProfile& base) {
  DeviceProfile profile = base;
  const auto& params = free_parameters();
  for (int round = 0; round < kRounds; ++round) {
    for (const auto& param : params) {
      const auto error_at = [&](double v) {
        DeviceProfile trial = profile;
        param.set(trial, v);
        return pooled_error(suites, trial).objective();
      };
      const double best = models::golden_section(error_at, param.lo, param.hi, kGoldenSteps);
      // Keep the current value unless the search found better.
      if (error_at(best) < pooled_error(suites, profile).objective()) param.set(profile, best);
    }
  }
  ParameterFit fit;
  for (const auto& param : params) fit.values.push_back(param.get(profile));
  fit.mean_abs_rel_error = pooled_error(suites, profile).mean;
  return fit;
}

std::vector<HeldOutSuite> leave_one_suite_out(const std::vector<Suite>& suites,
                                              const DeviceProfile& base) {
  std::vector<HeldOutSuite> out;
  for (std::size_t i = 0; i < suites.size(); ++i) {
    std::vector<const Suite*> others;
    for (std::size_t j = 0; j < suites.size(); ++j) {
      if (j != i) others.push_back(&suites[j]);
    }
    HeldOutSuite h;
    h.suite = suites[i].name;
    h.fit = fit_parameters(others, base);
    DeviceProfile fitted = base;
    for (std::size_t k = 0; k < free_parameters().size(); ++k) {
      free_parameters()[k].set(fitted, h.fit.values[k]);
    }
    const auto on = [&](const DeviceProfile& p) {
      return evaluate(suites[i],
                      [&](const models::scenario::Scenario&) -> const DeviceProfile& { return p; });
    };
    const ValidationResult held = on(fitted);
    const ValidationResult shipped = on(base);
    h.mean = held.mean_abs_rel_error;
    h.max = held.max_abs_rel_error;
    h.shipped_mean = shipped.mean_abs_rel_error;
    h.shipped_max = shipped.max_abs_rel_error;
    out.push_back(h);
  }
  return out;
}

}  // namespace myriad::sim
