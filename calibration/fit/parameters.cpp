// A fitted profile's parameters: each with its value, origin and note, set from
// the rows or taken from the base profile (family_fits.hpp).
#include <string>

#include "calibration/fit/family_fits.hpp"

namespace myriad::calibration::fit_detail {

std::string key(Member m) { return std::string(sim::profile_key(m)); }

void Parameters::set(Member m, double value, std::string_view origin, std::string_view note) {
  params_[key(m)] = {{"value", value}, {"origin", origin}, {"note", note}};
}

void Parameters::copy(Member m, const nlohmann::json& base_profile) {
  params_[key(m)] = base_profile.at("parameters").at(key(m));
}

void Parameters::from_base_or(Member m, const nlohmann::json& base_profile, double fallback,
                              std::string_view note) {
  if (base_profile.is_null()) {
    set(m, fallback, "assumption", note);
  } else {
    copy(m, base_profile);
  }
}

double Parameters::value(Member m) const { return params_.at(key(m)).at("value").get<double>(); }

}  // namespace myriad::calibration::fit_detail
