#include "calibration/fit/fit.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "models/numeric/golden_section.hpp"
#include "models/scenario/json_file.hpp"
#include "sim/cost/comm_cost.hpp"
#include "sim/cost/compute_cost.hpp"

namespace myriad::calibration {
namespace {

// The slowest kernels a profile can describe, as a fraction of the peak: a
// simple CUDA attention ran at 0.1-0.2 % of an H200's bf16 peak (2026-11-30),
// and a fit clamped at 1 % predicted it seven times too fast.
constexpr double kMinEfficiency = 1e-4;

using nlohmann::json;

json parameter(double value, const std::string& origin, const std::string& note) {
  return {{"value", value}, {"origin", origin}, {"note", note}};
}

bool is_streaming(const Row& r) {
  return r.kind == RowKind::kernel &&
         (r.op_class == models::OpClass::elementwise || r.op_class == models::OpClass::optimizer);
}

const Row& ceiling(const RowsFile& f, const std::string& family) {
  for (const Row& r : f.rows) {
    if (r.kind == RowKind::ceiling && r.family == family) return r;
  }
  throw std::runtime_error(fmt::format(
      "calibration rows have no '{}' ceiling row: measure with `myriad calibrate`", family));
}

// Relative errors of `predict` over `rows`: rms and max.
template <typename Predict>
ParameterResidual residual(const std::string& name, const std::vector<const Row*>& rows,
                           Predict predict) {
  ParameterResidual r{name, static_cast<int>(rows.size()), 0, 0};
  for (const Row* row : rows) {
    const double e = predict(*row) / row->best_s - 1;
    r.rms_error += e * e;
    r.max_error = std::max(r.max_error, std::abs(e));
  }
  if (!rows.empty()) r.rms_error = std::sqrt(r.rms_error / static_cast<double>(rows.size()));
  return r;
}

std::string residual_note(const ParameterResidual& r) {
  return fmt::format("fitted to {} rows: rms error {:.1f}%, max {:.1f}%", r.rows, 100 * r.rms_error,
                     100 * r.max_error);
}

}  // namespace

double predict_row(const Row& row, const sim::DeviceProfile& profile, double latency_per_step_s) {
  if (row.kind != RowKind::collective) return sim::compute_cost(row.op(), profile).time_s;
  scenario::ClusterSpec node;
  node.gpus_per_node = row.collective.ranks;
  node.gpus = row.collective.ranks;
  node.nvlink_latency_s = latency_per_step_s;
  const models::Collective c{row.name, row.collective.collective, models::GroupKind::dp,
                             row.collective.bytes};
  return sim::collective_cost(c, {row.collective.ranks, row.collective.ranks, 1}, node, profile)
      .time_s;
}

FitResult fit_profile(const RowsFile& given, const FitOptions& options) {
  RowsFile f = given;
  f.rows.clear();
  std::vector<Row> left_out;
  for (const Row& r : given.rows) {
    if (r.check == "pass") {
      f.rows.push_back(r);
    } else if (options.leave_out_failed) {
      left_out.push_back(r);
    } else {
      throw std::runtime_error(
          fmt::format("row '{}' failed its check ({}): a profile is not fitted to wrong results "
                      "(--leave-out-failed fits the other rows and names this one in the profile)",
                      r.name, r.check));
    }
  }
  json base;
  if (options.base_profile) {
    base = models::read_json_file(*options.base_profile, "base profile");
    (void)sim::parse_profile(base, *options.base_profile);  // complete and valid
  }
  const bool cpu = f.backend == "cpu";
  FitResult result;
  json params = json::object();
  const auto from_base = [&](const char* key, double fallback, const std::string& note) {
    if (!base.is_null()) return base["parameters"][key];
    return parameter(fallback, "assumption", note);
  };

  // Ceilings.
  const Row& copy = ceiling(f, "copy");
  const Row& big_gemm = ceiling(f, "gemm");
  const double copy_Bps = copy.bytes / copy.best_s;
  const double gemm_flops = big_gemm.flops / big_gemm.best_s;
  if (!base.is_null()) {
    params["bf16_peak_flops"] = base["parameters"]["bf16_peak_flops"];
    params["hbm_bandwidth_Bps"] = base["parameters"]["hbm_bandwidth_Bps"];
  } else {
    params["bf16_peak_flops"] =
        parameter(gemm_flops, "measured",
                  fmt::format("rate of the ceiling GEMM ({}){}", big_gemm.name,
                              cpu ? "; the CPU backend computes in fp32" : ""));
    params["hbm_bandwidth_Bps"] =
        parameter(copy_Bps, "measured", fmt::format("rate of the ceiling copy ({})", copy.name));
  }
  const double peak = params["bf16_peak_flops"]["value"].get<double>();
  const double hbm = params["hbm_bandwidth_Bps"]["value"].get<double>();
  params["fp8_peak_flops"] = cpu ? parameter(0, "measured", "the CPU backend has no fp8 GEMM")
                                 : from_base("fp8_peak_flops", 0, "");
  params["gemm_fp8_efficiency"] = cpu ? parameter(0, "measured", "the CPU backend has no fp8 GEMM")
                                      : from_base("gemm_fp8_efficiency", 0, "");
  params["sustained_clock_fraction"] = parameter(
      1, "measured", "rates were measured under sustained load, so no further clock correction");
  params["nic_efficiency"] =
      from_base("nic_efficiency", 1, "not measured: the calibration loop measures no network");
  params["overlap_compute_share"] = from_base(
      "overlap_compute_share", 0,
      "not measured: the loop times no kernel beside a collective; compute beside communication "
      "runs at full rate");
  params["memory_reserved_bytes"] = from_base(
      "memory_reserved_bytes", 0, "not measured: the calibration loop does not measure memory");
  params["memory_fragmentation"] = from_base(
      "memory_fragmentation", 0, "not measured: the calibration loop does not measure memory");
  params["sms"] = cpu ? parameter(1, "assumption",
                                  "the CPU backend runs a GEMM as one stream of work: no waves")
                      : from_base("sms", 1, "");

  // Memory-bound kernels: t = bytes * a_family + overhead.
  std::vector<const Row*> streaming;
  std::vector<std::string> families;
  for (const Row& r : f.rows) {
    if (!is_streaming(r)) continue;
    streaming.push_back(&r);
    if (std::find(families.begin(), families.end(), r.family) == families.end()) {
      families.push_back(r.family);
    }
  }
  if (streaming.empty()) throw std::runtime_error("calibration rows have no memory-bound kernels");
  const auto nf = static_cast<Eigen::Index>(families.size());
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(streaming.size()), nf + 1);
  Eigen::VectorXd t(static_cast<Eigen::Index>(streaming.size()));
  for (std::size_t i = 0; i < streaming.size(); ++i) {
    const Row& r = *streaming[i];
    const auto row = static_cast<Eigen::Index>(i);
    const auto fam = static_cast<Eigen::Index>(
        std::find(families.begin(), families.end(), r.family) - families.begin());
    a(row, fam) = r.bytes / r.best_s;  // weighted by 1 / t: relative errors
    a(row, nf) = 1 / r.best_s;
    t(row) = 1;
  }
  Eigen::VectorXd x = a.colPivHouseholderQr().solve(t);
  double overhead = x(nf);
  if (overhead < 0) {  // refit without an intercept
    overhead = 0;
    x.head(nf) = a.leftCols(nf).colPivHouseholderQr().solve(t);
  }
  sim::DeviceProfile model;
  model.bf16_flops = peak;
  model.hbm_bw_Bps = hbm;
  model.sustained_clock = 1;
  model.kernel_overhead_s = overhead;
  model.sms = params["sms"]["value"].get<double>();
  model.gemm_tiles = {{1, 1, 1}};
  if (!base.is_null()) {
    model = sim::parse_profile(base, *options.base_profile);
    model.kernel_overhead_s = overhead;
    model.sustained_clock = 1;
    model.memory_bound_efficiency.clear();
  }
  json family_json = json::object();
  for (Eigen::Index i = 0; i < nf; ++i) {
    const double eff = 1 / (x(i) * hbm);
    model.memory_bound_efficiency[families[static_cast<std::size_t>(i)]] = eff;
  }
  model.memory_efficiency = model.memory_bound_efficiency.count("copy") != 0
                                ? model.memory_bound_efficiency["copy"]
                                : 1.0;
  // Coarse families ("norm" over "norm.layer.fwd", "norm.rms.bwd", ...), for ops
  // named less precisely than the kernels measured (the model's "norm.attention").
  std::vector<std::string> coarse;
  for (const auto& fam : families) {
    const std::string head = fam.substr(0, fam.find('.'));
    if (head != fam && std::find(coarse.begin(), coarse.end(), head) == coarse.end() &&
        std::find(families.begin(), families.end(), head) == families.end()) {
      coarse.push_back(head);
    }
  }
  for (const auto& head : coarse) {
    double num = 0;
    double den = 0;
    for (const Row* r : streaming) {
      if (r->family.rfind(head + ".", 0) != 0) continue;
      num += r->bytes * (r->best_s - overhead) / (r->best_s * r->best_s);
      den += r->bytes * r->bytes / (r->best_s * r->best_s);
    }
    model.memory_bound_efficiency[head] = den / (num * hbm);  // 1 / (seconds per byte * hbm)
  }
  std::vector<std::string> all_families = families;
  all_families.insert(all_families.end(), coarse.begin(), coarse.end());
  for (const auto& fam : all_families) {
    std::vector<const Row*> rows;
    for (const Row* r : streaming) {
      if (r->family == fam || r->family.rfind(fam + ".", 0) == 0) rows.push_back(r);
    }
    const auto res = residual("memory_bound_kernels." + fam, rows, [&](const Row& r) {
      models::Op op = r.op();
      op.name = fam;  // a coarse family is judged on every row below it
      return sim::compute_cost(op, model).time_s;
    });
    result.residuals.push_back(res);
    family_json[fam] =
        parameter(model.memory_bound_efficiency[fam], "measured",
                  fmt::format("fraction of {:.3g} GB/s; {}", hbm / 1e9, residual_note(res)));
  }
  const auto all_streaming = residual("kernel_overhead_s", streaming, [&](const Row& r) {
    return sim::compute_cost(r.op(), model).time_s;
  });
  result.residuals.push_back(all_streaming);
  params["kernel_overhead_s"] = parameter(overhead, "measured", residual_note(all_streaming));
  params["memory_efficiency"] = parameter(
      std::min(1.0, model.memory_efficiency), "measured",
      "the plain copy's streaming efficiency; kernels of a measured family use their own");

