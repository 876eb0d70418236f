#include "sim/planning/sweep.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

namespace myriad::sim {
namespace {

constexpr std::size_t kMaxAxisValues = 100000;

bool parse_number(const std::string& text, double& out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc{} && ptr == end && std::isfinite(out);
}

std::string number_text(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:g}", v);
}

// "A..B", "A..B:S" (arithmetic) or "A..B*F" (geometric); false when not a range.
bool expand_range(const std::string& text, std::vector<std::string>& values) {
  const std::size_t dots = text.find("..");
  if (dots == std::string::npos) return false;
  const std::string from_text = text.substr(0, dots);
  std::string rest = text.substr(dots + 2);
  char kind = '+';
  double step = 1;
  if (const std::size_t at = rest.find_first_of(":*"); at != std::string::npos) {
    kind = rest[at] == ':' ? '+' : '*';
    if (!parse_number(rest.substr(at + 1), step)) {
      throw std::invalid_argument(
          fmt::format("'{}': the step after '{}' must be a number", text, rest[at]));
    }
    rest = rest.substr(0, at);
  }
  double from = 0;
  double to = 0;
  if (!parse_number(from_text, from) || !parse_number(rest, to)) {
    throw std::invalid_argument(fmt::format(
        "'{}': a range is FROM..TO, FROM..TO:STEP or FROM..TO*FACTOR, with numbers", text));
  }
  if (to < from)
    throw std::invalid_argument(fmt::format("'{}': the range ends before it starts", text));
  if (kind == '+' && step <= 0) {
    throw std::invalid_argument(fmt::format("'{}': the step must be above 0", text));
  }
  if (kind == '*' && (step <= 1 || from <= 0)) {
    throw std::invalid_argument(
        fmt::format("'{}': a geometric range needs a factor above 1 and a start above 0", text));
  }
  const double tolerance = 1e-9 * std::max(1.0, std::abs(to));
  for (double v = from; v <= to + tolerance; v = kind == '+' ? v + step : v * step) {
    if (values.size() >= kMaxAxisValues) {
      throw std::invalid_argument(
          fmt::format("'{}': more than {} values in one axis", text, kMaxAxisValues));
    }
    values.push_back(number_text(v));
  }
  return true;
}

// Throws when the axes span more than `limit` configurations: how many, each
// axis's length, the longest, and the rate behind kMostSweepConfigs.
void check_count(const std::vector<SweepAxis>& axes, bool zip, std::size_t limit) {
  double count = zip ? static_cast<double>(axes.front().values.size()) : 1;
  std::vector<std::string> lengths;
  const SweepAxis* longest = &axes.front();
  for (const auto& a : axes) {
    if (!zip) count *= static_cast<double>(a.values.size());
    lengths.push_back(fmt::format("{} {}", a.key, a.values.size()));
    if (a.values.size() > longest->values.size()) longest = &a;
  }
  if (count <= static_cast<double>(limit)) return;
  throw std::invalid_argument(fmt::format(
      "the axes span {:.0f} configurations ({}{}), more than the limit of {} (--max-configs; "
      "at most {}, as a sweep estimates about 1,000 a second): narrow --vary {} ({} values)",
      count, zip ? "zipped: " : "", fmt::join(lengths, zip ? ", " : " x "), limit,
      kMostSweepConfigs, longest->key, longest->values.size()));
}

// The first comma from `start` outside brackets and braces, or the end: a value
// may be a YAML list or mapping itself ([core_attn, attn_norm]).
std::size_t top_level_comma(const std::string& spec, std::size_t start) {
  int depth = 0;
  for (std::size_t i = start; i < spec.size(); ++i) {
    const char c = spec[i];
    if (c == '[' || c == '{') ++depth;
    if ((c == ']' || c == '}') && depth > 0) --depth;
    if (c == ',' && depth == 0) return i;
  }
  return spec.size();
}

}  // namespace

SweepAxis parse_axis(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw std::invalid_argument(
        fmt::format("--vary '{}': expected KEY=V1,V2,... or KEY=FROM..TO[:STEP|*FACTOR]", text));
  }
  SweepAxis axis{text.substr(0, eq), {}};
  const std::string spec = text.substr(eq + 1);
  try {
    if (!expand_range(spec, axis.values)) {
      std::size_t start = 0;
      while (start <= spec.size()) {
        const std::size_t comma = top_level_comma(spec, start);
        std::string value = spec.substr(start, comma - start);
        const auto first = value.find_first_not_of(' ');
        const auto last = value.find_last_not_of(' ');
        value = first == std::string::npos ? "" : value.substr(first, last - first + 1);
        if (value.empty()) throw std::invalid_argument(fmt::format("'{}': an empty value", spec));
        axis.values.push_back(value);
        start = comma + 1;
      }
    }
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(fmt::format("--vary {}: {}", axis.key, e.what()));
  }
  return axis;
}

