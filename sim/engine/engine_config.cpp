#include "sim/engine/engine_config.hpp"

#include <xbt/log.h>
#include <simgrid/s4u/Engine.hpp>

// version.h uses macros of xbt/base.h without including it: keep it after Engine.hpp.
#include <simgrid/version.h>

namespace myriad::sim {

void apply_engine_config(bool sanitizer_safe, int rank_groups) {
  // Myriad reports what it sets; SimGrid's own notices of each change are noise.
  xbt_log_control_set("xbt_cfg.thres:warning");
  simgrid::s4u::Engine::set_config("network/model:CM02");
  simgrid::s4u::Engine::set_config("network/crosstraffic:0");
  simgrid::s4u::Engine::set_config("network/TCP-gamma:0");
  simgrid::s4u::Engine::set_config("contexts/guard-size:0");
  simgrid::s4u::Engine::set_config(rank_groups > kSmallStackActors ? "contexts/stack-size:128"
                                                                   : "contexts/stack-size:1024");
  if (sanitizer_safe) simgrid::s4u::Engine::set_config("contexts/factory:thread");
  simgrid::s4u::Engine::set_config("network/optim:Full");
  simgrid::s4u::Engine::set_config("cpu/optim:Full");
}

std::string simgrid_version() {
  return std::to_string(SIMGRID_VERSION_MAJOR) + "." + std::to_string(SIMGRID_VERSION_MINOR);
}

}  // namespace myriad::sim
