// `myriad calibrate check`: predicted against measured, per kernel row of a
// calibration run (how well the fitted model describes what it was fitted to)
// and per composite workload (what it was not fitted to: the figure of merit).
#pragma once

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "calibration/check/composite.hpp"
#include "calibration/measure/runner.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::calibration {

struct CheckLine {
  std::string name;
  std::string family;
  double predicted_s = 0;
  double measured_s = 0;
  std::string check;  // the measurement's own result check
  // Composites: the kernel families it runs beyond the sizes the calibration
  // rows measured ("attention at 2.0x the largest measured"); empty when inside.
  std::string extrapolated;
  [[nodiscard]] double error() const { return predicted_s / measured_s - 1; }
};

struct CheckReport {
  std::string profile;
  std::vector<CheckLine> rows;                        // from the calibration run, when given
  std::vector<CheckLine> composites;                  // measured now
  [[nodiscard]] double composite_mean_error() const;  // mean of |error|
  [[nodiscard]] double composite_max_error() const;
};

// What a fitted profile records in its provenance: the transport latency
// (required; throws naming the file without it) and the host's concurrent
// slowdown (provenance.host; 1 thread, 1x when absent).
FittedTerms fitted_terms(const nlohmann::json& profile, const std::string& path);

// `measured`: the composites' rows when they were already timed (the loop times
// them in the grid's passes), in `composites`' order; null: time them now.
CheckReport check_profile(const sim::DeviceProfile& profile, const FittedTerms& terms,
                          const std::optional<RowsFile>& rows,
                          const std::vector<Composite>& composites,
                          const std::vector<Row>* measured, const RunnerOptions& options,
                          std::ostream& progress);

nlohmann::json to_json(const CheckReport& report);

}  // namespace myriad::calibration
