// `myriad calibrate`: the calibration loop.
//   myriad calibrate [--backend cpu] [--grid small|full] [--out DIR]   measure: DIR/rows.json
//   myriad calibrate fit ROWS [--out PROFILE] [--base PROFILE]        fit a device profile
//   myriad calibrate check --profile PROFILE [--rows ROWS]            predicted vs measured
//   myriad calibrate loop [--backend cpu] [--out DIR]                 all three, in DIR
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <vector>

#include "calibration/check/check.hpp"
#include "calibration/environment/environment.hpp"
#include "calibration/fit/fit.hpp"
#include "calibration/measure/runner.hpp"
#include "models/scenario/json_file.hpp"
#include "models/scenario/text_file.hpp"
#include "tools/cli/calibrate_options.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

namespace cal = myriad::calibration;

bool backend_ok(const CalibrateOptions& o, Streams io) {
  if (o.backend == "cpu" || o.backend == "cuda") return true;
  io.err << fmt::format("myriad calibrate: error: --backend {}: expected cpu or cuda\n", o.backend);
  return false;
}

std::vector<cal::Composite> composites_for(const std::string& backend, cal::Grid grid) {
  return backend == "cuda" ? cal::cuda_composites(grid) : cal::cpu_composites(grid);
}

// The grid's rows go to DIR/rows.json. With `composites` (the loop), the
// composite workloads are timed in the same passes as the grid, so that both
// sample the same stretch of a shared machine's time; their rows come back there.
int measure(const CalibrateOptions& o, Streams io, std::string& rows_path,
            std::vector<cal::Row>* composites = nullptr) {
  if (!backend_ok(o, io)) return kExitBadInput;
  const cal::Grid grid = cal::parse_grid(o.grid);
  std::filesystem::create_directories(o.out);
  cal::RowsFile file;
  file.backend = o.backend;
  file.grid = cal::grid_name(grid);
  file.date = cal::utc_now();
  file.environment = cal::to_json(cal::current_environment());
  auto cases = o.backend == "cuda" ? cal::cuda_cases(grid) : cal::cpu_cases(grid);
  const std::size_t grid_cases = cases.size();
  if (composites != nullptr) {
    for (const cal::Composite& c : composites_for(o.backend, grid)) {
      cases.push_back(cal::timing_case(c));
    }
  }
  io.err << fmt::format(
      "calibrate: measuring {} cases{} on the {} backend ({} grid): {} passes over them, samples "
      "of >= {} s, the fastest kept\n",
      grid_cases,
      composites == nullptr ? "" : fmt::format(" and {} composites", cases.size() - grid_cases),
      o.backend, file.grid, o.repetitions, o.min_time_s);
  file.rows = cal::run_cases(cases, {o.repetitions, o.min_time_s}, io.err);
  if (composites != nullptr) {
    composites->assign(file.rows.begin() + static_cast<std::ptrdiff_t>(grid_cases),
                       file.rows.end());
    file.rows.resize(grid_cases);
  }
  rows_path = (std::filesystem::path(o.out) / "rows.json").string();
  cal::write_rows(file, rows_path);
  Table t({"row", "best", "rate", "spread", "numerics"}, "lrrrl");
  for (const cal::Row& r : file.rows) {
    t.add({r.name, r.times_s.empty() ? "-" : seconds(r.best_s), cal::rate_text(r),
           cal::spread_text(r), r.check});
  }
  io.out << t.str();
  int failed = 0;
  for (const auto& r : file.rows) failed += r.check == "pass" ? 0 : 1;
  io.out << fmt::format("calibrate: {} rows written to {} ({} failed their check)\n",
                        file.rows.size(), rows_path, failed);
  return failed == 0 ? kExitOk : kExitFailure;
}

std::string origin_of(const nlohmann::json& p) { return p.value("origin", std::string{}); }

