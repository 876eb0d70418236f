#include "calibration/fit/family_fits.hpp"

#include <fmt/format.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "calibration/environment/environment.hpp"
#include "models/numeric/golden_section.hpp"
#include "sim/cost/compute_cost.hpp"

namespace myriad::calibration::fit_detail {

using nlohmann::json;
using sim::DeviceProfile;

namespace {

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

}  // namespace

// The residual of the profile fitted so far over `rows`, recorded.
ParameterResidual record_residual(FitState& s, const std::string& name,
                                  const std::vector<const Row*>& rows) {
  auto res =
      residual(name, rows, [&](const Row& r) { return sim::compute_cost(r.op(), s.model).time_s; });
  s.result.residuals.push_back(res);
  return res;
}

std::string residual_note(const ParameterResidual& r) {
  return fmt::format("fitted to {} rows: rms error {:.1f}%, max {:.1f}%", r.rows, 100 * r.rms_error,
                     100 * r.max_error);
}

std::vector<const Row*> kernels_of(const RowsFile& f, models::OpClass cls) {
  std::vector<const Row*> rows;
  for (const Row& r : f.rows) {
    if (r.kind == RowKind::kernel && r.op_class == cls) rows.push_back(&r);
  }
  return rows;
}

// The fastest row of a family, ceiling or kernel: the large case run as the
// ceiling is not always the fastest (on the H200, 2026-11-30, a 4096 GEMM ran 11 %
// above the 8192^3 ceiling case, a 256 MiB copy 17 % above the 1 GiB one).
const Row* fastest(const RowsFile& f, const std::string& family, bool by_flops) {
  const Row* best = nullptr;
  const auto rate = [&](const Row& r) { return (by_flops ? r.flops : r.bytes) / r.best_s; };
  for (const Row& r : f.rows) {
    if ((r.kind != RowKind::ceiling && r.kind != RowKind::kernel) || r.family != family ||
        r.best_s <= 0) {
      continue;
    }
    if (best == nullptr || rate(r) > rate(*best)) best = &r;
  }
  return best;
}

// A ceiling as provenance records it: the fastest measured rate, its row, the
// ceiling case's own rate, and the datasheet's (the base's) beside them.
json ceiling_record(const FitState& s, const Row* top, const std::string& family, bool by_flops,
                    Member datasheet) {
  json j = {{"measured", top->flops / top->best_s}, {"row", top->name}};
  if (!by_flops) j["measured"] = top->bytes / top->best_s;
  for (const Row& r : s.rows.rows) {
    if (r.kind == RowKind::ceiling && r.family == family) {
      j["ceiling_case"] = {{"row", r.name}, {"rate", (by_flops ? r.flops : r.bytes) / r.best_s}};
    }
  }
  if (!s.base.is_null()) {
    const double sheet = s.base.at("parameters").at(key(datasheet)).at("value").get<double>();
    j["datasheet"] = sheet;
    j["of_datasheet"] = j["measured"].get<double>() / sheet;
  }
  return j;
}

void fit_ceilings(FitState& s) {
  auto& p = s.params;
  const Row* top_gemm = fastest(s.rows, "gemm", true);
  const Row* top_copy = fastest(s.rows, "copy", false);
  if (top_gemm) {
    s.result.ceilings["gemm"] =
        ceiling_record(s, top_gemm, "gemm", true, &DeviceProfile::bf16_flops);
  }
  if (top_copy) {
    s.result.ceilings["copy"] =
        ceiling_record(s, top_copy, "copy", false, &DeviceProfile::hbm_bw_Bps);
  }
  if (!s.base.is_null()) {
    // The base's datasheet peaks, the measured ones recorded beside them
    // (provenance.ceilings); imported rows (calibrate import) may hold none.
    p.copy(&DeviceProfile::bf16_flops, s.base);
    p.copy(&DeviceProfile::hbm_bw_Bps, s.base);
  } else {
    (void)ceiling(s.rows, "copy");  // a measured grid has its ceiling cases
    (void)ceiling(s.rows, "gemm");
    p.set(&DeviceProfile::bf16_flops, top_gemm->flops / top_gemm->best_s, "measured",
          fmt::format("the fastest GEMM measured ({}){}", top_gemm->name,
                      s.cpu ? "; the CPU backend computes in fp32" : ""));
    p.set(&DeviceProfile::hbm_bw_Bps, top_copy->bytes / top_copy->best_s, "measured",
          fmt::format("the fastest copy measured ({})", top_copy->name));
  }
  for (const Member fp8 : {&DeviceProfile::fp8_flops, &DeviceProfile::gemm_fp8_efficiency}) {
    if (s.cpu) {
      p.set(fp8, 0, "measured", "the CPU backend has no fp8 GEMM");
    } else {
      p.from_base_or(fp8, s.base, 0, "");
    }
  }
  p.set(&DeviceProfile::sustained_clock, 1, "measured",
        "rates were measured under sustained load, so no further clock correction");
  p.from_base_or(&DeviceProfile::nic_efficiency, s.base, 1,
                 "not measured: the calibration loop measures no network");
  p.from_base_or(&DeviceProfile::nccl_channels, s.base, 0,
                 "not measured: the loop runs no collective beside compute; communication "
                 "takes no SMs from it");
  p.from_base_or(&DeviceProfile::memory_reserved_bytes, s.base, 0,
                 "not measured: the calibration loop does not measure memory");
  p.from_base_or(&DeviceProfile::memory_fragmentation, s.base, 0,
                 "not measured: the calibration loop does not measure memory");
  if (s.cpu) {
    p.set(&DeviceProfile::sms, 1, "assumption",
          "the CPU backend runs a GEMM as one stream of work: no waves");
  } else {
    p.from_base_or(&DeviceProfile::sms, s.base, 1, "");
  }

  // What the families after this predict with: the base profile's, or the ceilings.
  if (!s.base.is_null()) {
    s.model = sim::parse_profile(s.base, s.base_path);
  } else {
    s.model.bf16_flops = p.value(&DeviceProfile::bf16_flops);
    s.model.hbm_bw_Bps = p.value(&DeviceProfile::hbm_bw_Bps);
    s.model.sms = p.value(&DeviceProfile::sms);
    s.model.gemm_tiles = {{1, 1, 1}};
  }
  s.model.sustained_clock = 1;
  s.model.memory_bound_efficiency.clear();
}

// With a base profile, what the rows did not measure of the memory-bound
// kernels is the base's: the families not in `fitted`, the copy efficiency and
// (without rows) the per-kernel overhead.
json base_memory_bound(FitState& s, json fitted) {
  const sim::DeviceProfile base = sim::parse_profile(s.base, s.base_path);
  const json& families =
      s.base.contains("memory_bound_kernels") ? s.base["memory_bound_kernels"] : json::object();
  for (const auto& [fam, entry] : families.items()) {
    if (fitted.contains(fam)) continue;
    fitted[fam] = entry;
    const auto it = base.memory_bound_efficiency.find(fam);
    if (it != base.memory_bound_efficiency.end()) s.model.memory_bound_efficiency[fam] = it->second;
  }
  if (!s.params.json().contains(key(&DeviceProfile::kernel_overhead_s))) {
    s.params.copy(&DeviceProfile::kernel_overhead_s, s.base);
    s.model.kernel_overhead_s = base.kernel_overhead_s;
  }
  if (!s.params.json().contains(key(&DeviceProfile::memory_efficiency))) {
    s.params.copy(&DeviceProfile::memory_efficiency, s.base);
    s.model.memory_efficiency = base.memory_efficiency;
  }
  return fitted;
}

// Memory-bound kernels: t = bytes * a_family + overhead, by weighted least
// squares (relative errors), one a per family and one overhead for all.
// Over 100 lines: issue 42 splits it by op family.
// NOLINTNEXTLINE(readability-function-size)
json fit_memory_bound(FitState& s) {
  std::vector<const Row*> streaming;
  std::vector<std::string> families;
  // A copy whose bytes fit in the last-level cache streams from it, not from HBM
  // (the H200's 16 MiB copy of 2026-11-30 ran at 104 % of the HBM datasheet and
  // made the copy efficiency 1): the plain copy's efficiency comes from larger ones.
  // The L2 the harness recorded where the rows say (a GPU run since 2026-12-06),
  // else the base profile's datasheet figure.
  const double recorded = s.cpu ? 0 : calibration::measured_gpu_cache_bytes(s.rows.environment);
  const double cache = recorded > 0       ? recorded
                       : s.base.is_null() ? 0
                                          : s.model.last_level_cache_bytes;
  if (recorded > 0) {
    s.model.last_level_cache_bytes = recorded;
    s.params.set(&DeviceProfile::last_level_cache_bytes, recorded, "measured",
                 "the L2 the calibration harness read from the device "
                 "(cudaDeviceProp::l2CacheSize); copies within it are left out of the memory "
                 "efficiency");
  }
  int cached_copies = 0;
  int copies = 0;
  for (const Row& r : s.rows.rows) {
    if (is_streaming(r) && r.family == "copy") ++copies;
  }
  for (const Row& r : s.rows.rows) {
    if (!is_streaming(r)) continue;
    if (r.family == "copy" && r.bytes <= cache && copies - cached_copies > 1) {
      ++cached_copies;
      continue;
    }
    streaming.push_back(&r);
    if (std::find(families.begin(), families.end(), r.family) == families.end()) {
      families.push_back(r.family);
    }
  }
  if (streaming.empty() && s.base.is_null()) {
    throw std::runtime_error("calibration rows have no memory-bound kernels");
  }
  const double hbm = s.params.value(&DeviceProfile::hbm_bw_Bps);
  // Imported rows may hold a family or two, a row or two each: too few to tell a
  // per-kernel overhead from a rate. The base's overhead is kept then.
  const bool base_overhead = !s.base.is_null() && streaming.size() < families.size() + 2;
  if (streaming.empty()) return base_memory_bound(s, json::object());
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
  Eigen::VectorXd x = Eigen::VectorXd::Zero(nf + 1);
  double overhead = 0;
  if (base_overhead) {
    overhead = s.model.kernel_overhead_s;  // the base's, parsed by fit_ceilings
    for (std::size_t i = 0; i < streaming.size(); ++i) {
      t(static_cast<Eigen::Index>(i)) = 1 - overhead / streaming[i]->best_s;
    }
    x.head(nf) = a.leftCols(nf).colPivHouseholderQr().solve(t);
  } else {
    x = a.colPivHouseholderQr().solve(t);
    overhead = x(nf);
    if (overhead < 0) {  // refit without an intercept
      overhead = 0;
      x.head(nf) = a.leftCols(nf).colPivHouseholderQr().solve(t);
    }
  }
  DeviceProfile& model = s.model;
  model.kernel_overhead_s = overhead;
  for (Eigen::Index i = 0; i < nf; ++i) {
    model.memory_bound_efficiency[families[static_cast<std::size_t>(i)]] = 1 / (x(i) * hbm);
  }
  model.memory_efficiency = model.memory_bound_efficiency.count("copy") != 0
                                ? model.memory_bound_efficiency["copy"]
                                : 1.0;
  // Coarse families ("norm" over "norm.layer.fwd", "norm.rms.bwd", ...), for ops
  // named less precisely than the kernels measured.
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
  json family_json = json::object();
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
    s.result.residuals.push_back(res);
    family_json[fam] = {
        {"value", model.memory_bound_efficiency[fam]},
        {"origin", "measured"},
        {"note", fmt::format("fraction of {:.3g} GB/s; {}", hbm / 1e9, residual_note(res))}};
  }
  const auto all_streaming = record_residual(s, "kernel_overhead_s", streaming);
  if (base_overhead) {
    s.params.copy(&DeviceProfile::kernel_overhead_s, s.base);
  } else {
    s.params.set(&DeviceProfile::kernel_overhead_s, overhead, "measured",
                 residual_note(all_streaming));
  }
  if (model.memory_bound_efficiency.count("copy") != 0 || s.base.is_null()) {
    s.params.set(
        &DeviceProfile::memory_efficiency, std::min(1.0, model.memory_efficiency), "measured",
        fmt::format("the plain copy's streaming efficiency; kernels of a measured family use "
                    "their own{}",
                    cached_copies > 0
                        ? fmt::format("; {} copies within the {:.0f} MiB last-level cache left out",
                                      cached_copies, cache / (1 << 20))
                        : std::string()));
  }
  return s.base.is_null() ? family_json : base_memory_bound(s, family_json);
}

