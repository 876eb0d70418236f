// A traced workload played by the step engine on a scenario's cluster
// (StepOptions::workload, `myriad simulate --workload`): a scenario's own step,
// exported as Chakra traces and read back priced on it, simulates to the
// scenario's own step, contention included; a gzip-compressed trace reads as
// its inflated bytes; a workload whose stages do not match is refused.
#include <gtest/gtest.h>

#include <string>

#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/chakra/et_io.hpp"
#include "sim/chakra/program_trace.hpp"
#include "sim/program/step_program.hpp"
#include "sim/step/step_lowering.hpp"
#include "tests/sim/chakra_samples.hpp"
#include "tests/sim/shipped.hpp"
#include "tests/sim/step_engine_support.hpp"

namespace myriad::sim::chakra {
namespace {

models::scenario::Scenario example(const std::string& name) {
  return models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/" + name + ".yaml", sim::testing::kShipped);
}

// The scenario's step program as traces, read back priced on the scenario: its
// data-parallel collectives priced over the dp group, its sends with their bytes.
StepProgram round_trip(const models::scenario::Scenario& s, const DeviceProfile& profile) {
  const StepProgram program = build_step_program(s, profile);
  const TracePricing pricing{&s, &profile, models::GroupKind::dp};
  return program_from_trace(program_trace(program, "step"), &pricing);
}

// Expectation: the step played back as a workload is the scenario's own step, on
// a cluster whose 1:7 pods make the data-parallel rings contend (every replica
// simulated), and on one without contention (one replica, ghosts).
TEST(ChakraWorkload, AScenariosOwnStepPlaysBackAsItsSimulation) {
  for (const char* name : {"llama3-70b-h100-3584-pods-1to7", "llama3-8b-h100-64-pp4"}) {
    const auto s = example(name);
    const DeviceProfile profile =
        on_hardware(sim::testing::shipped_profile(s.cluster.gpu.profile), s.cluster.gpu);
    const StepProgram workload = round_trip(s, profile);
    ASSERT_TRUE(workload.traced);
    ASSERT_FALSE(workload.collectives.empty());
    StepOptions played = sim::testing::options();
    played.workload = &workload;
    const double own = sim::testing::run_in_child(s, sim::testing::options(), profile).step_time_s;
    const double traced = sim::testing::run_in_child(s, played, profile).step_time_s;
    ASSERT_GT(own, 0) << name;
    EXPECT_NEAR(traced / own, 1, 1e-9) << name << ": " << traced << " s against " << own << " s";
  }
}

// Expectation: with the network slower, the same workload takes longer on the
// step engine (its collectives and sends are flows on the scenario's links), while
// its compute stays as traced.
TEST(ChakraWorkload, ItsTrafficRunsOnTheScenariosNetwork) {
  auto s = example("llama3-8b-h100-64-pp4");
  const DeviceProfile profile =
      on_hardware(sim::testing::shipped_profile(s.cluster.gpu.profile), s.cluster.gpu);
  const StepProgram workload = round_trip(s, profile);
  StepOptions played = sim::testing::options();
  played.workload = &workload;
  const double fast = sim::testing::run_in_child(s, played, profile).step_time_s;
  s.cluster.nic_bw_Bps /= 8;
  const double slow = sim::testing::run_in_child(s, played, profile).step_time_s;
  EXPECT_GT(slow, fast * 1.01);
}

TEST(ChakraWorkload, AWorkloadOfOtherStagesIsRefused) {
  const auto s = example("llama3-8b-h100-64-pp4");
  const DeviceProfile profile =
      on_hardware(sim::testing::shipped_profile(s.cluster.gpu.profile), s.cluster.gpu);
  EtReadOptions read;
  read.checks.ctrl_deps = false;
  EtSet one;
  one.name = "feeder";
  one.files.push_back(
      {{0}, read_et_file(testing::sample("feeder-chakra.0.et.gz"), read), "feeder.0.et"});
  const StepProgram workload = program_from_trace(one);
  try {
    (void)lower_step(s, profile, {}, false, &workload);
    FAIL() << "a one-file workload on a 4-stage scenario was lowered";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the workload has 1 stage (trace files), the scenario's "
                                         "pipeline 4 (parallelism.pp)"),
              std::string::npos)
        << e.what();
  }
}

// Expectation: Chakra's gzip-compressed sample reads as its inflated bytes do.
TEST(ChakraWorkload, AGzipCompressedTraceReadsAsItsBytes) {
  EtReadOptions read;
  read.checks.ctrl_deps = false;
  const EtGraph direct = read_et_file(testing::sample("feeder-chakra.0.et.gz"), read);
  const EtGraph inflated =
      read_et_bytes(testing::gunzip_file(testing::sample("feeder-chakra.0.et.gz")), "x", read);
  ASSERT_EQ(direct.nodes.size(), inflated.nodes.size());
  EXPECT_GT(direct.nodes.size(), 1000U);
  for (std::size_t i = 0; i < direct.nodes.size(); ++i) {
    EXPECT_EQ(direct.nodes[i].id, inflated.nodes[i].id);
    EXPECT_EQ(direct.nodes[i].duration_micros, inflated.nodes[i].duration_micros);
  }
  // A gzip header and nothing after it: damaged, said so.
  EXPECT_THROW((void)read_et_bytes(std::string("\x1f\x8b\x08\x00", 4), "x", read), EtError);
}

}  // namespace
}  // namespace myriad::sim::chakra