int fit(const CalibrateOptions& o, Streams io, const std::string& rows_path,
        std::string& profile_path) {
  cal::FitOptions options;
  options.device = o.device;
  options.leave_out_failed = o.leave_out_failed;
  options.attention_family = o.attention_kernel;
  options.attention_reference = o.reference;
  if (!o.base.empty()) options.base_profile = o.base;
  cal::FitResult result;
  cal::RowsFile rows;
  try {  // the rows and the base profile are input: a problem with them is bad input
    rows = cal::read_rows(rows_path);
    result = cal::fit_profile(rows, options);
  } catch (const std::exception& e) {
    io.err << fmt::format("myriad calibrate fit: error: {}\n", e.what());
    return kExitBadInput;
  }
  profile_path = !o.profile_out.empty()
                     ? o.profile_out
                     : (std::filesystem::path(rows_path).parent_path() / "profile.json").string();
  if (!write_json(profile_path, result.profile, "calibrate fit", io)) return kExitFailure;
  Table t({"parameter", "value", "origin", "note"}, "lrll");
  for (const auto& [key, p] : result.profile["parameters"].items()) {
    t.add({key, fmt::format("{:.4g}", p["value"].get<double>()), origin_of(p),
           p.value("note", std::string{})});
  }
  for (const auto& [key, p] : result.profile["memory_bound_kernels"].items()) {
    t.add({"memory_bound_kernels." + key, fmt::format("{:.4g}", p["value"].get<double>()),
           origin_of(p), p.value("note", std::string{})});
  }
  // The transport's latency and curve are measured only where rows were fitted;
  // else they are the base profile's, and the note says which rows were not used.
  const auto& transport = result.profile["provenance"]["transport"];
  const bool measured = transport.value("measured", false);
  const std::string transport_origin = measured ? "measured" : "base profile (not measured)";
  t.add({"transport latency per step", seconds(result.latency_per_step_s), transport_origin,
         transport.value("note", std::string{})});
  if (result.concurrent_threads > 1) {
    t.add({fmt::format("host: {} threads at once", result.concurrent_threads),
           fmt::format("{:.3g}x", result.concurrent_slowdown), "measured",
           "each thread's time against one alone (the ceiling GEMM)"});
  }
  for (const auto& point : result.profile["nvlink_busbw"]) {
    t.add({fmt::format("busbw at {}", decimal_bytes(point[0].get<double>())),
           fmt::format("{:.3g} GB/s", point[1].get<double>() / 1e9), transport_origin, ""});
  }
  io.out << fmt::format("Fitted profile for {} ({} rows of {}):\n",
                        result.profile["device"].get<std::string>(),
                        rows.rows.size() - result.left_out.size(), rows_path)
         << t.str();
  // The ceilings: the fastest rate measured, beside the datasheet's.
  for (const auto& [family, c] : result.ceilings.items()) {
    const bool flops = family == "gemm";
    const auto rate = [&](double x) {
      return flops ? fmt::format("{:.4g} TFLOP/s", x / 1e12) : fmt::format("{:.4g} GB/s", x / 1e9);
    };
    std::string line = fmt::format("{} ceiling: {} measured ({})", flops ? "GEMM" : "copy",
                                   rate(c["measured"].get<double>()), c["row"].get<std::string>());
    if (c.contains("datasheet")) {
      line += fmt::format(", {} of the datasheet's {}", percent(c["of_datasheet"].get<double>()),
                          rate(c["datasheet"].get<double>()));
      if (c["of_datasheet"].get<double>() > 1) {
        line += " (above the datasheet: the row's data may sit in a cache)";
      }
    }
    if (c.contains("ceiling_case") && c["ceiling_case"]["row"] != c["row"]) {
      line += fmt::format("; the ceiling case ({}) ran at {}",
                          c["ceiling_case"]["row"].get<std::string>(),
                          rate(c["ceiling_case"]["rate"].get<double>()));
    }
    io.out << line << "\n";
  }
  io.out << fmt::format("Written to {}\n", profile_path);
  for (const auto& name : result.left_out) {
    io.err << fmt::format("calibrate fit: left out '{}': it failed its check\n", name);
  }
  return kExitOk;
}