  // GEMMs: efficiency and k_half by the cost model's own prediction.
  std::vector<const Row*> gemms;
  for (const Row& r : f.rows) {
    if (r.kind == RowKind::kernel && r.op_class == models::OpClass::gemm) gemms.push_back(&r);
  }
  if (gemms.empty()) throw std::runtime_error("calibration rows have no GEMM kernels");
  const auto gemm_loss = [&](double eff, double k_half) {
    model.gemm_efficiency = eff;
    model.gemm_k_half = k_half;
    double loss = 0;
    for (const Row* r : gemms) {
      const double e = std::log(sim::compute_cost(r->op(), model).time_s / r->best_s);
      loss += e * e;
    }
    return loss;
  };
  double best_loss = 1e300;
  double best_eff = 1;
  double best_k_half = 0;
  for (double k_half = 0; k_half <= 4096; k_half = k_half < 1 ? 1 : k_half * 1.25) {
    const double log_eff =
        numeric::golden_section([&](double le) { return gemm_loss(std::exp(le), k_half); },
                                std::log(kMinEfficiency), std::log(1.5));
    const double loss = gemm_loss(std::exp(log_eff), k_half);
    if (loss < best_loss) {
      best_loss = loss;
      best_eff = std::exp(log_eff);
      best_k_half = k_half;
    }
  }
  // Refine k_half between its grid neighbours, the efficiency re-fitted at each.
  const auto best_eff_at = [&](double k_half) {
    return std::exp(
        numeric::golden_section([&](double le) { return gemm_loss(std::exp(le), k_half); },
                                std::log(kMinEfficiency), std::log(1.5)));
  };
  if (best_k_half >= 1) {
    best_k_half = numeric::golden_section([&](double kh) { return gemm_loss(best_eff_at(kh), kh); },
                                          best_k_half / 1.25, best_k_half * 1.25, 40);
    best_eff = best_eff_at(best_k_half);
  }
  model.gemm_efficiency = std::min(1.0, best_eff);
  model.gemm_k_half = best_k_half;
  const auto gemm_res = residual("gemm_efficiency", gemms, [&](const Row& r) {
    return sim::compute_cost(r.op(), model).time_s;
  });
  result.residuals.push_back(gemm_res);
  params["gemm_efficiency"] =
      parameter(model.gemm_efficiency, "measured",
                fmt::format("of the peak, with gemm_k_half; {}", residual_note(gemm_res)));
  params["gemm_k_half"] = parameter(best_k_half, "measured", residual_note(gemm_res));

