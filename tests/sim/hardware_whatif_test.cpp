// Hardware what-ifs: every hardware key of a scenario drives the cost terms it
// should, in the right direction and by the right amount, whatever the device
// profile says (a profile holds achieved rates relative to its own hardware).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "models/scenario/loader.hpp"
#include "models/scenario/scenario_schema.hpp"
#include "myriad_source_paths.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/cost/comm_cost.hpp"
#include "sim/cost/compute_cost.hpp"
#include "sim/cost/network_slowdown.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using testing::h100;
using testing::kShipped;

// Llama 3 70B on 64 H100: tp 8 inside the node, pp 2, dp 4 across nodes.
models::scenario::Scenario base(const std::string& gpu_keys = "",
                                const std::string& cluster_keys = "") {
  const std::string text = R"(
cluster: {preset: llama3-like, gpus: 64, gpu: {preset: H100)" +
                           gpu_keys + "}" + cluster_keys + R"(}
model: {preset: llama3-70b, seq_length: 4096}
parallelism: {tp: 8, sp: true, pp: 2, zero: 1, micro_batch: 1, global_batch: 32}
)";
  return models::scenario::load_scenario_text(text, "hardware_whatif_test.yaml", kShipped);
}

const PricedCollective& collective(const StepReport& r, const std::string& name) {
  const auto it = std::find_if(r.collectives.begin(), r.collectives.end(),
                               [&](const PricedCollective& c) { return c.name == name; });
  if (it == r.collectives.end()) throw std::runtime_error("no collective " + name);
  return *it;
}

const PricedOp& op(const StepReport& r, const std::string& name) {
  const auto it =
      std::find_if(r.ops.begin(), r.ops.end(), [&](const PricedOp& o) { return o.name == name; });
  if (it == r.ops.end()) throw std::runtime_error("no op " + name);
  return *it;
}

double tp_bandwidth_term(const StepReport& r) {
  const auto it = std::find_if(r.collectives.begin(), r.collectives.end(),
                               [](const PricedCollective& c) { return c.group == "tp"; });
  if (it == r.collectives.end()) throw std::runtime_error("no tp collective");
  return it->cost.bandwidth_s;
}

// Expectation: a large GEMM is compute-bound, so doubling the bf16 peak halves
// its time less the launch overhead, and the step gets shorter.
TEST(HardwareWhatIf, DoublingTheBf16PeakHalvesComputeBoundGemms) {
  const StepReport plain = estimate(base(), h100());
  const StepReport fast = estimate(base(", bf16_peak: 1978TFLOPS"), h100());
  const double overhead = h100().kernel_overhead_s;
  const PricedOp& a = op(plain, "fc1");
  const PricedOp& b = op(fast, "fc1");
  ASSERT_FALSE(a.memory_bound);
  EXPECT_NEAR((b.time_s - overhead) / (a.time_s - overhead), 0.5, 1e-9);
  EXPECT_LT(fast.step_time_s, plain.step_time_s);
  // MFU is against the scenario's peak: twice the peak, a lower MFU.
  EXPECT_LT(fast.mfu, plain.mfu);
}

// Expectation: memory-bound ops move their bytes at the scenario's HBM bandwidth
// times the profile's efficiency: half the bandwidth, twice the time.
TEST(HardwareWhatIf, HalvingHbmBandwidthDoublesMemoryBoundOps) {
  const StepReport plain = estimate(base(), h100());
  const StepReport slow = estimate(base(", hbm_bandwidth: 1.675TB/s"), h100());
  const double overhead = h100().kernel_overhead_s;
  int checked = 0;
  for (const PricedOp& a : plain.ops) {
    if (!a.memory_bound || a.cls == "gemm") continue;
    const PricedOp& b = op(slow, a.name);
    EXPECT_NEAR((b.time_s - overhead) / (a.time_s - overhead), 2.0, 1e-9) << a.name;
    ++checked;
  }
  EXPECT_GE(checked, 3);
}

