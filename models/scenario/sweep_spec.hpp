// The axes `myriad sweep` varies over a scenario, when the scenario says them
// (its `sweep:` section) rather than the command line (--vary). Each axis is
// one key and its values in --vary's syntax: a list (4,8), an arithmetic range
// (1..4:2) or a geometric one (1024..8192*2). The other verbs ignore it.
#pragma once

#include <string>
#include <vector>

namespace myriad::models::scenario {

struct SweepAxisSpec {
  std::string key;     // a scenario key, such as parallelism.tp
  std::string values;  // "4,8", "1..4:2", "1024..8192*2"
};

struct SweepSpec {
  std::vector<SweepAxisSpec> axes;
  bool zip = false;    // advance the axes together instead of their cartesian product
  std::string pareto;  // objectives of the Pareto front, "days,cost" (empty: none)
};

}  // namespace myriad::models::scenario