  // Attention, forward and backward.
  for (const bool backward : {false, true}) {
    std::vector<const Row*> rows;
    for (const Row& r : f.rows) {
      if (r.kind == RowKind::kernel && r.op_class == models::OpClass::attention &&
          r.backward == backward) {
        rows.push_back(&r);
      }
    }
    const char* key = backward ? "attention_bwd_efficiency" : "attention_fwd_efficiency";
    if (rows.empty())
      throw std::runtime_error(fmt::format("calibration rows have no attention {} kernels",
                                           backward ? "backward" : "forward"));
    double num = 0;
    double den = 0;
    for (const Row* r : rows) {
      const double u = r->flops / peak;
      num += u * (r->best_s - overhead) / (r->best_s * r->best_s);
      den += u * u / (r->best_s * r->best_s);
    }
    const double eff = std::clamp(den / num, kMinEfficiency, 1.0);
    (backward ? model.attention_bwd_efficiency : model.attention_fwd_efficiency) = eff;
    const auto res =
        residual(key, rows, [&](const Row& r) { return sim::compute_cost(r.op(), model).time_s; });
    result.residuals.push_back(res);
    params[key] = parameter(
        eff, "measured",
        fmt::format("of the peak; {}{}", residual_note(res),
                    eff != den / num ? fmt::format(" (clamped from {:.3g})", den / num) : ""));
  }

