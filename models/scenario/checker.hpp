// A scenario's cross-checks report through this: an error or a warning at the
// place a key was written, or at the scenario file for a defaulted key.
#pragma once

#include <string>
#include <utility>

#include "models/scenario/diagnostics.hpp"
#include "models/scenario/scenario.hpp"

namespace myriad::models::scenario {

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
  [[nodiscard]] Location at(const std::string& key) const {
    const auto it = s_.origins.find(key);
    return it != s_.origins.end() && it->second.in_file() ? it->second : file_;
  }

 private:
  const Scenario& s_;
  Location file_;
  Diagnostics& d_;
};

}  // namespace myriad::models::scenario
