// The resolved form of a scenario value, as `myriad check` prints it: exact
// re-parseable text in canonical units, a human form, and where it came from.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "models/scenario/location.hpp"

namespace myriad::models::scenario {

struct Resolved {
  enum class Kind { scalar, map, list };
  Kind kind = Kind::scalar;
  std::string key;                 // empty for list items
  std::string text;                // scalars: exact value in canonical units ("25000000000B/s")
  std::string human;               // scalars: human form ("25 GB/s = 200 Gbps"), or empty
  nlohmann::json json;             // scalars: SI number, bool or string
  Location origin;                 // scalars: where the value was set
  std::vector<Resolved> children;  // maps and lists
};

// YAML text, two-space indented; with `origins`, each value notes where it came from.
std::string to_yaml(const Resolved& root, bool origins);
nlohmann::json to_json(const Resolved& root);

}  // namespace myriad::models::scenario
