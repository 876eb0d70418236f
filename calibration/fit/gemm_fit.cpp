#include "calibration/fit/family_fits.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "models/numeric/golden_section.hpp"
#include "sim/cost/compute_cost.hpp"

namespace myriad::calibration::fit_detail {

using sim::DeviceProfile;

namespace {

struct EfficiencyCap {
  double cap = 1;
  std::string note;  // what bounds it, for the parameter's note
};

// No fitted rate above the fastest GEMM measured: the model's large-GEMM limit
// (deep, whole tiles, no latency) is the efficiency times the peak, so the
// efficiency stays at or below the fastest row's rate over the peak (the H200's
// rows of 2026-11-30 fitted 0.906 of 989 TFLOP/s, 896, where the fastest row
// ran 854).
EfficiencyCap efficiency_cap(const FitState& s) {
  const Row* top = fastest(s.rows, "gemm", true);
  const double peak = s.model.bf16_flops * s.model.sustained_clock;
  if (top == nullptr || peak <= 0) return {};
  const double cap = std::min(1.0, top->flops / top->best_s / peak);
  return {cap, fmt::format("at most the fastest GEMM measured ({}, {:.1f} % of the peak)",
                           top->name, 100 * cap)};
}

}  // namespace

// GEMMs: efficiency, k_half and the fixed latency of a call minimising the
// squared log error of the cost model's own prediction. Small GEMMs decide the
// latency (a 1024^3 GEMM is mostly prologue and epilogue), deep ones k_half.
void fit_gemm(FitState& s) {
  const std::vector<const Row*> gemms = kernels_of(s.rows, models::OpClass::gemm);
  if (gemms.empty() && s.base.is_null()) {
    throw std::runtime_error("calibration rows have no GEMM kernels");
  }
  if (gemms.empty()) {
    for (const Member m : {&DeviceProfile::gemm_efficiency, &DeviceProfile::gemm_k_half,
                           &DeviceProfile::gemm_latency_s}) {
      s.params.copy(m, s.base);
    }
    return;
  }
  DeviceProfile& model = s.model;
  const EfficiencyCap bound = efficiency_cap(s);
  const double cap = bound.cap;
  const std::string& capped = bound.note;
  const auto gemm_loss = [&](double eff, double k_half, double latency) {
    model.gemm_efficiency = eff;
    model.gemm_k_half = k_half;
    model.gemm_latency_s = latency;
    double loss = 0;
    for (const Row* r : gemms) {
      const double e = std::log(sim::compute_cost(r->op(), model).time_s / r->best_s);
      loss += e * e;
    }
    return loss;
  };
  struct Fit {
    double loss = 1e300, eff = 1, k_half = 0, latency = 0;
  };
  const auto best_eff_at = [&](double k_half, double latency) {
    return std::exp(
        models::golden_section([&](double le) { return gemm_loss(std::exp(le), k_half, latency); },
                               std::log(kMinEfficiency), std::log(std::max(cap, kMinEfficiency))));
  };
  // The best efficiency and k_half for one latency: k_half on a grid, refined
  // between its neighbours, the efficiency re-fitted at each.
  const auto fit_at = [&](double latency) {
    Fit best;
    best.latency = latency;
    for (double k_half = 0; k_half <= 4096; k_half = k_half < 1 ? 1 : k_half * 1.25) {
      const double eff = best_eff_at(k_half, latency);
      const double loss = gemm_loss(eff, k_half, latency);
      if (loss < best.loss) best = {loss, eff, k_half, latency};
    }
    if (best.k_half >= 1) {
      best.k_half = models::golden_section(
          [&](double kh) { return gemm_loss(best_eff_at(kh, latency), kh, latency); },
          best.k_half / 1.25, best.k_half * 1.25, 40);
      best.eff = best_eff_at(best.k_half, latency);
      best.loss = gemm_loss(best.eff, best.k_half, latency);
    }
    return best;
  };
  // A GEMM or two (imported rows) cannot tell a latency and k_half from a rate:
  // those stay the base's, and only the efficiency is fitted.
  if (!s.base.is_null() && gemms.size() < 3) {
    const double k_half = model.gemm_k_half;
    const double latency = model.gemm_latency_s;
    model.gemm_efficiency = std::min(cap, best_eff_at(k_half, latency));
    const auto res = record_residual(s, key(&DeviceProfile::gemm_efficiency), gemms);
    s.params.set(&DeviceProfile::gemm_efficiency, model.gemm_efficiency, "measured",
                 fmt::format("of the peak, {}, with the base's gemm_k_half and gemm_latency_s "
                             "({} GEMM rows are too few to fit them); {}",
                             capped, gemms.size(), residual_note(res)));
    s.params.copy(&DeviceProfile::gemm_k_half, s.base);
    s.params.copy(&DeviceProfile::gemm_latency_s, s.base);
    return;
  }
  // The latency on a grid up to the fastest GEMM's whole time, then refined.
  double fastest = 1e300;
  for (const Row* r : gemms) fastest = std::min(fastest, r->best_s);
  const double overhead = model.kernel_overhead_s;
  const double ceiling = std::max(0.0, fastest - overhead);
  Fit best = fit_at(0);
  constexpr int kLatencySteps = 16;
  for (int i = 1; i <= kLatencySteps; ++i) {
    const Fit f = fit_at(ceiling * i / (kLatencySteps + 1));
    if (f.loss < best.loss) best = f;
  }
  const double step = ceiling / (kLatencySteps + 1);
  if (step > 0) {
    const double latency = models::golden_section([&](double l) { return fit_at(l).loss; },
                                                  std::max(0.0, best.latency - step),
                                                  std::min(ceiling, best.latency + step), 30);
    const Fit refined = fit_at(latency);
    if (refined.loss < best.loss) best = refined;
  }
  model.gemm_efficiency = std::min(cap, best.eff);
  model.gemm_k_half = best.k_half;
  model.gemm_latency_s = best.latency;
  const auto res = record_residual(s, key(&DeviceProfile::gemm_efficiency), gemms);
  s.params.set(&DeviceProfile::gemm_efficiency, model.gemm_efficiency, "measured",
               fmt::format("of the peak, {}, with gemm_k_half and gemm_latency_s; {}", capped,
                           residual_note(res)));
  s.params.set(&DeviceProfile::gemm_k_half, best.k_half, "measured", residual_note(res));
  s.params.set(&DeviceProfile::gemm_latency_s, best.latency, "measured",
               fmt::format("beyond kernel_overhead_s; {}", residual_note(res)));
}

}  // namespace myriad::calibration::fit_detail