  // Collectives: latency per step and bus bandwidth per size.
  std::vector<const Row*> colls;
  std::set<double> sizes;
  for (const Row& r : f.rows) {
    // The profile has one bus bandwidth curve, for every collective: the all-reduce's
    // (data-parallel gradients); the others' errors are in `calibrate check`.
    if (r.kind == RowKind::collective &&
        r.collective.collective == models::CollectiveKind::all_reduce &&
        r.collective.algorithm == models::Algorithm::ring && !r.collective.device_copy) {
      colls.push_back(&r);
      sizes.insert(r.collective.bytes);
    }
  }
  if (colls.empty() && base.is_null()) {
    throw std::runtime_error(
        "calibration rows have no all-reduce rows: measure collectives, or give a base profile "
        "(--base) whose bus bandwidth curve is kept");
  }
  json curve = json::array();
  double latency = 0;
  std::string transport_note =
      "not measured: no collective rows; the bus bandwidth curve is the base profile's";
  if (colls.empty()) {
    curve = base["nvlink_busbw"];
  } else {
    const std::vector<double> size_list(sizes.begin(), sizes.end());
    double best_raw_busbw = 0;
    for (const Row* r : colls) {
      best_raw_busbw =
          std::max(best_raw_busbw, r->collective.busbw_factor * r->collective.bytes / r->best_s);
    }
    // For a latency, each size's 1 / busbw has a closed form (weighted least
    // squares, kept positive); the latency minimising the total error is searched.
    const auto inverse_bandwidths = [&](double alpha) {
      std::vector<double> inv(size_list.size(), 0);
      for (std::size_t s = 0; s < size_list.size(); ++s) {
        double num = 0;
        double den = 0;
        for (const Row* r : colls) {
          if (r->collective.bytes != size_list[s]) continue;
          const double fb = r->collective.busbw_factor * r->collective.bytes;
          const double m = r->best_s;
          num += fb * (m - r->collective.steps * alpha) / (m * m);
          den += fb * fb / (m * m);
        }
        // Where latency explains the whole time the bandwidth term is negligible, not
        // negative: no more than ten times the best bus bandwidth seen at any size.
        inv[s] = std::max(num / den, 1 / (10 * best_raw_busbw));
      }
      return inv;
    };
    const auto collective_loss = [&](double alpha) {
      const std::vector<double> inv = inverse_bandwidths(alpha);
      double loss = 0;
      for (const Row* r : colls) {
        const auto s = static_cast<std::size_t>(
            std::find(size_list.begin(), size_list.end(), r->collective.bytes) - size_list.begin());
        const double predicted =
            r->collective.steps * alpha + r->collective.busbw_factor * r->collective.bytes * inv[s];
        const double e = predicted / r->best_s - 1;
        loss += e * e;
      }
      return loss;
    };
    double shortest_step = 1e300;
    for (const Row* r : colls)
      shortest_step = std::min(shortest_step, r->best_s / r->collective.steps);
    latency = numeric::golden_section(collective_loss, 0, shortest_step, 100);
    const std::vector<double> inverse = inverse_bandwidths(latency);
    for (std::size_t s = 0; s < size_list.size(); ++s) {
      const double busbw = 1 / inverse[s];
      model.nvlink_busbw.push_back({size_list[s], busbw});
      curve.push_back({size_list[s], busbw});
    }
    const auto coll_res = residual("nvlink_busbw", colls,
                                   [&](const Row& r) { return predict_row(r, model, latency); });
    result.residuals.push_back(coll_res);
    transport_note = fmt::format(
        "collectives on the {} executor: latency per ring step and the bus bandwidth curve above; "
        "{}",
        cpu ? "thread" : "NCCL", residual_note(coll_res));
  }
  result.latency_per_step_s = latency;
  // The link rate the curve is relative to (what a scenario's nvlink_bandwidth scales).
  if (!base.is_null()) {
    params["nvlink_bandwidth_Bps"] = base["parameters"]["nvlink_bandwidth_Bps"];
  } else {
    double fastest = 0;
    for (const auto& point : curve) fastest = std::max(fastest, point[1].get<double>());
    params["nvlink_bandwidth_Bps"] = parameter(
        fastest, "measured",
        fmt::format("no link rate is known for the {} executor: the curve's fastest bus bandwidth "
                    "stands for it",
                    cpu ? "thread" : "NCCL"));
  }

