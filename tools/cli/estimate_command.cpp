// `myriad estimate SCENARIO`: the analytic engine's step time, MFU, tokens/s,
// time breakdown, memory per GPU and the collectives behind them.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/scenario/loader.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/fit_remedies.hpp"
#include "sim/planning/growth.hpp"
#include "sim/program/closed_form_check.hpp"
#include "tools/cli/estimate_options.hpp"
#include "tools/cli/step_report.hpp"

namespace myriad::cli {
int run_estimate(const EstimateOptions& o, Streams io, const Environment& env) {
  const VerbOutputs outputs{"estimate", {{"--json", o.json_file}}};
  if (!outputs_ok(outputs.verb, outputs.outputs, {o.scenario.scenario, o.profile}, io)) {
    return kExitBadInput;
  }
  const auto s = load_for_cli(o.scenario, io, env, nullptr, &outputs);
  if (!s) return kExitBadInput;
  const auto profile = profile_for(*s, o.profile, io, env);
  if (!profile) return kExitBadInput;
  const sim::StepReport r = sim::estimate(*s, *profile);
  std::optional<sim::GrowthPhase> growth;
  if (s->training.growth.given()) {
    try {
      growth = sim::growth_phase(*s, *profile);
    } catch (const std::invalid_argument& e) {
      io.err << fmt::format("error: {}: {}\n", o.scenario.scenario, e.what());
      return kExitBadInput;
    }
  }
  // A layout that does not fit: what would.
  const std::vector<sim::FitRemedy> remedies =
      r.fits ? std::vector<sim::FitRemedy>{} : sim::fit_remedies(*s, *profile);
  if (!o.json_file.empty()) {
    nlohmann::json j = step_report_json(*s, *profile, r);
    if (growth) j["growth"] = growth_json(*s, *growth, r);
    if (!r.fits) j["fit_remedies"] = fit_remedies_json(remedies);
    if (!write_json(o.json_file, j, "estimate", io)) return kExitFailure;
  }
  std::string text = step_report_text(*s, *profile, r);
  // Where the closed form and the step program it stands for are apart, said
  // under the headline figures.
  const sim::ClosedFormCheck check = sim::check_closed_form(*s, *profile, r.step_time_s);
  if (!check.note.empty()) {
    const std::size_t at = text.find("\n\n  step time breakdown");
    text.insert(at == std::string::npos ? text.size() : at + 1, "  " + check.note + "\n");
  }
  if (!r.fits) {
    const std::size_t over = text.find("  DOES NOT FIT:");
    const std::size_t end = over == std::string::npos ? over : text.find('\n', over);
    if (end != std::string::npos) text.insert(end + 1, fit_remedies_text(r, remedies));
  }
  io.out << text;
  if (growth) io.out << "\n" << growth_text(*s, *growth, r);
  return kExitOk;
}

}  // namespace myriad::cli