std::vector<std::vector<std::string>> expand_axes(const std::vector<SweepAxis>& axes, bool zip,
                                                  std::size_t limit) {
  std::set<std::string> keys;
  for (const auto& a : axes) {
    if (!keys.insert(a.key).second) {
      throw std::invalid_argument(fmt::format("--vary {}: the key is varied twice", a.key));
    }
  }
  std::vector<std::vector<std::string>> out;
  if (axes.empty()) return {{}};
  if (zip) {
    for (const auto& a : axes) {
      if (a.values.size() != axes.front().values.size()) {
        throw std::invalid_argument(
            fmt::format("--zip: every axis needs as many values; {} has {}, {} has {}",
                        axes.front().key, axes.front().values.size(), a.key, a.values.size()));
      }
    }
    check_count(axes, zip, limit);
    for (std::size_t i = 0; i < axes.front().values.size(); ++i) {
      std::vector<std::string> config;
      config.reserve(axes.size());
      for (const auto& a : axes) config.push_back(a.key + "=" + a.values[i]);
      out.push_back(std::move(config));
    }
    return out;
  }
  check_count(axes, zip, limit);
  std::vector<std::size_t> at(axes.size(), 0);
  while (true) {
    std::vector<std::string> config;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      config.push_back(axes[i].key + "=" + axes[i].values[at[i]]);
    }
    out.push_back(std::move(config));
    // The last axis varies fastest.
    std::size_t i = axes.size();
    while (i > 0 && ++at[i - 1] == axes[i - 1].values.size()) at[--i] = 0;
    if (i == 0) break;
  }
  return out;
}

const std::vector<Objective>& known_objectives() {
  static const std::vector<Objective> objectives = {
      {"days", false},      {"gpu-hours", false},   {"cost", false}, {"gpus", false},
      {"step-time", false}, {"tokens-per-s", true}, {"mfu", true},   {"memory", false},
  };
  return objectives;
}

std::vector<Objective> parse_objectives(const std::string& text) {
  std::vector<Objective> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string name = text.substr(start, comma - start);
    const auto& known = known_objectives();
    const auto it = std::find_if(known.begin(), known.end(),
                                 [&](const Objective& o) { return o.name == name; });
    if (it == known.end()) {
      std::string list;
      for (const auto& o : known) list += (list.empty() ? "" : ", ") + o.name;
      throw std::invalid_argument(fmt::format("unknown objective '{}'; known: {}", name, list));
    }
    if (std::any_of(out.begin(), out.end(), [&](const Objective& o) { return o.name == name; })) {
      throw std::invalid_argument(fmt::format("objective '{}' named twice", name));
    }
    out.push_back(*it);
    start = comma + 1;
  }
  return out;
}

namespace {

// Every candidate against every other: O(n^2), for values sorting cannot order (NaN).
std::vector<bool> front_pairwise(const std::vector<std::vector<double>>& points,
                                 const std::vector<Objective>& objectives,
                                 const std::vector<bool>& candidate) {
  const std::size_t n = points.size();
  std::vector<bool> front(n, false);
  // a at least as good as b in every objective and better in one.
  const auto dominates = [&](const std::vector<double>& a, const std::vector<double>& b) {
    bool better = false;
    for (std::size_t k = 0; k < objectives.size(); ++k) {
      const double x = objectives[k].maximize ? -a[k] : a[k];
      const double y = objectives[k].maximize ? -b[k] : b[k];
      if (x > y) return false;
      if (x < y) better = true;
    }
    return better;
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (!candidate[i]) continue;
    bool dominated = false;
    for (std::size_t j = 0; j < n && !dominated; ++j) {
      dominated = j != i && candidate[j] && dominates(points[j], points[i]);
    }
    front[i] = !dominated;
  }
  return front;
}

// The candidates sorted best first, objective by objective (all minimized): a
// point can only be dominated by one before it, and where it is, by one on the
// front; so each is checked against the front so far, O(n log n + n x front),
// and with two objectives against the best second value before it, O(n log n).
// A sweep of 100,000 configurations with two objectives took minutes pairwise.
std::vector<bool> front_sorted(std::vector<std::vector<double>> points,
                               const std::vector<Objective>& objectives,
                               const std::vector<bool>& candidate) {
  for (auto& p : points) {
    for (std::size_t k = 0; k < objectives.size(); ++k)
      p[k] = objectives[k].maximize ? -p[k] : p[k];
  }
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (candidate[i]) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return points[a] < points[b]; });
  std::vector<bool> front(points.size(), false);
  // a no worse than b everywhere (the order makes it better somewhere unless equal).
  const auto no_worse = [&](const std::vector<double>& a, const std::vector<double>& b) {
    for (std::size_t k = 0; k < a.size(); ++k) {
      if (a[k] > b[k]) return false;
    }
    return a != b;
  };
  std::vector<std::size_t> kept;
  double best_second = std::numeric_limits<double>::infinity();  // before the run of equals
  for (std::size_t at = 0; at < order.size(); ++at) {
    const std::vector<double>& p = points[order[at]];
    if (at > 0 && points[order[at - 1]] != p && objectives.size() == 2) {
      best_second = std::min(best_second, points[order[at - 1]][1]);
    }
    const bool dominated = objectives.size() == 2
                               ? best_second <= p[1]
                               : std::any_of(kept.begin(), kept.end(),
                                             [&](std::size_t q) { return no_worse(points[q], p); });
    if (dominated) continue;
    front[order[at]] = true;
    kept.push_back(order[at]);
  }
  return front;
}

}  // namespace

std::vector<bool> pareto_front(const std::vector<std::vector<double>>& points,
                               const std::vector<Objective>& objectives,
                               const std::vector<bool>& candidate) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!candidate[i]) continue;
    for (const double v : points[i]) {
      if (std::isnan(v)) return front_pairwise(points, objectives, candidate);
    }
  }
  return front_sorted(points, objectives, candidate);
}

}  // namespace myriad::sim
