#include "sim/analytic/program_phases.hpp"

#include <algorithm>

#include "sim/analytic/host_wait.hpp"

namespace myriad::sim {

ProgramPhases program_phases(const models::LayerProgram& lp, Pricer& pricer,
                             const LayerOverlap& overlap, double runs_per_step) {
  ProgramPhases p;
  p.phase = {&lp.forward, &lp.backward, &lp.recompute};
  double host = 0;
  double gpu = 0;
  std::array<double, 3> excess{};
  double excess_total = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    p.priced[i] = pricer.price(*p.phase[i], runs_per_step);
    p.exposed[i] = exposed(p.priced[i], overlap, pricer.overlap_share());
    if (p.phase[i]->host_sync >= 0) {
      p.host[i] = pricer.synced_wait(*p.phase[i], p.priced[i], p.exposed[i]);
      continue;
    }
    const double h = p.priced[i].host_issue;
    const double g = p.exposed[i].compute + p.exposed[i].comm.total();
    host += h;
    gpu += g;
    excess[i] = std::max(0.0, h - g);
    excess_total += excess[i];
  }
  const double wait = unsynced_wait(host, gpu);
  if (wait > 0) {
    for (std::size_t i = 0; i < 3; ++i) p.host[i] += wait * excess[i] / excess_total;
  }
  return p;
}

}  // namespace myriad::sim