// The composites' measured times from an earlier check report (`--json` or the
// loop's check.json), in the order of `composites`: a new profile is checked
// against measurements taken where the composites could run.
std::vector<cal::Row> measured_from(const std::string& path,
                                    const std::vector<cal::Composite>& composites) {
  const nlohmann::json j = models::scenario::read_json_file(path, "check report");
  if (!j.is_object() || !j.contains("composites") || !j["composites"].is_array()) {
    throw std::runtime_error(fmt::format(
        "{}: composites: expected the list of a check report (calibrate check --json)", path));
  }
  std::vector<cal::Row> rows;
  for (const cal::Composite& c : composites) {
    const auto& list = j["composites"];
    const auto it = std::find_if(list.begin(), list.end(), [&](const nlohmann::json& e) {
      return e.is_object() && e.value("name", std::string{}) == c.row.name;
    });
    if (it == list.end()) {
      throw std::runtime_error(
          fmt::format("{}: composites: no measurement of '{}'", path, c.row.name));
    }
    const auto i = std::distance(list.begin(), it);
    if (!it->contains("measured_s") || !(*it)["measured_s"].is_number() ||
        (*it)["measured_s"].get<double>() <= 0 || !it->contains("check") ||
        !(*it)["check"].is_string()) {
      throw std::runtime_error(fmt::format(
          "{}: composites[{}]: expected measured_s (seconds > 0) and check (a string)", path, i));
    }
    cal::Row r = c.row;
    r.best_s = (*it)["measured_s"].get<double>();
    r.times_s = {r.best_s};
    r.check = (*it)["check"].get<std::string>();
    rows.push_back(std::move(r));
  }
  return rows;
}

// Per family: how well the fitted model describes the rows it was fitted to.
std::string families_text(const cal::CheckReport& report) {
  if (report.rows.empty()) return {};
  std::map<std::string, std::vector<double>> by_family;
  for (const auto& l : report.rows) by_family[l.family].push_back(l.error());
  Table t({"family (fitted rows)", "rows", "median |error|", "max |error|"}, "lrrr");
  for (auto& [family, errors] : by_family) {
    for (auto& e : errors) e = std::abs(e);
    t.add({family, std::to_string(errors.size()), percent(cal::median(errors)),
           percent(*std::max_element(errors.begin(), errors.end()))});
  }
  return "Kernels and collectives of the calibration run, predicted by the fitted profile:\n" +
         t.str();
}

// The composite workloads, predicted against measured, and the mean error against the target.
std::string composites_text(const cal::CheckReport& report, double max_error) {
  Table c({"composite (not fitted)", "predicted", "measured", "prediction error",
           "numerics (result checked)", "beyond the sizes measured"},
          "lrrrll");
  for (const auto& l : report.composites) {
    c.add({l.name, seconds(l.predicted_s), seconds(l.measured_s),
           fmt::format("{:+.1f} %", 100 * l.error()), l.check,
           l.extrapolated.empty() ? "-" : l.extrapolated});
  }
  return "Composite workloads, predicted by the analytic cost models from the profile:\n" +
         c.str() +
         fmt::format("Prediction error: mean {}, max {}; target: mean within {} ({})\n",
                     percent(report.composite_mean_error()), percent(report.composite_max_error()),
                     percent(max_error),
                     report.composite_mean_error() <= max_error
                         ? "met"
                         : fmt::format("missed by {:.1f} points",
                                       100 * (report.composite_mean_error() - max_error)));
}

// A wrong result or a mean error past the target fails the check.
int check_verdict(const cal::CheckReport& report, double max_error, Streams io) {
  int wrong = 0;
  for (const auto& l : report.composites) wrong += l.check != "pass" ? 1 : 0;
  if (wrong > 0) {
    io.err << fmt::format(
        "calibrate check: {} composite(s) computed a wrong result (the numerics column)\n", wrong);
    return kExitFailure;
  }
  if (report.composite_mean_error() > max_error) {
    io.err << fmt::format(
        "calibrate check: the mean prediction error {} is past the target {} (--max-error)\n",
        percent(report.composite_mean_error()), percent(max_error));
    return kExitFailure;
  }
  return kExitOk;
}

