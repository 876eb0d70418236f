// Validation suites: scenarios paired with published numbers, and how far the
// analytic engine's predictions land from them.
//
// A suite is a YAML file (scenarios/validation/*.yaml):
//   name, title, source, notes        text; the source lines of the published table
//   metric                            iteration_time_s, mfu or normalized_throughput
//                                     (the first case's step time over each case's, as
//                                     ablation tables give it): what the rows compare
//   bounds: {mean_abs_rel_error, max_abs_rel_error}   what ctest holds the suite to
//   left_out_of_fits                  text, optional: why --leave-one-out fits nothing on
//                                     it (a gap the model does not cover yet, which a fit
//                                     of the profile's assumptions would chase)
//   base                              scenario keys every case shares
//   cases: - case: NAME
//            published: {iteration_time_s | mfu | tflops_per_gpu | normalized_throughput: number}
//            scenario: keys laid over base (presets allowed)
//            note: text (assumptions behind the row)
// A published tflops_per_gpu (SC'21, which counts recomputation) becomes an
// iteration time through the scenario's hardware FLOPs: F / (gpus * tflops).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "models/scenario/loader.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

struct ValidationRow {
  std::string name;
  std::string metric;
  double published = 0;
  double predicted = 0;
  double rel_error = 0;  // (predicted - published) / published
  std::string note;
};

// What a suite file says of itself.
struct SuiteHeader {
  std::string name;
  std::string title;
  std::string source;
  std::string metric;
  double bound_mean = 0;
  double bound_max = 0;
  std::string left_out_of_fits;  // empty: the suite takes part in --leave-one-out's fits
};

struct ValidationResult : SuiteHeader {
  std::vector<ValidationRow> rows;
  double mean_abs_rel_error = 0;
  double max_abs_rel_error = 0;
  [[nodiscard]] bool within_bounds() const {
    return mean_abs_rel_error <= bound_mean && max_abs_rel_error <= bound_max;
  }
};

// Resolves a GPU preset name to its device profile.
using ProfileLookup = std::function<const DeviceProfile&(const models::scenario::Scenario&)>;

// A suite read and its scenarios loaded, ready to be predicted with any profile.
struct SuiteCase {
  std::string name;
  std::string note;
  std::string published_metric;  // iteration_time_s, mfu or tflops_per_gpu
  double published_value = 0;
  models::scenario::Scenario scenario;
};

struct Suite : SuiteHeader {
  std::vector<SuiteCase> cases;
};

// Reads and loads one suite file. Throws ScenarioError (located problems in the
// suite) or std::runtime_error.
Suite load_suite(const std::string& path, const models::scenario::LoadOptions& options);

// Predicts every case of a loaded suite with the profiles `profile_for` gives.
ValidationResult evaluate(const Suite& suite, const ProfileLookup& profile_for);

// load_suite, then evaluate.
ValidationResult run_suite(const std::string& path, const models::scenario::LoadOptions& options,
                           const ProfileLookup& profile_for);

}  // namespace myriad::sim
