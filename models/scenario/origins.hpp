// Where each value of a scenario came from (a file, line and column, a preset, a
// default), by dotted key. Apart from schema.hpp, whose templates every reader of
// a Scenario would otherwise compile.
#pragma once

#include <map>
#include <string>

#include "models/scenario/location.hpp"

namespace myriad::models::scenario {

// Where each key's value came from, by dotted path. A key absent from it was
// neither given nor defaulted (a derived key before derivation).
using Origins = std::map<std::string, Location>;

}  // namespace myriad::models::scenario