namespace {

struct AttentionChoice {
  std::string family;  // the rows to fit; empty: all of them (one family or none)
  std::string note;    // why that one, for the parameter's note; empty with one family
};

// Which attention kernel of one direction the profile describes, where the rows
// hold several (the SIMT kernel and the tensor-core one, "attention" and
// "attention.mma"; cuDNN's, "attention.cudnn"; an imported one): the fastest, as
// a training stack runs it, unless --attention-kernel names one (which must be
// measured), --reference myriad asks for the fastest of Myriad's own (which must
// be measured), or --reference cudnn for cuDNN's (the fastest where it was not
// measured in this direction: the grid times its forward only). The others stay
// in the rows and the check.
AttentionChoice choose_attention(const FitState& s, const std::vector<const Row*>& rows,
                                 bool backward) {
  std::map<std::string, double> rate;  // family -> mean FLOP/s
  std::map<std::string, int> rows_of;
  for (const Row* r : rows) {
    rate[r->family] += r->flops / r->best_s;
    ++rows_of[r->family];
  }
  std::string measured;
  for (auto& [family, total] : rate) {
    total /= rows_of[family];
    measured += (measured.empty() ? "" : ", ") + family;
  }
  const auto fastest = [&](bool own_only) {
    std::string best;
    for (const auto& [family, r] : rate) {
      if (own_only && !own_attention_family(family)) continue;
      if (best.empty() || r > rate[best]) best = family;
    }
    return best;
  };
  const char* direction = backward ? "backward" : "forward";
  const auto of_measured = [&](const std::string& chosen, const std::string& why) {
    return AttentionChoice{
        chosen, fmt::format("; {}: {}{}", why, chosen,
                            rate.size() > 1 ? fmt::format(" (measured: {})", measured) : "")};
  };
  if (rate.empty()) return {};  // the base's value, or no attention rows at all
  if (!s.attention_family.empty()) {
    if (rate.count(s.attention_family) == 0) {
      throw std::runtime_error(
          fmt::format("--attention-kernel {}: no attention {} rows of that family (measured: {})",
                      s.attention_family, direction, measured));
    }
    return of_measured(s.attention_family, "as asked");
  }
  if (s.attention_reference == "myriad") {
    const std::string own = fastest(true);
    if (own.empty()) {
      throw std::runtime_error(
          fmt::format("--reference myriad: no attention {} rows of Myriad's own kernels "
                      "(attention, attention.mma; measured: {})",
                      direction, measured));
    }
    return of_measured(own, "the fastest of Myriad's own");
  }
  if (s.attention_reference == "cudnn") {
    if (rate.count(kCudnnAttentionFamily) != 0) {
      return of_measured(kCudnnAttentionFamily, "cuDNN's, as asked");
    }
    return of_measured(fastest(false),
                       "cuDNN's not measured in this direction, so the fastest measured");
  }
  if (rate.size() == 1) return {};
  return of_measured(fastest(false), "the fastest of the kernels measured");
}

}  // namespace