  // Ranks sharing this host (the CPU backend's threads): how much slower each
  // computes when they all do, from the concurrent GEMM against the same GEMM
  // alone.
  json host = nullptr;
  for (const Row& r : f.rows) {
    if (r.kind != RowKind::ceiling || r.family != "gemm.concurrent") continue;
    const auto alone = std::find_if(f.rows.begin(), f.rows.end(), [&r](const Row& g) {
      return g.kind != RowKind::collective && g.family == "gemm" && g.gemm.m == r.gemm.m &&
             g.gemm.n == r.gemm.n && g.gemm.k == r.gemm.k &&
             g.arguments.value("layout", std::string{}) ==
                 r.arguments.value("layout", std::string{});
    });
    if (alone == f.rows.end()) {
      throw std::runtime_error(fmt::format(
          "calibration rows: {} has no GEMM of its shape and layout run alone to compare with",
          r.name));
    }
    const int threads = r.arguments.value("threads", 0);
    if (threads < 2) {
      throw std::runtime_error(
          fmt::format("calibration rows: {}: arguments.threads: expected at least 2", r.name));
    }
    result.concurrent_threads = threads;
    result.concurrent_slowdown = r.best_s / alone->best_s;
    host = {{"concurrent_threads", threads},
            {"concurrent_slowdown", result.concurrent_slowdown},
            {"note", fmt::format("{} threads each running {} at once take {:.3g}x as long as one "
                                 "alone (fastest samples of each)",
                                 threads, alone->name, result.concurrent_slowdown)}};
  }

