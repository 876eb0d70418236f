// Internal to calibration/fit: the fit of one family of profile parameters at a
// time, in the order fit_profile runs them (fit.hpp says what each fits and how).
// Each reads the rows, writes its parameters and residuals, and leaves in
// `model` what it fitted, for the families after it to predict with.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "calibration/fit/fit.hpp"
#include "calibration/measure/rows.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::calibration::fit_detail {

using Member = double sim::DeviceProfile::*;

// The profile's "parameters", written by member (sim::profile_key spells each
// key once, for this writer and the profile reader alike).
class Parameters {
 public:
  void set(Member m, double value, std::string_view origin, std::string_view note);
  // The whole parameter (value, origin, note) as the base profile gives it.
  void copy(Member m, const nlohmann::json& base_profile);
  // The base profile's, where there is one; else `fallback` as an assumption.
  void from_base_or(Member m, const nlohmann::json& base_profile, double fallback,
                    std::string_view note);
  [[nodiscard]] double value(Member m) const;
  [[nodiscard]] const nlohmann::json& json() const { return params_; }

 private:
  nlohmann::json params_ = nlohmann::json::object();
};

// The slowest kernels a profile can describe, as a fraction of the peak: a
// simple CUDA attention ran at 0.1-0.2 % of an H200's bf16 peak (2026-11-30),
// and a fit clamped at 1 % predicted it seven times too fast.
inline constexpr double kMinEfficiency = 1e-4;

// The profile key of a member.
std::string key(Member m);

struct FitState;

// The kernel rows of an op class.
std::vector<const Row*> kernels_of(const RowsFile& f, models::OpClass cls);
// The fastest row of a family, ceiling or kernel, by FLOP rate or bytes rate.
const Row* fastest(const RowsFile& f, const std::string& family, bool by_flops);
// The residual of the profile fitted so far over `rows`, recorded in the result.
ParameterResidual record_residual(FitState& s, const std::string& name,
                                  const std::vector<const Row*>& rows);
// "fitted to N rows: rms error x %, max y %".
std::string residual_note(const ParameterResidual& r);

struct FitState {
  FitState(const RowsFile& passed, bool cpu_backend) : rows(passed), cpu(cpu_backend) {}

  const RowsFile& rows;  // the rows that passed their check
  bool cpu;              // the CPU backend
  nlohmann::json base;   // the base profile, or null
  std::string base_path;
  std::string attention_family;     // FitOptions::attention_family
  std::string attention_reference;  // FitOptions::attention_reference
  Parameters params;
  sim::DeviceProfile model;  // the profile as fitted so far: what the next family predicts with
  FitResult result;
};

// The ceilings (peak and HBM bandwidth, or the base's datasheet values) and the
// parameters the rows cannot measure.
void fit_ceilings(FitState& s);
// Memory-bound kernels: one efficiency per family and coarse family, and the
// per-kernel overhead. Returns the profile's "memory_bound_kernels".
nlohmann::json fit_memory_bound(FitState& s);
// GEMMs (gemm_fit.cpp): efficiency, k_half and latency, the efficiency at most the
// fastest GEMM measured over the peak.
void fit_gemm(FitState& s);
void fit_attention(FitState& s);

struct CollectiveFit {
  nlohmann::json curve = nlohmann::json::array();  // the profile's "nvlink_busbw"
  std::string note;                                // provenance.transport.note
  bool measured = false;  // fitted from rows (else the base profile's curve, kept)
};
CollectiveFit fit_collectives(FitState& s);
// Ranks sharing the host: provenance.host, or null without a concurrent ceiling.
nlohmann::json fit_host(FitState& s);

}  // namespace myriad::calibration::fit_detail