int check(const CalibrateOptions& o, Streams io, const std::string& profile_path,
          const std::string& rows_path, const std::string& json_path,
          const std::vector<cal::Row>* measured_composites = nullptr) {
  // Everything read is input: a problem with it is bad input (exit 2).
  nlohmann::json raw;
  sim::DeviceProfile profile;
  cal::FittedTerms terms;
  std::optional<cal::RowsFile> rows;
  std::string backend;
  std::vector<cal::Composite> composites;
  std::vector<cal::Row> earlier;
  try {
    raw = models::scenario::read_json_file(profile_path, "device profile");
    profile = sim::parse_profile(raw, profile_path);
    terms = cal::fitted_terms(raw, profile_path);
    if (!rows_path.empty()) rows = cal::read_rows(rows_path);
    const cal::Grid grid = cal::parse_grid(rows ? rows->grid : o.grid);
    // Composites run on the backend the profile was measured on.
    backend = raw.value(nlohmann::json::json_pointer("/provenance/backend"), o.backend);
    composites = composites_for(backend, grid);
    if (measured_composites == nullptr && !o.measured_from.empty()) {
      earlier = measured_from(o.measured_from, composites);
      measured_composites = &earlier;
    }
  } catch (const std::exception& e) {
    io.err << fmt::format("myriad calibrate check: error: {}\n", e.what());
    return kExitBadInput;
  }
  if (!earlier.empty()) {
    io.err << fmt::format("calibrate check: composite times from {}\n", o.measured_from);
  }
  if (measured_composites == nullptr) {
    io.err << fmt::format("calibrate check: timing the composite workloads on the {} backend\n",
                          backend);
  }
  const cal::CheckReport report = cal::check_profile(
      profile, terms, rows, composites, measured_composites, {o.repetitions, o.min_time_s}, io.err);
  if (!json_path.empty() && !write_json(json_path, cal::to_json(report), "calibrate check", io)) {
    return kExitFailure;
  }
  io.out << families_text(report) << composites_text(report, o.max_error);
  return check_verdict(report, o.max_error, io);
}

// The files a calibrate run will write, checked before it measures for minutes:
// fit's profile, check's report, or the folder the measurement and loop fill.
bool calibrate_outputs_ok(const CalibrateOptions& o, Streams io, bool fitting, bool checking) {
  if (fitting) {
    const std::string out =
        !o.profile_out.empty()
            ? o.profile_out
            : (std::filesystem::path(o.rows).parent_path() / "profile.json").string();
    return outputs_ok("calibrate fit", {{"--out", out}}, {o.rows, o.base}, io);
  }
  if (checking) {
    return outputs_ok("calibrate check", {{"--json", o.json_file}},
                      {o.profile, o.check_rows, o.measured_from}, io);
  }
  std::error_code ec;
  std::filesystem::create_directories(o.out, ec);
  if (ec) {
    io.err << fmt::format("myriad calibrate: error: --out {}: {}\n",
                          models::scenario::printable(o.out), ec.message());
    return false;
  }
  const std::filesystem::path dir(o.out);
  return outputs_ok("calibrate",
                    {{"--out", (dir / "rows.json").string()},
                     {"--out", (dir / "profile.json").string()},
                     {"--out", (dir / "check.json").string()}},
                    {o.base}, io);
}

}  // namespace

int run_calibrate(CalibrateOptions& o, CalibrateRun what, Streams io) {
  if (!calibrate_outputs_ok(o, io, what == CalibrateRun::fit, what == CalibrateRun::check)) {
    return kExitBadInput;
  }
  if (what == CalibrateRun::fit) {
    std::string profile;
    return fit(o, io, o.rows, profile);
  }
  if (what == CalibrateRun::check) return check(o, io, o.profile, o.check_rows, o.json_file);
  std::string rows;
  if (what == CalibrateRun::measure) return measure(o, io, rows);
  std::vector<cal::Row> composites;
  const int measured = measure(o, io, rows, &composites);
  const bool go_on =
      measured == kExitOk || (measured == kExitFailure && o.leave_out_failed && !rows.empty());
  if (!go_on) return measured;
  std::string profile;
  o.reference = o.loop_reference;
  if (o.reference.empty()) o.attention_kernel = cal::kCompositeAttentionFamily;
  if (const int fitted = fit(o, io, rows, profile); fitted != kExitOk) return fitted;
  const int checked = check(o, io, profile, rows,
                            (std::filesystem::path(o.out) / "check.json").string(), &composites);
  return checked != kExitOk ? checked : measured;
}

}  // namespace myriad::cli
