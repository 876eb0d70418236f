// How the analytic engine generalizes: the device-profile parameters that no
// source publishes (assumptions) fitted to validation suites, and a
// leave-one-suite-out check: fitted on all suites but one, how well the profile
// predicts the one left out, beside the shipped profile's errors on it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim/analytic/validation_suite.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

// A profile parameter the fit may move, within a range.
struct FreeParameter {
  std::string name;
  double lo = 0;
  double hi = 0;
  std::function<double(const DeviceProfile&)> get;
  std::function<void(DeviceProfile&, double)> set;
};

// The A100 profile's assumptions that move every row: sustained clock fraction,
// attention efficiency (forward; backward keeps its ratio to it), the GEMM
// reduction-depth constant, the per-kernel overhead and the share of compute that
// communication beside it takes.
const std::vector<FreeParameter>& free_parameters();

struct ParameterFit {
  std::vector<double> values;     // one per free parameter
  double mean_abs_rel_error = 0;  // over the rows fitted to, pooled
};

// Minimizes the pooled mean |relative error| over the suites' rows, each suite
// kept within its bounds where the parameters allow (an excess beyond a bound
// weighs ten times the mean), by coordinate descent with golden-section searches
// from `base`'s values.
ParameterFit fit_parameters(const std::vector<const Suite*>& suites, const DeviceProfile& base);

struct HeldOutSuite {
  std::string suite;
  ParameterFit fit;  // on the other suites
  double mean = 0;   // the fitted profile on the suite left out
  double max = 0;
  double shipped_mean = 0;  // the shipped profile on it
  double shipped_max = 0;
};

// For each suite, fit on the others and predict it. Every suite's scenarios must
// take `base` (one GPU profile).
std::vector<HeldOutSuite> leave_one_suite_out(const std::vector<Suite>& suites,
                                              const DeviceProfile& base);

// Across device profiles: the assumptions every profile makes alike (the
// sustained clock, the GEMM reduction-depth constant, the per-kernel overhead;
// not the attention rates, which profiles take from their own GPUs' kernels)
// fitted as one value for every profile on all suites but one, each suite's rows
// on their own profiles (`shipped`), and the suite left out predicted so. A suite
// is the only one of its profile no longer leaves nothing to fit it on.
const std::vector<FreeParameter>& shared_parameters();
std::vector<HeldOutSuite> leave_one_suite_out_across_profiles(
    const std::vector<const Suite*>& suites, const ProfileLookup& shipped);

}  // namespace myriad::sim