// Attention, forward and backward: t = flops / (peak * efficiency) + overhead,
// least squares in relative error.
void fit_attention(FitState& s) {
  const double peak = s.params.value(&DeviceProfile::bf16_flops);
  const double overhead = s.model.kernel_overhead_s;
  for (const bool backward : {false, true}) {
    std::vector<const Row*> rows = kernels_of(s.rows, models::OpClass::attention);
    std::erase_if(rows, [&](const Row* r) { return r->backward != backward; });
    const AttentionChoice choice = choose_attention(s, rows, backward);
    if (!choice.family.empty()) {
      std::erase_if(rows, [&](const Row* r) { return r->family != choice.family; });
    }
    const Member member = backward ? &DeviceProfile::attention_bwd_efficiency
                                   : &DeviceProfile::attention_fwd_efficiency;
    if (rows.empty() && !s.base.is_null()) {
      s.params.copy(member, s.base);  // the model holds the base's already
      continue;
    }
    if (rows.empty()) {
      throw std::runtime_error(fmt::format("calibration rows have no attention {} kernels",
                                           backward ? "backward" : "forward"));
    }
    double num = 0;
    double den = 0;
    for (const Row* r : rows) {
      const double u = r->flops / peak;
      num += u * (r->best_s - overhead) / (r->best_s * r->best_s);
      den += u * u / (r->best_s * r->best_s);
    }
    const double eff = std::clamp(den / num, kMinEfficiency, 1.0);
    s.model.*member = eff;
    const auto res = record_residual(s, key(member), rows);
    s.params.set(
        member, eff, "measured",
        fmt::format("of the peak; {}{}{}", residual_note(res),
                    eff != den / num ? fmt::format(" (clamped from {:.3g})", den / num) : "",
                    choice.note));
  }
}

