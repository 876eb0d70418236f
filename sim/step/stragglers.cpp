#include "sim/step/stragglers.hpp"

#include <cstdint>

#include "models/random/random_stream.hpp"

namespace myriad::sim {
namespace {

// Streams of the step-level draw, apart from the campaign's (indices below 2^32).
constexpr std::uint64_t kStreamBase = std::uint64_t{1} << 40U;

}  // namespace

double straggling_probability(const models::scenario::StragglerProcessSpec& g) {
  constexpr double kDay = 86400.0;
  const double onsets_per_s = g.per_1000_node_days / (1000.0 * kDay);
  const double slow = onsets_per_s * g.duration_s;
  return slow / (1 + slow);
}

std::vector<Straggler> draw_stragglers(const models::scenario::Scenario& s) {
  std::vector<Straggler> slow;
  const auto& processes = s.faults.stragglers;
  if (processes.empty()) return slow;
  for (int node = 0; node < s.cluster.nodes(); ++node) {
    models::RandomStream random(s.seed, kStreamBase + static_cast<std::uint64_t>(node));
    Straggler gpu{node, 1, "", models::scenario::Component::gpu};
    Straggler link{node, 1, "", models::scenario::Component::link};
    for (const auto& g : processes) {
      // One draw per process and node, whether it hits or not: the draws of a node
      // do not depend on the other processes' outcomes.
      const bool hit = random.uniform() < straggling_probability(g);
      Straggler& worst = g.component == models::scenario::Component::link ? link : gpu;
      if (hit && g.slowdown > worst.slowdown) worst = {node, g.slowdown, g.name, g.component};
    }
    for (const Straggler& w : {gpu, link}) {
      if (w.slowdown > 1) slow.push_back(w);
    }
  }
  return slow;
}

}  // namespace myriad::sim
