#include "sim/engine/engine_config.hpp"

#include <gtest/gtest.h>
#include <simgrid/s4u/Engine.hpp>
#include <xbt/config.hpp>

namespace myriad::sim {
namespace {

TEST(EngineConfig, SelectsTheNetworkModelThatMatchesAlphaBeta) {
  int argc = 1;
  char name[] = "engine_config_test";
  char* argv[] = {name, nullptr};
  simgrid::s4u::Engine engine(&argc, argv);
  apply_engine_config();
  EXPECT_EQ(simgrid::config::get_value<std::string>("network/model"), "CM02");
  EXPECT_FALSE(simgrid::config::get_value<bool>("network/crosstraffic"));
  EXPECT_EQ(simgrid::config::get_value<double>("network/TCP-gamma"), 0.0);
  EXPECT_EQ(simgrid::config::get_value<int>("contexts/guard-size"), 0);
  EXPECT_EQ(simgrid::config::get_value<int>("contexts/stack-size"), 1024);
  // Full updates: identical flows get identical shares (engine_config.hpp).
  EXPECT_EQ(simgrid::config::get_value<std::string>("network/optim"), "Full");
  EXPECT_EQ(simgrid::config::get_value<std::string>("cpu/optim"), "Full");
}

TEST(EngineConfig, ReportsTheSimGridVersion) {
  EXPECT_EQ(simgrid_version().rfind("3.", 0), 0u) << simgrid_version();
}

}  // namespace
}  // namespace myriad::sim
