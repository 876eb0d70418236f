// A scenario's cross-checks report through this: an error or a warning at the
// place a key was written, or at the scenario file for a defaulted key.
#pragma once

#include <string>
#include <utility>

#include "models/scenario/diagnostics.hpp"
#include "models/scenario/scenario.hpp"

namespace myriad::models::scenario {

// Whether `key` has an origin: written, or derived (a default has none).
inline bool given(const Scenario& s, const std::string& key) {
  return s.origins.find(key) != s.origins.end();
}

// Written in the scenario (not a default, not derived).
inline bool written(const Scenario& s, const std::string& key) {
  const auto it = s.origins.find(key);
  return it != s.origins.end() && it->second.in_file();
}

// Records `key` as derived from other keys.
inline void set_derived(Scenario& s, const std::string& key) {
  s.origins[key] = derived_location();
}

// Where `key` was written, or the scenario file for a defaulted key.
inline Location written_at(const Scenario& s, const std::string& key, const Location& file) {
  const auto it = s.origins.find(key);
  return it != s.origins.end() && it->second.in_file() ? it->second : file;
}

class Checker {
 public:
  Checker(const Scenario& s, Location file, Diagnostics& d)
      : s_(s), file_(std::move(file)), d_(d) {}

  void error(const std::string& key, std::string message) const {
    d_.error(at(key), key, std::move(message));
  }
  void warning(const std::string& key, std::string message) const {
    d_.warning(at(key), key, std::move(message));
  }
  [[nodiscard]] const Scenario& s() const { return s_; }

  // Where a key was written; a defaulted key is reported at the scenario file.
  [[nodiscard]] Location at(const std::string& key) const { return written_at(s_, key, file_); }

 private:
  const Scenario& s_;
  Location file_;
  Diagnostics& d_;
};

}  // namespace myriad::models::scenario
