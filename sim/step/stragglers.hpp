// Stragglers at step level: which nodes run slow during the step simulated.
//
// A straggler process of the scenario (`faults.stragglers`: onsets per 1000
// node-days, a mean duration, a slowdown) alternates on every node between
// healthy spells (exponential, mean 1/rate) and slow ones (mean duration), so
// at a random instant a node is slow with probability
//   p = rate * duration / (1 + rate * duration).
// Each node draws once per process from its own stream of the scenario seed
// (RandomStream, the campaign's generator), so the same seed slows the same
// nodes on every machine. A node slowed by several processes takes the largest
// factor (GPU and link factors apart); a rank group spanning nodes runs at the
// pace of its slowest node. A GPU straggler multiplies its rank group's compute
// and optimizer times; a link straggler divides its NICs' bandwidth.
#pragma once

#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"

namespace myriad::sim {

struct Straggler {
  int node = 0;
  double slowdown = 1;  // compute time factor (gpu) or bandwidth divisor (link), > 1
  std::string process;  // the straggler process's name, or who chose it
  models::scenario::Component component = models::scenario::Component::gpu;  // gpu or link
};

// The nodes slow during one step of this scenario, by node index.
std::vector<Straggler> draw_stragglers(const models::scenario::Scenario& s);

// The probability that a node is inside a slow spell of this process at a random instant.
double straggling_probability(const models::scenario::StragglerProcessSpec& g);

}  // namespace myriad::sim
