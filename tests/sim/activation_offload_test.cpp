// Activation offload (parallelism.offload_layers): Transformer Engine's schedule
// of copies to the host and back, what it saves the GPU and what the host holds,
// the waits it adds (the same in both engines), what the host link and host
// memory change, and the checks and fit remedy.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/plan/memory.hpp"
#include "models/scenario/loader.hpp"
#include "sim/analytic/activation_offload.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/fit_remedies.hpp"
#include "sim/program/evaluator.hpp"
#include "sim/program/step_program.hpp"
#include "tests/sim/shipped.hpp"
#include "tests/sim/step_engine_support.hpp"

namespace myriad::sim {
namespace {

using testing::kShipped;

// Llama 3 8B at 8K on one node of 8 H100, FSDP, micro-batches of 4: 151.7 GiB of
// activations without recomputation, 4.25 GiB a layer.
models::scenario::Scenario llama8b(int offloaded, const std::string& gpu = "", int gpus = 8) {
  auto s = models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: " + std::to_string(gpus) + ", gpu: {preset: H100" +
          gpu +
          "}}\n"
          "model: {preset: llama3-8b, seq_length: 8192}\n"
          "parallelism: {tp: 1, pp: 1, micro_batch: 4, global_batch: 64, zero: 3}\n"
          "overlap: {dp: true}\n",
      "activation_offload_test.yaml", kShipped);
  s.parallelism.offload_layers = offloaded;
  return s;
}

double part(const StepReport& r, std::string_view name) {
  for (const auto& b : r.breakdown) {
    if (b.name == name) return b.seconds;
  }
  return -1;
}

std::vector<OffloadLayer> uniform(int n, double forward, double backward, double bytes) {
  return std::vector<OffloadLayer>(static_cast<std::size_t>(n), {forward, backward, bytes});
}

// Expectation: nothing offloaded, nothing waited for.
TEST(OffloadStall, NoneWithoutOffload) {
  const PassTimes t = offload_stall(uniform(4, 1, 2, 1e9), 0, 1, 1);
  EXPECT_EQ(t.forward, 0);
  EXPECT_EQ(t.backward, 0);
}

// Expectation: Transformer Engine's guide's first figure: 2 of 5 layers offloaded,
// each copy shorter than a layer's pass: the copies hide behind the compute.
TEST(OffloadStall, HiddenWhileTheLinkKeepsUp) {
  const PassTimes t = offload_stall(uniform(5, 1, 2, 0.9), 2, 1, 1);
  EXPECT_EQ(t.forward, 0);
  EXPECT_EQ(t.backward, 0);
}

// Expectation, by hand: 3 layers of 1 s each way, 2 offloaded, copies of 2 s; the
// GPU holds one layer's activations at a time.
//   forward: layer 0 runs 0-1 and its copy 0-2; layer 1 waits for it, runs 2-3,
//   its copy 2-4; layer 2 waits for that, runs 4-5: 2 s of waits.
//   backward: layer 2 runs 0-1, then layer 1's copy back 1-3; layer 1 runs 3-4,
//   then layer 0's copy back 4-6; layer 0 runs 6-7: 4 s of waits.
TEST(OffloadStall, HandComputedWhenTheLinkIsSlow) {
  const PassTimes t = offload_stall(uniform(3, 1, 1, 2), 2, 1, 1);
  EXPECT_DOUBLE_EQ(t.forward, 2);
  EXPECT_DOUBLE_EQ(t.backward, 4);
  // Each direction at its own rate: twice as fast back, half the backward's waits.
  const PassTimes faster_back = offload_stall(uniform(3, 1, 1, 2), 2, 1, 2);
  EXPECT_DOUBLE_EQ(faster_back.forward, 2);
  EXPECT_DOUBLE_EQ(faster_back.backward, 2);
}

// Expectation, by hand: the link carries the network bytes of the passes beside
// the copies. 3 layers of 1 s each way, 2 offloaded, copies of 1 s: forward
// hides them; backward, each offloaded layer waits 1 s for its copy back, which
// starts once the layer after it is done. With as many network bytes beside
// each copy, a copy takes the link 2 s: HandComputedWhenTheLinkIsSlow's 2 and 4 s.
TEST(OffloadStall, NetworkBytesOnTheLinkSlowTheCopies) {
  const PassTimes quiet = offload_stall(uniform(3, 1, 1, 1), 2, 1, 1);
  EXPECT_EQ(quiet.forward, 0);
  EXPECT_DOUBLE_EQ(quiet.backward, 2);
  const std::vector<OffloadLayer> busy(3, {1, 1, 1, 1, 1});
  const PassTimes t = offload_stall(busy, 2, 1, 1);
  EXPECT_DOUBLE_EQ(t.forward, 2);
  EXPECT_DOUBLE_EQ(t.backward, 4);
}

// Expectation, by hand: on 16 GPUs of 2 nodes (dp 16, 8 a node), a ring
// all-gather of S sends 15/16 S from each rank over the ring, which leaves each
// node once: 15/16 S / 8 a GPU through the NICs. An all-to-all sends the half of
// its bytes bound for the other node; a group inside a node (tp 1) sends none.
TEST(OffloadStall, NetworkBytesAreWhatLeavesTheNode) {
  const auto s = llama8b(0, "", 16);
  models::Phase phase;
  phase.comms.push_back({"ag", models::CollectiveKind::all_gather, models::GroupKind::dp, 1.6e9});
  phase.comms.push_back({"a2a", models::CollectiveKind::all_to_all, models::GroupKind::dp, 1e9});
  phase.comms.push_back({"tp", models::CollectiveKind::all_reduce, models::GroupKind::tp, 1e9});
  EXPECT_DOUBLE_EQ(network_bytes_per_gpu(phase, s), 15.0 / 16 * 1.6e9 / 8 + 0.5e9);
  const auto one_node = llama8b(0);
  EXPECT_EQ(network_bytes_per_gpu(phase, one_node), 0);
}

// Expectation: every layer but one, or a count out of range, or no link, is refused.
TEST(OffloadStall, RefusesWhatCannotRun) {
  EXPECT_THROW(offload_stall(uniform(3, 1, 1, 1), 3, 1, 1), std::invalid_argument);
  EXPECT_THROW(offload_stall(uniform(3, 1, 1, 1), -1, 1, 1), std::invalid_argument);
  EXPECT_THROW(offload_stall(uniform(3, 1, 1, 1), 1, 0, 1), std::invalid_argument);
}

// Expectation: offloading N of 32 layers leaves 32 - N layers' activations on the
// GPU and puts N on the host; the step waits only once the link cannot keep up.
TEST(ActivationOffload, MovesLayersToTheHost) {
  const StepReport none = estimate(llama8b(0), testing::h100());
  const StepReport eight = estimate(llama8b(8), testing::h100());
  const double layer = models::layer_activation_bytes(llama8b(0));
  EXPECT_NEAR(none.memory.activations - eight.memory.activations, 8 * layer, 1e-6 * layer);
  EXPECT_NEAR(eight.memory.offloaded, 8 * layer, 1e-6 * layer);
  EXPECT_EQ(none.memory.offloaded, 0);
  EXPECT_DOUBLE_EQ(part(eight, "offload"), 0);  // 8 copies of 82 ms behind 24 layers
  EXPECT_DOUBLE_EQ(eight.step_time_s, none.step_time_s);
  const StepReport most = estimate(llama8b(31), testing::h100());
  EXPECT_GT(part(most, "offload"), 0);
  EXPECT_NEAR(most.step_time_s - none.step_time_s, part(most, "offload"), 1e-9);
}

// Expectation: the host link paces the copies: at half the rate (PCIe Gen4 on an
// H100) the waits grow, and a link fast enough hides them all.
TEST(HardwareWhatIf, HostLinkBandwidthPacesOffload) {
  const double plain = part(estimate(llama8b(24), testing::h100()), "offload");
  const double gen4 =
      part(estimate(llama8b(24, ", host_link_bandwidth: 32GB/s"), testing::h100()), "offload");
  const double c2c =
      part(estimate(llama8b(24, ", host_link_bandwidth: 450GB/s"), testing::h100()), "offload");
  EXPECT_GT(plain, 0);
  EXPECT_GT(gen4, 2 * plain);
  EXPECT_EQ(c2c, 0);
}

// Expectation: FSDP over two nodes: each layer's gathers and gradient reductions
// leave the node over every H100's PCIe link, the one its copies take
// (host_link_carries_network, as the preset has it), so the copies wait longer
// than on a link that carries no network traffic. In one node nothing leaves it
// and the two agree.
TEST(HardwareWhatIf, NetworkTrafficOnTheHostLinkSlowsOffload) {
  const std::string apart = ", host_link_carries_network: false";
  const double shared = part(estimate(llama8b(24, "", 16), testing::h100()), "offload");
  const double alone = part(estimate(llama8b(24, apart, 16), testing::h100()), "offload");
  EXPECT_GT(alone, 0);
  EXPECT_GT(shared, alone);
  // The report says what shares the link.
  const auto says = [](const StepReport& r) {
    return testing::notes_say(r, "the copies share each GPU's host link");
  };
  EXPECT_TRUE(says(estimate(llama8b(24, "", 16), testing::h100())));
  EXPECT_FALSE(says(estimate(llama8b(24, apart, 16), testing::h100())));
  EXPECT_FALSE(says(estimate(llama8b(24), testing::h100())));  // nothing leaves the node
  // Both engines wait for the shared link alike.
  const auto two_nodes = llama8b(24, "", 16);
  const double est = estimate(two_nodes, testing::h100(), Detail::summary).step_time_s;
  const testing::ChildResult sim =
      testing::run_in_child(two_nodes, testing::options(), testing::h100());
  ASSERT_GT(sim.step_time_s, 0);
  EXPECT_NEAR(sim.step_time_s / est, 1, 1e-6);
  EXPECT_DOUBLE_EQ(part(estimate(llama8b(24), testing::h100()), "offload"),
                   part(estimate(llama8b(24, apart), testing::h100()), "offload"));
}

// Expectation: the host memory a GPU may use decides whether the offloaded
// activations fit.
TEST(HardwareWhatIf, HostMemoryDecidesWhatOffloadFits) {
  const StepReport plain = estimate(llama8b(24), testing::h100());
  EXPECT_TRUE(plain.fits);
  EXPECT_DOUBLE_EQ(plain.host_memory_capacity, 256e9);
  const StepReport small = estimate(llama8b(24, ", host_memory: 64GB"), testing::h100());
  EXPECT_FALSE(small.host_fits());
  EXPECT_FALSE(small.fits);
}

// Expectation: the step program's evaluator and the step engine play the waits
// the closed form adds.
TEST(ActivationOffload, BothEnginesPlayTheWaits) {
  for (const int n : {8, 24, 31}) {
    const auto s = llama8b(n);
    const double est = estimate(s, testing::h100(), Detail::summary).step_time_s;
    const double eval = evaluate_program(build_step_program(s, testing::h100())).step_time_s;
    EXPECT_NEAR(eval / est, 1, 1e-9) << n;
    const testing::ChildResult sim = testing::run_in_child(s, testing::options(), testing::h100());
    ASSERT_GT(sim.step_time_s, 0) << n;
    EXPECT_NEAR(sim.step_time_s / est, 1, 1e-6) << n;
  }
}

// Expectation: where activations do not fit, the report offers the fewest layers
// to offload that make them fit (one fewer does not), beside recomputation.
TEST(ActivationOffload, FitRemedyNamesTheFewestLayers) {
  const auto s = llama8b(0);
  ASSERT_FALSE(estimate(s, testing::h100()).fits);
  const auto remedies = fit_remedies(s, testing::h100());
  const auto it = std::find_if(remedies.begin(), remedies.end(), [](const FitRemedy& r) {
    return r.key == "parallelism.offload_layers";
  });
  ASSERT_NE(it, remedies.end());
  EXPECT_TRUE(it->fits());
  const int n = std::stoi(it->value);
  EXPECT_TRUE(estimate(llama8b(n), testing::h100()).fits);
  EXPECT_FALSE(estimate(llama8b(n - 1), testing::h100()).fits);
}

// Expectation: where too many layers overflow the host, the report offers the
// fewest that fit both memories, fewer than the scenario's.
TEST(ActivationOffload, FitRemedyForAnOverflowingHost) {
  const auto s = llama8b(24, ", host_memory: 64GB");
  ASSERT_FALSE(estimate(s, testing::h100()).host_fits());
  const auto remedies = fit_remedies(s, testing::h100());
  const auto it = std::find_if(remedies.begin(), remedies.end(), [](const FitRemedy& r) {
    return r.key == "parallelism.offload_layers";
  });
  ASSERT_EQ(it, remedies.end()) << "24 is the fewest that fit the GPU: no count fits both";
  const auto roomier = llama8b(31, ", host_memory: 120GB");
  ASSERT_FALSE(estimate(roomier, testing::h100()).host_fits());
  const auto fewer = fit_remedies(roomier, testing::h100());
  const auto found = std::find_if(fewer.begin(), fewer.end(), [](const FitRemedy& r) {
    return r.key == "parallelism.offload_layers";
  });
  ASSERT_NE(found, fewer.end());
  EXPECT_TRUE(found->fits());
  EXPECT_EQ(std::stoi(found->value), 24);
}

// Expectation: the checks refuse offload where Megatron-LM does not run it, and
// without a host link or host memory, naming the key.
TEST(ActivationOffload, RefusedWhereItCannotRun) {
  const auto refused = [](const std::string& parallelism, const std::string& gpu,
                          const std::string& key) {
    try {
      models::scenario::load_scenario_text(
          "cluster: {preset: llama3-like, gpus: 16, gpu: {preset: H100" + gpu +
              "}}\n"
              "model: {preset: llama3-8b}\n"
              "parallelism: {tp: 1, global_batch: 64, " +
              parallelism + "}\n",
          "refused.yaml", kShipped);
      ADD_FAILURE() << parallelism << gpu << " was accepted";
    } catch (const models::scenario::ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  };
  refused("pp: 2, offload_layers: 4", "", "parallelism.offload_layers");
  refused("pp: 1, offload_layers: 4, recompute: selective", "", "parallelism.offload_layers");
  refused("pp: 1, offload_layers: 32", "", "parallelism.offload_layers");
  refused("pp: 1, offload_layers: 4", ", host_link_bandwidth: 0GB/s",
          "cluster.gpu.host_link_bandwidth");
  refused("pp: 1, offload_layers: 4", ", host_memory: 0GB", "cluster.gpu.host_memory");
}

}  // namespace
}  // namespace myriad::sim