// Collectives: t = steps * latency + factor * bytes / busbw(size), the latency
// shared, one bus bandwidth per size, over the ring all-reduce rows: the
// profile has one curve, the all-reduce's (data-parallel gradients); the other
// collectives' errors are in `calibrate check`.
CollectiveFit fit_collectives(FitState& s) {
  std::vector<const Row*> colls;
  std::set<double> sizes;
  for (const Row& r : s.rows.rows) {
    if (r.kind == RowKind::collective &&
        r.collective.collective == models::CollectiveKind::all_reduce &&
        r.collective.algorithm == models::CollectiveAlgorithm::ring && !r.collective.device_copy) {
      colls.push_back(&r);
      sizes.insert(r.collective.bytes);
    }
  }
  if (colls.empty() && s.base.is_null()) {
    throw std::runtime_error(
        "calibration rows have no all-reduce rows: measure collectives, or give a base profile "
        "(--base) whose bus bandwidth curve is kept");
  }
  CollectiveFit fit{{}, "not measured: no ring all-reduce rows; the curve is the base profile's"};
  double latency = 0;
  if (colls.empty()) {
    fit.curve = s.base["nvlink_busbw"];
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
      for (std::size_t i = 0; i < size_list.size(); ++i) {
        double num = 0;
        double den = 0;
        for (const Row* r : colls) {
          if (r->collective.bytes != size_list[i]) continue;
          const double fb = r->collective.busbw_factor * r->collective.bytes;
          const double m = r->best_s;
          num += fb * (m - r->collective.steps * alpha) / (m * m);
          den += fb * fb / (m * m);
        }
        // Where latency explains the whole time the bandwidth term is negligible, not
        // negative: no more than ten times the best bus bandwidth seen at any size.
        inv[i] = std::max(num / den, 1 / (10 * best_raw_busbw));
      }
      return inv;
    };
    const auto collective_loss = [&](double alpha) {
      const std::vector<double> inv = inverse_bandwidths(alpha);
      double loss = 0;
      for (const Row* r : colls) {
        const auto i = static_cast<std::size_t>(
            std::find(size_list.begin(), size_list.end(), r->collective.bytes) - size_list.begin());
        const double predicted =
            r->collective.steps * alpha + r->collective.busbw_factor * r->collective.bytes * inv[i];
        const double e = predicted / r->best_s - 1;
        loss += e * e;
      }
      return loss;
    };
    double shortest_step = 1e300;
    for (const Row* r : colls)
      shortest_step = std::min(shortest_step, r->best_s / r->collective.steps);
    latency = models::golden_section(collective_loss, 0, shortest_step, 100);
    const std::vector<double> inverse = inverse_bandwidths(latency);
    s.model.nvlink_busbw.clear();
    for (std::size_t i = 0; i < size_list.size(); ++i) {
      s.model.nvlink_busbw.push_back({size_list[i], 1 / inverse[i]});
      fit.curve.push_back({size_list[i], 1 / inverse[i]});
    }
    const auto res = residual("nvlink_busbw", colls,
                              [&](const Row& r) { return predict_row(r, s.model, latency); });
    s.result.residuals.push_back(res);
    fit.note = fmt::format(
        "collectives on the {} executor: latency per ring step and the bus bandwidth curve above; "
        "{}",
        s.cpu ? "thread" : "NCCL", residual_note(res));
    fit.measured = true;
  }
  s.result.latency_per_step_s = latency;
  // The link rate the curve is relative to (what a scenario's nvlink_bandwidth scales).
  if (!s.base.is_null()) {
    s.params.copy(&DeviceProfile::nvlink_bw_Bps, s.base);
  } else {
    double fastest = 0;
    for (const auto& point : fit.curve) fastest = std::max(fastest, point[1].get<double>());
    s.params.set(&DeviceProfile::nvlink_bw_Bps, fastest, "measured",
                 fmt::format("no link rate is known for the {} executor: the curve's fastest bus "
                             "bandwidth stands for it",
                             s.cpu ? "thread" : "NCCL"));
  }
  return fit;
}

