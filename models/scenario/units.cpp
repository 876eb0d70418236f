#include "models/scenario/units.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <span>

namespace myriad::models::scenario {
namespace {

// value = number * 10^exp10 * multiplier. The power of ten is applied to the
// decimal text before conversion so that "2.039TB/s" is exactly 2.039e12, and
// multipliers are exact in binary (1/8, powers of 1024, 60, 3600, 86400).
struct UnitFactor {
  std::string_view suffix;
  int exp10;
  double multiplier;
};

constexpr double kKi = 1024.0;
constexpr double kBit = 1.0 / 8;
constexpr std::array kCountUnits{UnitFactor{"", 0, 1},  UnitFactor{"k", 3, 1},
                                 UnitFactor{"K", 3, 1}, UnitFactor{"M", 6, 1},
                                 UnitFactor{"B", 9, 1}, UnitFactor{"T", 12, 1}};
constexpr std::array kTimeUnits{UnitFactor{"ns", -9, 1},  UnitFactor{"us", -6, 1},
                                UnitFactor{"ms", -3, 1},  UnitFactor{"s", 0, 1},
                                UnitFactor{"min", 0, 60}, UnitFactor{"h", 0, 3600},
                                UnitFactor{"d", 0, 86400}};
constexpr std::array kByteUnits{UnitFactor{"B", 0, 1},
                                UnitFactor{"kB", 3, 1},
                                UnitFactor{"KB", 3, 1},
                                UnitFactor{"MB", 6, 1},
                                UnitFactor{"GB", 9, 1},
                                UnitFactor{"TB", 12, 1},
                                UnitFactor{"PB", 15, 1},
                                UnitFactor{"KiB", 0, kKi},
                                UnitFactor{"MiB", 0, kKi* kKi},
                                UnitFactor{"GiB", 0, kKi* kKi* kKi},
                                UnitFactor{"TiB", 0, kKi* kKi* kKi* kKi}};
constexpr std::array kBandwidthUnits{UnitFactor{"bps", 0, kBit},
                                     UnitFactor{"Kbps", 3, kBit},
                                     UnitFactor{"kbps", 3, kBit},
                                     UnitFactor{"Mbps", 6, kBit},
                                     UnitFactor{"Gbps", 9, kBit},
                                     UnitFactor{"Tbps", 12, kBit},
                                     UnitFactor{"Gb/s", 9, kBit},
                                     UnitFactor{"Tb/s", 12, kBit},
                                     UnitFactor{"B/s", 0, 1},
                                     UnitFactor{"kB/s", 3, 1},
                                     UnitFactor{"KB/s", 3, 1},
                                     UnitFactor{"MB/s", 6, 1},
                                     UnitFactor{"GB/s", 9, 1},
                                     UnitFactor{"TB/s", 12, 1},
                                     UnitFactor{"KiB/s", 0, kKi},
                                     UnitFactor{"MiB/s", 0, kKi* kKi},
                                     UnitFactor{"GiB/s", 0, kKi* kKi* kKi}};
constexpr std::array kFlopUnits{UnitFactor{"FLOPS", 0, 1},   UnitFactor{"FLOP/s", 0, 1},
                                UnitFactor{"GFLOPS", 9, 1},  UnitFactor{"GFLOP/s", 9, 1},
                                UnitFactor{"TFLOPS", 12, 1}, UnitFactor{"TFLOP/s", 12, 1},
                                UnitFactor{"PFLOPS", 15, 1}, UnitFactor{"PFLOP/s", 15, 1}};

std::span<const UnitFactor> units_of(Dimension d) {
  switch (d) {
    case Dimension::count:
      return kCountUnits;
    case Dimension::time:
      return kTimeUnits;
    case Dimension::bytes:
      return kByteUnits;
    case Dimension::bandwidth:
      return kBandwidthUnits;
    case Dimension::flop_rate:
      return kFlopUnits;
    case Dimension::ratio:
    case Dimension::fraction:
      return {};
  }
  return {};
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits "2.5 GB/s" into 2.5 * 10^exp10 and "GB/s". Returns false when no number leads.
bool split_number(std::string_view text, double& number, std::string_view& rest, int exp10 = 0) {
  const char* first = text.data();
  const char* last = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(first, last, number);
  if (ec != std::errc{} || ptr == first) return false;
  // Reject forms from_chars accepts but a person would not write as a quantity.
  if (!std::isfinite(number)) return false;
  rest = trim(std::string_view(ptr, static_cast<std::size_t>(last - ptr)));
  if (exp10 == 0) return true;
  // Re-read the number with the unit's power of ten folded into its exponent.
  std::string_view digits(first, static_cast<std::size_t>(ptr - first));
  int exponent = exp10;
  if (const auto e = digits.find_first_of("eE"); e != std::string_view::npos) {
    int written = 0;
    const auto [eptr, eec] = std::from_chars(digits.data() + e + 1 + (digits[e + 1] == '+'),
                                             digits.data() + digits.size(), written);
    // Past +-1000 the number is 0 or infinite anyway; the bound keeps the sum an int.
    if (eec != std::errc{} || written > 1000 || written < -1000) return false;
    exponent += written;
    digits = digits.substr(0, e);
  }
  const std::string scaled = std::string(digits) + "e" + std::to_string(exponent);
  const auto [sptr, sec] = std::from_chars(scaled.data(), scaled.data() + scaled.size(), number);
  return sec == std::errc{} && std::isfinite(number);
}

std::string accepted_units(Dimension d) {
  std::string out;
  for (const auto& u : units_of(d)) {
    if (u.suffix.empty()) continue;
    if (!out.empty()) out += ", ";
    out += u.suffix;
  }
  return out;
}

ParseFailure fail(std::string_view text, Dimension d) {
  return ParseFailure{
      fmt::format("expected {} ({}), found '{}'", dimension_name(d), dimension_help(d), text)};
}

std::variant<double, ParseFailure> parse_ratio(std::string_view text) {
  const auto colon = text.find(':');
  double value = 0;
  if (colon == std::string_view::npos) {
    std::string_view rest;
    if (!split_number(text, value, rest) || !rest.empty()) return fail(text, Dimension::ratio);
  } else {
    double a = 0;
    double b = 0;
    std::string_view rest_a;
    std::string_view rest_b;
    if (!split_number(trim(text.substr(0, colon)), a, rest_a) || !rest_a.empty() ||
        !split_number(trim(text.substr(colon + 1)), b, rest_b) || !rest_b.empty() || a <= 0 ||
        b <= 0) {
      return fail(text, Dimension::ratio);
    }
    value = a > b ? a / b : b / a;
  }
  if (value < 1) {
    return ParseFailure{fmt::format(
        "expected a ratio >= 1 (oversubscription: downlink to uplink bandwidth), found '{}'",
        text)};
  }
  return value;
}

std::variant<double, ParseFailure> parse_fraction(std::string_view text) {
  double value = 0;
  std::string_view rest;
  if (!split_number(text, value, rest)) return fail(text, Dimension::fraction);
  if (rest == "%") {
    value /= 100;
  } else if (!rest.empty()) {
    return fail(text, Dimension::fraction);
  }
  if (value < 0 || value > 1) return fail(text, Dimension::fraction);
  return value;
}

}  // namespace

std::string_view canonical_unit(Dimension d) {
  switch (d) {
    case Dimension::count:
      return "";
    case Dimension::time:
      return "s";
    case Dimension::bytes:
      return "B";
    case Dimension::bandwidth:
      return "B/s";
    case Dimension::flop_rate:
      return "FLOP/s";
    case Dimension::ratio:
      return ":1";
    case Dimension::fraction:
      return "";
  }
  return "";
}

std::string_view dimension_name(Dimension d) {
  switch (d) {
    case Dimension::count:
      return "a number";
    case Dimension::time:
      return "a duration";
    case Dimension::bytes:
      return "a size";
    case Dimension::bandwidth:
      return "a bandwidth";
    case Dimension::flop_rate:
      return "a FLOP rate";
    case Dimension::ratio:
      return "a ratio";
    case Dimension::fraction:
      return "a fraction";
  }
  return "";
}

std::string_view dimension_help(Dimension d) {
  switch (d) {
    case Dimension::count:
      return "e.g. 300e9 or 300B; suffixes k, M, B, T";
    case Dimension::time:
      return "a number with ns, us, ms, s, min, h or d, e.g. 2us";
    case Dimension::bytes:
      return "a number with B, kB, MB, GB, TB, KiB, MiB, GiB or TiB, e.g. 80GiB";
    case Dimension::bandwidth:
      return "a number with bps, Mbps, Gbps, Tbps (bits) or B/s, MB/s, GB/s, TB/s, GiB/s "
             "(bytes), e.g. 400Gbps or 50GB/s";
    case Dimension::flop_rate:
      return "a number with FLOPS, GFLOPS, TFLOPS or PFLOPS, e.g. 312TFLOPS";
    case Dimension::ratio:
      return "down:up such as 1:1 or 1:7, or a number >= 1";
    case Dimension::fraction:
      return "a number in [0, 1] or a percentage such as 90%";
  }
  return "";
}

namespace {

// The magnitudes every quantity keeps to, zero aside, so that no computation
// overflows or divides by a denormal: a 1e-320 Gbps NIC gave infinite step times.
struct Magnitude {
  double smallest;
  double largest;
};

Magnitude magnitude_of(Dimension d) {
  switch (d) {
    case Dimension::time:
      return {1e-12, 1e10};  // a picosecond to three centuries
    case Dimension::bytes:
      return {1e-3, 1e18};
    case Dimension::bandwidth:
      return {1e3, 1e16};  // 8 kbps to 80 Pbps
    case Dimension::flop_rate:
      return {1e6, 1e20};
    case Dimension::count:
    case Dimension::ratio:
    case Dimension::fraction:
      return {1e-9, 1e18};
  }
  return {1e-9, 1e18};
}

std::variant<double, ParseFailure> within_magnitude(std::variant<double, ParseFailure> parsed,
                                                    std::string_view text, Dimension d) {
  const double* value = std::get_if<double>(&parsed);
  if (value == nullptr) return parsed;
  const Magnitude m = magnitude_of(d);
  const std::string unit(canonical_unit(d));
  if (!std::isfinite(*value) ||
      (*value != 0 && (std::fabs(*value) < m.smallest || std::fabs(*value) > m.largest))) {
    return ParseFailure{fmt::format("expected 0 or a {} between {:g}{} and {:g}{}, found '{}'",
                                    dimension_name(d).substr(2), m.smallest, unit, m.largest, unit,
                                    text)};
  }
  return parsed;
}

std::variant<double, ParseFailure> parse_unchecked(std::string_view raw, Dimension d);

}  // namespace

std::variant<double, ParseFailure> parse_quantity(std::string_view raw, Dimension d) {
  return within_magnitude(parse_unchecked(raw, d), trim(raw), d);
}

namespace {

std::variant<double, ParseFailure> parse_unchecked(std::string_view raw, Dimension d) {
  const std::string_view text = trim(raw);
  if (text.empty()) return fail(raw, d);
  if (d == Dimension::ratio) return parse_ratio(text);
  if (d == Dimension::fraction) return parse_fraction(text);

  double number = 0;
  std::string_view suffix;
  if (!split_number(text, number, suffix)) return fail(text, d);
  if (suffix.empty() && d != Dimension::count) {
    return ParseFailure{
        fmt::format("'{}' has no unit: write {} ({})", text, dimension_name(d), dimension_help(d))};
  }
  for (const auto& u : units_of(d)) {
    if (u.suffix == suffix) {
      double scaled = 0;
      std::string_view ignored;
      if (!split_number(text, scaled, ignored, u.exp10)) return fail(text, d);
      const double value = scaled * u.multiplier;
      if (value < 0) {
        return ParseFailure{fmt::format("expected a non-negative {}, found '{}'",
                                        dimension_name(d).substr(2), text)};
      }
      return value;
    }
  }
  return ParseFailure{fmt::format("unknown unit '{}' in '{}': {} takes {}", suffix, text,
                                  dimension_name(d), accepted_units(d))};
}

}  // namespace

namespace {

std::string compact(double v) {
  // Up to 4 significant digits, without trailing zeros: 25, 2.5, 1.234.
  return fmt::format("{:.4g}", v);
}

std::string with_prefix(double v, std::string_view unit, double base,
                        std::span<const std::string_view> prefixes) {
  std::size_t i = 0;
  double x = v;
  while (i + 1 < prefixes.size() && std::fabs(x) >= base) {
    x /= base;
    ++i;
  }
  return fmt::format("{} {}{}", compact(x), prefixes[i], unit);
}

constexpr std::array<std::string_view, 6> kDecimal{"", "k", "M", "G", "T", "P"};
constexpr std::array<std::string_view, 5> kBinary{"", "Ki", "Mi", "Gi", "Ti"};

bool is_binary_multiple(double bytes) { return bytes >= kKi && std::fmod(bytes, kKi) == 0.0; }

}  // namespace

std::string format_human(double v, Dimension d) {
  switch (d) {
    case Dimension::count: {
      constexpr std::array<std::string_view, 5> names{"", "thousand", "million", "billion",
                                                      "trillion"};
      std::string out = with_prefix(v, "", 1000, names);
      while (!out.empty() && out.back() == ' ') out.pop_back();
      return out;
    }
    case Dimension::time: {
      if (v == 0) return "0 s";
      if (v < 1e-6) return compact(v * 1e9) + " ns";
      if (v < 1e-3) return compact(v * 1e6) + " us";
      if (v < 1) return compact(v * 1e3) + " ms";
      if (v < 120) return compact(v) + " s";
      if (v < 2 * 3600) return compact(v / 60) + " min";
      if (v < 2 * 86400) return compact(v / 3600) + " h";
      return compact(v / 86400) + " d";
    }
    case Dimension::bytes:
      return is_binary_multiple(v) ? with_prefix(v, "B", kKi, kBinary)
                                   : with_prefix(v, "B", 1000, kDecimal);
    case Dimension::bandwidth:
      return with_prefix(v, "B/s", 1000, kDecimal) + " = " +
             with_prefix(v * 8, "bps", 1000, kDecimal);
    case Dimension::flop_rate:
      return with_prefix(v, "FLOP/s", 1000, kDecimal);
    case Dimension::ratio:
      return compact(v) + ":1";
    case Dimension::fraction:
      return compact(v * 100) + "%";
  }
  return compact(v);
}

std::string format_exact(double v, Dimension d) {
  if (d == Dimension::ratio) return fmt::format("{}:1", v);
  return fmt::format("{}{}", v, canonical_unit(d));
}

}  // namespace myriad::models::scenario