// Expectation: the NVLink curve is a fraction of the link rate, so halving
// nvlink_bandwidth doubles the tensor-parallel bandwidth term.
TEST(HardwareWhatIf, HalvingNvlinkDoublesTheTensorParallelBandwidthTerm) {
  const StepReport plain = estimate(base(), h100());
  const StepReport slow = estimate(base(", nvlink_bandwidth: 225GB/s"), h100());
  EXPECT_NEAR(tp_bandwidth_term(slow) / tp_bandwidth_term(plain), 2.0, 1e-9);
  EXPECT_GT(slow.step_time_s, plain.step_time_s);
}

// Expectation: NVLS speeds all-reduce inside the node, as NCCL runs it where the
// switch reduces: without it (cluster.gpu.nvls: false) the H100's all-reduce is a
// ring, at no more than the ring's ceiling (370 of 450 GB/s). All-gather and
// reduce-scatter are rings either way.
TEST(HardwareWhatIf, NvlsSpeedsAllReduceOnlyWhereTheHardwareHasIt) {
  const auto scenario = [](bool sp, const std::string& nvls) {
    return models::scenario::load_scenario_text(
        "cluster: {preset: llama3-like, gpus: 64, gpu: {preset: H100" + nvls + R"(}}
model: {preset: llama3-70b, seq_length: 4096}
parallelism: {tp: 8, sp: )" +
            std::string(sp ? "true" : "false") +
            R"(, pp: 2, zero: 1, micro_batch: 2, global_batch: 32}
)",
        "nvls.yaml", kShipped);
  };
  const auto tp = [](const StepReport& r) -> const PricedCollective& {
    return *std::find_if(r.collectives.begin(), r.collectives.end(),
                         [](const PricedCollective& c) { return c.group == "tp"; });
  };
  const StepReport with = estimate(scenario(false, ""), h100());
  const StepReport without = estimate(scenario(false, ", nvls: false"), h100());
  ASSERT_EQ(tp(with).kind, "all-reduce");
  EXPECT_EQ(tp(with).cost.algorithm, models::CollectiveAlgorithm::nvls);
  EXPECT_EQ(tp(without).cost.algorithm, models::CollectiveAlgorithm::ring);
  const double bytes = tp(with).bytes;
  const double curve = interpolate_busbw(h100().reference_nvlink_busbw, bytes);
  const double ring = std::min(curve, h100().ring_busbw_fraction * 450e9);
  ASSERT_LT(ring, curve);  // 128 MiB: large enough for NVLS to pass the ring
  EXPECT_NEAR(tp(without).cost.bandwidth_s / tp(with).cost.bandwidth_s, curve / ring, 1e-9);
  EXPECT_GT(without.step_time_s, with.step_time_s);
  // Sequence parallelism's all-gather and reduce-scatter: rings with or without.
  const StepReport sp_with = estimate(scenario(true, ""), h100());
  const StepReport sp_without = estimate(scenario(true, ", nvls: false"), h100());
  EXPECT_EQ(tp(sp_with).cost.algorithm, models::CollectiveAlgorithm::ring);
  EXPECT_EQ(tp(sp_with).cost.time_s, tp(sp_without).cost.time_s);
  EXPECT_EQ(sp_with.step_time_s, sp_without.step_time_s);
  EXPECT_LE(tp(sp_with).cost.busbw_Bps, h100().ring_busbw_fraction * 450e9 * (1 + 1e-12));
}

