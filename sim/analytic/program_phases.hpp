// A layer program's phases (forward, backward, recomputation) priced, exposed,
// and with the GPU's waits for the host in each (host_wait.hpp): a phase with a
// host sync on its own; the others together, the host running ahead from one to
// the next (a layer's forward and backward passes alternate in the steady
// state), each phase carrying the wait in proportion to its own excess of host
// time. What both engines' pass times are made of (estimator.cpp).
#pragma once

#include <array>

#include "models/transformer/layer_program.hpp"
#include "sim/analytic/layer_exposure.hpp"
#include "sim/analytic/pricer.hpp"

namespace myriad::sim {

struct ProgramPhases {
  std::array<const models::Phase*, 3> phase{};
  std::array<PhaseTime, 3> priced;
  std::array<PhaseTime, 3> exposed;
  std::array<double, 3> host{};
};

ProgramPhases program_phases(const models::LayerProgram& lp, Pricer& pricer,
                             const LayerOverlap& overlap, double runs_per_step);

}  // namespace myriad::sim