  // The profile.
  json profile;
  profile["device"] = options.device.empty()
                          ? (cpu ? f.environment.value("cpu", std::string("CPU"))
                                 : f.environment.value("gpu", std::string("GPU")))
                          : options.device;
  profile["kind"] = fmt::format("measured by myriad calibrate ({} backend, {} grid, {})", f.backend,
                                f.grid, f.date);
  profile["sources"] = json::array(
      {fmt::format("myriad calibrate --backend {}: {} rows; {}", f.backend, f.rows.size(),
                   f.environment.value("commit", std::string("commit unknown")))});
  if (!base.is_null()) {
    profile["sources"].push_back(
        fmt::format("unmeasured parameters from {}", *options.base_profile));
  }
  profile["parameters"] = params;
  profile["memory_bound_kernels"] = family_json;
  profile["nvlink_busbw"] = curve;
  // NCCL on the base's hardware runs what the base's curve was measured with (its
  // default picks NVLS where the switch has it); the thread executor is a ring.
  if (!cpu && !base.is_null() && base.value("nvlink_busbw_algorithm", "ring") == "nvls") {
    profile["nvlink_busbw_algorithm"] = "nvls";
    profile["parameters"]["nvlink_ring_busbw_fraction"] =
        base["parameters"]["nvlink_ring_busbw_fraction"];
  }
  profile["gemm_tiles"] =
      !base.is_null()
          ? base["gemm_tiles"]
          : json{{"origin", "assumption"},
                 {"note", "the CPU backend has no output tiles: one 1x1 tile, no waves"},
                 {"tiles", json::array({json::array({1, 1, 1.0})})}};
  json residuals = json::object();
  for (const auto& r : result.residuals) {
    residuals[r.parameter] = {
        {"rows", r.rows}, {"rms_error", r.rms_error}, {"max_error", r.max_error}};
  }
  profile["provenance"] = {
      {"backend", f.backend},
      {"grid", f.grid},
      {"date", f.date},
      {"environment", f.environment},
      {"transport", {{"latency_per_step_s", latency}, {"note", transport_note}}},
      {"host", host},
      {"residuals", residuals}};
  if (!left_out.empty()) {
    json names = json::array();
    for (const Row& r : left_out) {
      names.push_back({{"row", r.name}, {"check", r.check}});
      result.left_out.push_back(r.name);
    }
    profile["provenance"]["left_out"] = {
        {"note", "rows that failed their check, left out of the fit (--leave-out-failed)"},
        {"rows", names}};
  }
  (void)sim::parse_profile(profile, "fitted profile");  // what estimate will accept
  result.profile = std::move(profile);
  return result;
}

}  // namespace myriad::calibration
