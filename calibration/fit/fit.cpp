#include "calibration/fit/fit.hpp"

#include <fmt/format.h>

#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "calibration/fit/family_fits.hpp"
#include "models/scenario/json_file.hpp"
#include "sim/cost/comm_cost.hpp"
#include "sim/cost/compute_cost.hpp"

namespace myriad::calibration {

using nlohmann::json;

double predict_row(const Row& row, const sim::DeviceProfile& profile, double latency_per_step_s) {
  if (row.kind != RowKind::collective) return sim::compute_cost(row.op(), profile).time_s;
  models::scenario::ClusterSpec node;
  node.gpus_per_node = row.collective.ranks;
  node.gpus = row.collective.ranks;
  node.nvlink_latency_s = latency_per_step_s;
  const models::Collective c{row.name, row.collective.collective, models::GroupKind::dp,
                             row.collective.bytes};
  return sim::collective_cost(c, {row.collective.ranks, row.collective.ranks, 1}, node, profile)
      .time_s;
}

namespace {

// The collective rows the bus bandwidth curve is not fitted from (other
// collectives, algorithms such as nvls, in-place copies), named by family with
// their count: "; not used: all_reduce.nvls x12 (...)", or "" when every one is.
std::string unused_collectives(const std::vector<Row>& rows) {
  std::map<std::string, int> unused;
  for (const Row& r : rows) {
    if (r.kind != RowKind::collective) continue;
    const bool fitted = r.collective.collective == models::CollectiveKind::all_reduce &&
                        r.collective.algorithm == models::CollectiveAlgorithm::ring &&
                        !r.collective.device_copy;
    if (!fitted) ++unused[r.family];
  }
  std::string left;
  for (const auto& [family, n] : unused) {
    left += fmt::format("{}{} x{}", left.empty() ? "" : ", ", family, n);
  }
  return left.empty() ? left
                      : fmt::format(
                            "; not used: {} (the curve is fitted from out-of-place ring "
                            "all-reduce rows only)",
                            left);
}

// The rows the fit may use: those that passed their check; the others stop the
// fit, or with leave_out_failed are named in the result.
RowsFile passed_rows(const RowsFile& given, const FitOptions& options,
                     std::vector<std::string>& left_out) {
  RowsFile f = given;
  f.rows.clear();
  for (const Row& r : given.rows) {
    if (r.check == "pass") {
      f.rows.push_back(r);
    } else if (options.leave_out_failed) {
      left_out.push_back(r.name);
    } else {
      throw std::runtime_error(
          fmt::format("row '{}' failed its check ({}): a profile is not fitted to wrong results "
                      "(--leave-out-failed fits the other rows and names this one in the profile)",
                      r.name, r.check));
    }
  }
  return f;
}

}  // namespace

FitResult fit_profile(const RowsFile& given, const FitOptions& options) {
  std::vector<std::string> left_out;
  const RowsFile f = passed_rows(given, options, left_out);
  fit_detail::FitState s(f, f.backend == "cpu");
  if (options.base_profile) {
    s.base = models::scenario::read_json_file(*options.base_profile, "base profile");
    s.base_path = *options.base_profile;
    (void)sim::parse_profile(s.base, s.base_path);  // complete and valid
  }
  s.result.left_out = std::move(left_out);
  s.attention_family = options.attention_family;
  s.attention_reference = options.attention_reference;

  fit_detail::fit_ceilings(s);
  const json families = fit_detail::fit_memory_bound(s);
  fit_detail::fit_gemm(s);
  fit_detail::fit_attention(s);
  fit_detail::CollectiveFit collectives = fit_detail::fit_collectives(s);
  collectives.note += unused_collectives(s.rows.rows);
  const json host = fit_detail::fit_host(s);

  // The profile.
  json profile;
  profile["device"] = options.device.empty()
                          ? (s.cpu ? f.environment.value("cpu", std::string("CPU"))
                                   : f.environment.value("gpu", std::string("GPU")))
                          : options.device;
  profile["kind"] = fmt::format("measured by myriad calibrate ({} backend, {} grid, {})", f.backend,
                                f.grid, f.date);
  profile["sources"] = json::array(
      {fmt::format("myriad calibrate --backend {}: {} rows; {}", f.backend, f.rows.size(),
                   f.environment.value("commit", std::string("commit unknown")))});
  if (!s.base.is_null()) {
    profile["sources"].push_back(
        fmt::format("unmeasured parameters from {}", *options.base_profile));
  }
  // NCCL on the base's hardware runs what the base's curve was measured with (its
  // default picks NVLS where the switch has it); the thread executor is a ring.
  if (!s.cpu && !s.base.is_null() && s.base.value("nvlink_busbw_algorithm", "ring") == "nvls") {
    profile["nvlink_busbw_algorithm"] = "nvls";
    s.params.copy(&sim::DeviceProfile::ring_busbw_fraction, s.base);
  }
  // The host's launch time is the framework's on the base's host, which the
  // harness (C++, no Python) does not measure.
  if (!s.base.is_null() && s.base.contains("parameters") &&
      s.base["parameters"].contains("host_launch_s")) {
    s.params.copy(&sim::DeviceProfile::host_launch_s, s.base);
  }
  profile["parameters"] = s.params.json();
  profile["memory_bound_kernels"] = families;
  profile["nvlink_busbw"] = collectives.curve;
  profile["gemm_tiles"] =
      !s.base.is_null()
          ? s.base["gemm_tiles"]
          : json{{"origin", "assumption"},
                 {"note", "the CPU backend has no output tiles: one 1x1 tile, no waves"},
                 {"tiles", json::array({json::array({1, 1, 1.0})})}};
  json residuals = json::object();
  for (const auto& r : s.result.residuals) {
    residuals[r.parameter] = {
        {"rows", r.rows}, {"rms_error", r.rms_error}, {"max_error", r.max_error}};
  }
  profile["provenance"] = {{"backend", f.backend},
                           {"grid", f.grid},
                           {"date", f.date},
                           {"environment", f.environment},
                           {"transport",
                            {{"latency_per_step_s", s.result.latency_per_step_s},
                             {"measured", collectives.measured},
                             {"note", collectives.note}}},
                           {"host", host},
                           {"residuals", residuals},
                           {"ceilings", s.result.ceilings}};
  if (!s.result.left_out.empty()) {
    json names = json::array();
    for (const Row& r : given.rows) {
      if (r.check != "pass") names.push_back({{"row", r.name}, {"check", r.check}});
    }
    profile["provenance"]["left_out"] = {
        {"note", "rows that failed their check, left out of the fit (--leave-out-failed)"},
        {"rows", names}};
  }
  (void)sim::parse_profile(profile, "fitted profile");  // what estimate will accept
  s.result.profile = std::move(profile);
  return s.result;
}

}  // namespace myriad::calibration