// Expectation: an NVLS curve comes with the ring's ceiling, and only an NVLS one.
TEST(HardwareWhatIf, AnNvlsCurveNeedsTheRingCeiling) {
  std::ifstream in(std::string(MYRIAD_PROFILE_DIR) + "/H100.json");
  const nlohmann::json h100_json = nlohmann::json::parse(in);
  const auto refused = [](const nlohmann::json& j, const std::string& expected) {
    try {
      parse_profile(j, "p.json");
      ADD_FAILURE() << "accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  nlohmann::json no_ceiling = h100_json;
  no_ceiling["parameters"].erase("nvlink_ring_busbw_fraction");
  refused(no_ceiling, "parameters.nvlink_ring_busbw_fraction: missing");
  nlohmann::json ring = h100_json;
  ring["nvlink_busbw_algorithm"] = "ring";
  refused(ring, "only an NVLS curve");
  nlohmann::json typo = h100_json;
  typo["nvlink_busbw_algorithm"] = "nvlink-sharp";
  refused(typo, "nvlink_busbw_algorithm: expected \"ring\" or \"nvls\"");
}

// Expectation: fp8 GEMMs run against the fp8 peak: twice the peak, half the time.
TEST(HardwareWhatIf, DoublingTheFp8PeakHalvesFp8Gemms) {
  auto plain = base();
  plain.training.precision = models::scenario::Precision::fp8;
  auto fast = base(", fp8_peak: 3958TFLOPS");
  fast.training.precision = models::scenario::Precision::fp8;
  const double overhead = h100().kernel_overhead_s;
  const StepReport slow_report = estimate(plain, h100());
  const StepReport fast_report = estimate(fast, h100());
  const PricedOp& a = op(slow_report, "fc1");
  const PricedOp& b = op(fast_report, "fc1");
  ASSERT_FALSE(a.memory_bound);
  EXPECT_NEAR((b.time_s - overhead) / (a.time_s - overhead), 0.5, 1e-9);
}

// Expectation: the memory a GPU has decides what fits.
TEST(HardwareWhatIf, HbmCapacityDecidesWhatFits) {
  const StepReport plain = estimate(base(), h100());
  const StepReport small = estimate(base(", hbm_capacity: 24GB"), h100());
  EXPECT_EQ(plain.memory_capacity, 81559.0 * 1024 * 1024);  // an H100 80GB, as CUDA reports it
  EXPECT_EQ(small.memory_capacity, 24e9);
  EXPECT_TRUE(plain.fits);
  EXPECT_FALSE(small.fits);
}

// Expectation: the SM count sets GEMM wave quantization: a compute-bound GEMM of
// exactly 132 output tiles (one tile shape) fills 132 SMs in one wave, and takes
// two waves on 131, each about half full: twice the time, less 1/132.
TEST(HardwareWhatIf, SmCountSetsWaveQuantization) {
  const models::Op gemm = models::make_gemm("g", 11 * 256, 12 * 128, 8192, 1, 2, false);
  DeviceProfile one_tile = h100();
  one_tile.gemm_tiles = {{256, 128, 1.0}};
  models::scenario::GpuSpec gpu = base().cluster.gpu;
  const DeviceProfile full = on_hardware(one_tile, gpu);
  gpu.sms = 131;
  const DeviceProfile fewer = on_hardware(one_tile, gpu);
  const ComputeCost a = compute_cost(gemm, full);
  ASSERT_FALSE(a.memory_bound);
  const double overhead = h100().kernel_overhead_s;
  EXPECT_NEAR((compute_cost(gemm, fewer).time_s - overhead) / (a.time_s - overhead),
              2.0 * 131 / 132, 1e-9);
}

// Expectation: the NIC rate drives data-parallel traffic between nodes: half the
// rate, twice the bandwidth term; the NVLink and NIC latencies drive the latency terms.
TEST(HardwareWhatIf, ClusterLinksDriveTheirTerms) {
  const StepReport plain = estimate(base(), h100());
  const StepReport half = estimate(base("", ", nic_bandwidth: 200Gbps"), h100());
  const auto& a = collective(plain, "dp.grads");
  const auto& b = collective(half, "dp.grads");
  ASSERT_GT(a.nodes, 1);
  EXPECT_NEAR(b.cost.bandwidth_s / a.cost.bandwidth_s, 2.0, 1e-9);
  const StepReport slow_hop = estimate(base("", ", nic_latency: 30us"), h100());
  EXPECT_GT(collective(slow_hop, "dp.grads").cost.latency_s, a.cost.latency_s);
  const StepReport slow_nvlink = estimate(base("", ", nvlink_latency: 10us"), h100());
  const auto tp_latency = [](const StepReport& r) {
    return std::find_if(r.collectives.begin(), r.collectives.end(),
                        [](const PricedCollective& c) { return c.group == "tp"; })
        ->cost.latency_s;
  };
  EXPECT_NEAR(tp_latency(slow_nvlink) / tp_latency(plain), 10.0, 1e-9);
}

// Expectation: every key of cluster.gpu either drives a cost term (a test above)
// or is a label. A key added to the schema without a test of its effect fails here.
TEST(HardwareWhatIf, EveryGpuKeyIsTestedOrALabel) {
  const std::set<std::string> tested = {"bf16_peak", "fp8_peak", "hbm_capacity", "hbm_bandwidth",
                                        "nvlink_bandwidth", "sms", "nvls", "profile",
                                        // activation_offload_test.cpp
                                        "host_link_bandwidth", "host_memory",
                                        "host_link_carries_network"};
  const std::set<std::string> labels = {"preset", "name", "source"};
  const models::scenario::SectionDoc doc = models::scenario::scenario_doc();
  const std::function<const models::scenario::SectionDoc*(const models::scenario::SectionDoc&)>
      find = [&](const models::scenario::SectionDoc& d) -> const models::scenario::SectionDoc* {
    if (d.path == "cluster.gpu") return &d;
    for (const auto& s : d.sections) {
      if (const auto* f = find(s)) return f;
    }
    return nullptr;
  };
  const models::scenario::SectionDoc* gpu = find(doc);
  ASSERT_NE(gpu, nullptr);
  for (const auto& f : gpu->fields) {
    EXPECT_TRUE(tested.count(f.key) + labels.count(f.key) == 1)
        << "cluster.gpu." << f.key << ": no test shows what it changes";
  }
}

// Expectation: a GPU run with another GPU's profile borrows it: the efficiencies
// are the lender's, the peaks and link rates the GPU's, and the profile says so
// (a B200 told to take the H100's, as every B200 did before it had its own).
TEST(HardwareWhatIf, AGpuWithoutAProfileBorrowsOne) {
  const auto b200 = models::scenario::load_scenario_text(R"(
cluster: {preset: llama3-like, gpus: 64, gpu: {preset: B200, profile: H100}}
model: {preset: llama3-70b, seq_length: 4096}
parallelism: {tp: 8, sp: true, pp: 2, zero: 1, micro_batch: 1, global_batch: 32}
)",
                                                         "b200.yaml", kShipped);
  EXPECT_EQ(b200.cluster.gpu.profile, "H100");
  const DeviceProfile on_b200 = on_hardware(h100(), b200.cluster.gpu);
  EXPECT_TRUE(on_b200.borrowed());
  EXPECT_EQ(on_b200.device, "H100-SXM5-80GB");
  EXPECT_EQ(on_b200.hardware, "B200");
  EXPECT_EQ(on_b200.gemm_efficiency, h100().gemm_efficiency);
  EXPECT_EQ(on_b200.bf16_flops, 2.25e15);
  // NVLink 5 at twice NVLink 4's rate: the H100's curve, twice as fast.
  ASSERT_EQ(on_b200.nvlink_busbw.size(), h100().nvlink_busbw.size());
  EXPECT_NEAR(on_b200.nvlink_busbw.back().busbw_Bps / h100().nvlink_busbw.back().busbw_Bps, 2.0,
              1e-12);
  // Putting it on the same GPU again changes nothing.
  const DeviceProfile again = on_hardware(on_b200, b200.cluster.gpu);
  EXPECT_EQ(again.nvlink_busbw.back().busbw_Bps, on_b200.nvlink_busbw.back().busbw_Bps);
  EXPECT_FALSE(on_hardware(h100(), base().cluster.gpu).borrowed());
  EXPECT_LT(estimate(b200, h100()).step_time_s, estimate(base(), h100()).step_time_s);
}

// Expectation: a profile's curve far above its own link rate was written against
// another one, and is refused with the key named.
TEST(HardwareWhatIf, ACurveAboveItsLinkRateIsRefused) {
  std::ifstream in(std::string(MYRIAD_PROFILE_DIR) + "/H100.json");
  nlohmann::json j = nlohmann::json::parse(in);
  j["parameters"]["nvlink_bandwidth_Bps"]["value"] = 100e9;
  try {
    parse_profile(j, "h100-wrong-link.json");
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("over 2 times parameters.nvlink_bandwidth_Bps"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace myriad::sim

namespace myriad::sim {
namespace {

// Expectation (network_slowdown): Llama 3 70B on 2,048 H100 of the llama3-like
// cluster with its top-of-rack tier at 1:3 (24 of 32 ports down: 3 nodes a rack,
// whose uplinks carry one node's NIC bandwidth). A stage's 64 replicas are 64
// neighbouring nodes, so a ring edge in three leaves a rack: gradient reductions,
// one stage at a time, are not slowed. The rack holding nodes 63-65 also sees
// stage 1's ring leave: when every stage gathers its parameters at once, two
// edges leave it, and stages 0-2's rings run at half their rate (the step engine
// plays the same: see the agreement test). A stage's pipeline transfers all go
// 64 nodes on: every node's leaves its rack, three times what the uplinks carry.
TEST(NetworkSlowdown, RingsRarelyLeaveARackPipelineTransfersAllDo) {
  auto s = models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-70b-h100-2048.yaml", kShipped);
  s.cluster.network.tiers[0].oversubscription = 3;
  const NetworkSlowdown reduce = network_slowdown(s, Traffic::dp_reduce);
  const NetworkSlowdown gather = network_slowdown(s, Traffic::dp_gather);
  const NetworkSlowdown pp = network_slowdown(s, Traffic::pp);
  EXPECT_NEAR(reduce.factor, 1.0, 1e-12) << reduce.leaving << " at tier " << reduce.tier;
  EXPECT_NEAR(gather.factor, 2.0, 1e-12) << gather.leaving << " at tier " << gather.tier;
  EXPECT_EQ(gather.tier, 0);
  EXPECT_NEAR(pp.factor, 3.0, 1e-12) << pp.leaving << " at tier " << pp.tier;
  EXPECT_EQ(pp.tier, 0);
}

// Expectation: a stage's replicas send together only while they keep step. In the
// pods example with racks at 3:1 (pods of 84 nodes, stages of 56), stage 2 fills
// pod 1 and its forward transfers all leave it, but only half of its backward
// transfers do: the halves drift apart, so 28 nodes' transfers leave at once, not
// 56. The pod's uplinks carry 1/21 of its 84 nodes' NICs: 28/84 x 21 = 7 times
// slower (the step engine's sends there take 7 times the NIC time), not 14.
TEST(NetworkSlowdown, ReplicasWhoseTransfersDifferDriftApart) {
  auto s = models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-70b-h100-3584-pods-1to7.yaml", kShipped);
  const NetworkSlowdown shipped = network_slowdown(s, Traffic::pp);
  EXPECT_NEAR(shipped.factor, 7.0, 1e-9);  // a stage a pod: every transfer leaves
  s.cluster.network.tiers[0].oversubscription = 3;
  const NetworkSlowdown racks = network_slowdown(s, Traffic::pp);
  EXPECT_NEAR(racks.factor, 7.0, 1e-9) << racks.leaving << " at tier " << racks.tier;
  EXPECT_NEAR(racks.leaving, 1.0 / 3, 1e-9);
  EXPECT_EQ(racks.tier, 1);
}

}  // namespace
}  // namespace myriad::sim
