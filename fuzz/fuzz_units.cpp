// Fuzzes the unit parser: the input is one quantity ("400Gbps", "1:7", "90%"),
// parsed as every dimension.
//
// Properties: an accepted value is finite and in its dimension's range, and its
// exact form (format_exact, what `myriad check` prints) parses back to the same
// double.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include <fmt/format.h>

#include "fuzz/property.hpp"
#include "models/scenario/units.hpp"

namespace {

using myriad::models::scenario::Dimension;

constexpr Dimension kDimensions[] = {Dimension::count,     Dimension::time,      Dimension::bytes,
                                     Dimension::bandwidth, Dimension::flop_rate, Dimension::ratio,
                                     Dimension::fraction};

bool in_range(double v, Dimension d) {
  if (!std::isfinite(v)) return false;
  if (d == Dimension::ratio) return v >= 1;
  if (d == Dimension::fraction) return v >= 0 && v <= 1;
  return v >= 0;
}

void check(std::string_view text, Dimension d) {
  const auto parsed = myriad::models::scenario::parse_quantity(text, d);
  if (!std::holds_alternative<double>(parsed)) return;
  const double v = std::get<double>(parsed);
  const auto name = myriad::models::scenario::dimension_name(d);
  myriad::fuzz::require(in_range(v, d), fmt::format("{}: accepted value out of range", name),
                        fmt::format("'{}' gives {}", text, v));
  (void)myriad::models::scenario::format_human(v, d);
  const std::string exact = myriad::models::scenario::format_exact(v, d);
  const auto again = myriad::models::scenario::parse_quantity(exact, d);
  myriad::fuzz::require(std::holds_alternative<double>(again) && std::get<double>(again) == v,
                        fmt::format("{}: format_exact does not parse back", name),
                        fmt::format("'{}' gives {}, printed '{}'", text, v, exact));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const Dimension d : kDimensions) check(text, d);
  return 0;
}
