// Problems found in a scenario. Loading never stops at the first one: every
// problem is collected with its location and key, then reported together.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "models/scenario/location.hpp"

namespace myriad::models::scenario {

enum class Severity { error, warning };

struct Diagnostic {
  Severity severity = Severity::error;
  Location where;
  std::string key;      // dotted path, e.g. "parallelism.tp"; empty for file-level problems
  std::string message;  // what was expected, what was found

  // "file:line:column: error: key: message"
  [[nodiscard]] std::string str() const;
};

class Diagnostics {
 public:
  void error(Location where, std::string key, std::string message);
  void warning(Location where, std::string key, std::string message);

  [[nodiscard]] bool has_errors() const { return errors_ > 0; }
  [[nodiscard]] int error_count() const { return errors_; }
  [[nodiscard]] const std::vector<Diagnostic>& all() const { return items_; }
  // The first error found; null when there is none.
  [[nodiscard]] const Diagnostic* first_error() const;
  // One line per diagnostic, errors and warnings in the order found; past
  // kMaxShown, a count of the rest.
  [[nodiscard]] std::string str() const;
  static constexpr std::size_t kMaxShown = 100;

 private:
  std::vector<Diagnostic> items_;
  int errors_ = 0;
};

// Thrown by the loader when a scenario has errors; carries all of them.
class ScenarioError : public std::runtime_error {
 public:
  explicit ScenarioError(Diagnostics diagnostics);
  [[nodiscard]] const Diagnostics& diagnostics() const { return diagnostics_; }

 private:
  Diagnostics diagnostics_;
};

// The candidate closest to `word` by edit distance, or "" when none is close
// enough to be a likely typo.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);
// " (did you mean 'x'?)" or "".
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace myriad::models::scenario
