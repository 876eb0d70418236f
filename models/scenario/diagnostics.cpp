#include "models/scenario/diagnostics.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <numeric>

#include "models/scenario/text_file.hpp"

namespace myriad::models::scenario {

std::string Diagnostic::str() const {
  // Keys and values come from the input: shown with control bytes escaped.
  const char* kind = severity == Severity::error ? "error" : "warning";
  if (key.empty()) {
    return printable(fmt::format("{}: {}: {}", where.str(), kind, message));
  }
  return printable(fmt::format("{}: {}: {}: {}", where.str(), kind, key, message));
}

void Diagnostics::error(Location where, std::string key, std::string message) {
  items_.push_back({Severity::error, std::move(where), std::move(key), std::move(message)});
  ++errors_;
}

void Diagnostics::warning(Location where, std::string key, std::string message) {
  items_.push_back({Severity::warning, std::move(where), std::move(key), std::move(message)});
}

const Diagnostic* Diagnostics::first_error() const {
  for (const auto& d : items_) {
    if (d.severity == Severity::error) return &d;
  }
  return nullptr;
}

std::string Diagnostics::str() const {
  std::string out;
  std::size_t shown = 0;
  for (const auto& d : items_) {
    if (++shown > kMaxShown) {
      out += fmt::format("... and {} more\n", items_.size() - kMaxShown);
      break;
    }
    out += d.str();
    out += '\n';
  }
  return out;
}

namespace {

std::string summary(const Diagnostics& d) {
  return fmt::format("{} problem{} in scenario:\n{}", d.error_count(),
                     d.error_count() == 1 ? "" : "s", d.str());
}

std::string lower(const std::string& s) {
  std::string out = s;
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      const std::size_t substitution = diagonal + (a[i - 1] == b[j - 1] ? 0 : 1);
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, substitution});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

ScenarioError::ScenarioError(Diagnostics diagnostics)
    : std::runtime_error(summary(diagnostics)), diagnostics_(std::move(diagnostics)) {}

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string w = lower(word);
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const auto& c : candidates) {
    const std::string lc = lower(c);
    std::size_t d = edit_distance(w, lc);
    // A candidate that contains the word (or the reverse) is a near miss too: "nic_bw".
    if (d > 2 && w.size() >= 3 &&
        (lc.find(w) != std::string::npos || w.find(lc) != std::string::npos)) {
      d = 2;
    }
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  // Allow about one edit per three characters, at least one, at most three.
  const std::size_t allowed = std::clamp<std::size_t>(w.size() / 3, 1, 3);
  return best_distance <= allowed ? best : std::string{};
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string match = closest_match(word, candidates);
  return match.empty() ? std::string{} : fmt::format(" (did you mean '{}'?)", match);
}

}  // namespace myriad::models::scenario
