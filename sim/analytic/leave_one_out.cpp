#include "sim/analytic/leave_one_out.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

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

Pooled pooled_error(const std::vector<const Suite*>& suites, const ProfileLookup& lookup) {
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

Pooled pooled_error(const std::vector<const Suite*>& suites, const DeviceProfile& profile) {
  return pooled_error(
      suites, [&](const models::scenario::Scenario&) -> const DeviceProfile& { return profile; });
}

// Every suite's rows on their own profiles, `values` of `params` set on each.
class SharedValues {
 public:
  SharedValues(const ProfileLookup& shipped, const std::vector<FreeParameter>& params)
      : shipped_(shipped), params_(params) {}
  [[nodiscard]] ProfileLookup lookup(const std::vector<double>& values) {
    values_ = values;
    set_.clear();
    return [this](const models::scenario::Scenario& s) -> const DeviceProfile& {
      const std::string& name = s.cluster.gpu.profile;
      const auto it = set_.find(name);
      if (it != set_.end()) return it->second;
      DeviceProfile p = shipped_(s);
      for (std::size_t k = 0; k < params_.size(); ++k) params_[k].set(p, values_[k]);
      return set_.emplace(name, std::move(p)).first->second;
    };
  }

 private:
  const ProfileLookup& shipped_;
  const std::vector<FreeParameter>& params_;
  std::vector<double> values_;
  std::map<std::string, DeviceProfile> set_;
};

// Coordinate descent with golden-section searches, as fit_parameters, on values
// shared by every suite's profile, from `start`.
std::vector<double> fit_shared(const std::vector<const Suite*>& suites,
                               const ProfileLookup& shipped, std::vector<double> values) {
  const auto& params = shared_parameters();
  SharedValues shared(shipped, params);
  const auto objective = [&](const std::vector<double>& v) {
    return pooled_error(suites, shared.lookup(v)).objective();
  };
  for (int round = 0; round < kRounds; ++round) {
    for (std::size_t k = 0; k < params.size(); ++k) {
      const auto error_at = [&](double x) {
        std::vector<double> trial = values;
        trial[k] = x;
        return objective(trial);
      };
      const double best =
          models::golden_section(error_at, params[k].lo, params[k].hi, kGoldenSteps);
      if (error_at(best) < objective(values)) values[k] = best;
    }
  }
  return values;
}

// Every suite but the i-th.
std::vector<const Suite*> all_but(const std::vector<const Suite*>& suites, std::size_t i) {
  std::vector<const Suite*> others;
  for (std::size_t j = 0; j < suites.size(); ++j) {
    if (j != i) others.push_back(suites[j]);
  }
  return others;
}

// A suite left out: its fit on the others, and its errors fitted and as shipped.
HeldOutSuite held_out(const Suite& suite, ParameterFit fit, const ProfileLookup& fitted,
                      const ProfileLookup& shipped) {
  const ValidationResult held = evaluate(suite, fitted);
  const ValidationResult as_shipped = evaluate(suite, shipped);
  HeldOutSuite h;
  h.suite = suite.name;
  h.fit = std::move(fit);
  h.mean = held.mean_abs_rel_error;
  h.max = held.max_abs_rel_error;
  h.shipped_mean = as_shipped.mean_abs_rel_error;
  h.shipped_max = as_shipped.max_abs_rel_error;
  return h;
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
  std::vector<const Suite*> every;
  every.reserve(suites.size());
  for (const auto& suite : suites) every.push_back(&suite);
  const auto on = [](const DeviceProfile& p) -> ProfileLookup {
    return [&p](const models::scenario::Scenario&) -> const DeviceProfile& { return p; };
  };
  std::vector<HeldOutSuite> out;
  for (std::size_t i = 0; i < suites.size(); ++i) {
    ParameterFit fit = fit_parameters(all_but(every, i), base);
    DeviceProfile fitted = base;
    for (std::size_t k = 0; k < free_parameters().size(); ++k) {
      free_parameters()[k].set(fitted, fit.values[k]);
    }
    out.push_back(held_out(suites[i], std::move(fit), on(fitted), on(base)));
  }
  return out;
}

const std::vector<FreeParameter>& shared_parameters() {
  static const std::vector<FreeParameter> params = [] {
    std::vector<FreeParameter> out;
    for (const auto& p : free_parameters()) {
      if (p.name != "attention_fwd_efficiency") out.push_back(p);
    }
    return out;
  }();
  return params;
}

std::vector<HeldOutSuite> leave_one_suite_out_across_profiles(
    const std::vector<const Suite*>& suites, const ProfileLookup& shipped) {
  const auto& params = shared_parameters();
  // From the first suite's profile's values (the profiles ship the same ones).
  std::vector<double> start;
  if (!suites.empty() && !suites.front()->cases.empty()) {
    const DeviceProfile& first = shipped(suites.front()->cases.front().scenario);
    for (const auto& p : params) start.push_back(p.get(first));
  }
  std::vector<HeldOutSuite> out;
  for (std::size_t i = 0; i < suites.size(); ++i) {
    const std::vector<const Suite*> others = all_but(suites, i);
    ParameterFit fit;
    fit.values = fit_shared(others, shipped, start);
    SharedValues shared(shipped, params);
    fit.mean_abs_rel_error = pooled_error(others, shared.lookup(fit.values)).mean;
    SharedValues held(shipped, params);
    out.push_back(held_out(*suites[i], fit, held.lookup(fit.values), shipped));
  }
  return out;
}

}  // namespace myriad::sim