// Ranks sharing this host (the CPU backend's threads): how much slower each
// computes when they all do, from the concurrent GEMM against the same GEMM alone.
json fit_host(FitState& s) {
  json host = nullptr;
  const auto& rows = s.rows.rows;
  for (const Row& r : rows) {
    if (r.kind != RowKind::ceiling || r.family != "gemm.concurrent") continue;
    const auto alone = std::find_if(rows.begin(), rows.end(), [&r](const Row& g) {
      return g.kind != RowKind::collective && g.family == "gemm" && g.gemm.m == r.gemm.m &&
             g.gemm.n == r.gemm.n && g.gemm.k == r.gemm.k &&
             g.arguments.value("layout", std::string{}) ==
                 r.arguments.value("layout", std::string{});
    });
    if (alone == rows.end()) {
      throw std::runtime_error(fmt::format(
          "calibration rows: {} has no GEMM of its shape and layout run alone to compare with",
          r.name));
    }
    const int threads = r.arguments.value("threads", 0);
    if (threads < 2) {
      throw std::runtime_error(
          fmt::format("calibration rows: {}: arguments.threads: expected at least 2", r.name));
    }
    s.result.concurrent_threads = threads;
    s.result.concurrent_slowdown = r.best_s / alone->best_s;
    host = {{"concurrent_threads", threads},
            {"concurrent_slowdown", s.result.concurrent_slowdown},
            {"note", fmt::format("{} threads each running {} at once take {:.3g}x as long as one "
                                 "alone (fastest samples of each)",
                                 threads, alone->name, s.result.concurrent_slowdown)}};
  }
  return host;
}

}  // namespace myriad::calibration::fit_detail
