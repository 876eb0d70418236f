// Node-limited routing (DeepSeek-V3 s2.1.2, s3.2.2): a token's experts on at most
// model.moe.max_nodes_per_token nodes, dispatched and combined in two hops (one
// copy a node over the network, NVLink inside the node, the hops overlapped).
// The shares of bytes each hop carries, by hand; the layer's all-to-alls that
// carry the limit; both engines on it.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "models/plan/rank_layout.hpp"
#include "models/scenario/loader.hpp"
#include "models/transformer/layer_program.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/cost/comm_cost.hpp"
#include "tests/sim/shipped.hpp"
#include "tests/sim/step_engine_support.hpp"

namespace myriad::sim {
namespace {

using models::CollectiveKind;
using models::GroupKind;
using testing::kShipped;

models::scenario::Scenario deepseek(const std::string& moe) {
  return models::scenario::load_scenario_text(
      "cluster: {preset: deepseek-like}\n"
      "model: {preset: deepseek-v3, mtp_depth: 0, moe: {" +
          moe +
          "}}\n"
          "parallelism: {pp: 16, ep: 64, stage_layers: [4, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, "
          "4, 4, 3], zero: 1, global_batch: 15360}\n",
      "node_limited.yaml", kShipped);
}

// DeepSeek-V3's layout: ep 64 over 8 nodes of 8, top-8 routed to at most 4
// nodes. Pairwise, 56 of every 64 bytes leave the node, each copy on its own;
// two-hop, a token crosses once to each of its 4 nodes but its own (4 x 7/8 of
// its 8 copies' bytes: half as much), and NVLink forwards the 7/8 of the copies
// that land on another GPU of the node, beside the network hop.
TEST(NodeLimitedRouting, TwoHopSendsOneCopyANodeBesideNvlink) {
  const auto s = deepseek("");
  const auto& cluster = s.cluster;
  const DeviceProfile& h800 = testing::shipped_profile("H800");
  const models::GroupSpan g{64, 8, 8};
  models::Collective pairwise{"ep.dispatch", CollectiveKind::all_to_all, GroupKind::ep, 1e9};
  models::Collective hops = pairwise;
  hops.hop_nodes = 4;
  hops.hop_copies = 8;
  const TwoHopShares shares = two_hop_shares(hops, g);
  EXPECT_DOUBLE_EQ(shares.network, 4 * 7.0 / 8 / 8);
  EXPECT_DOUBLE_EQ(shares.nvlink, 7.0 / 8);
  EXPECT_EQ(two_hop_shares(pairwise, g).network, 0);

  const CommCost a = collective_cost(pairwise, g, cluster, h800);
  const CommCost b = collective_cost(hops, g, cluster, h800);
  EXPECT_EQ(a.algorithm, models::CollectiveAlgorithm::pairwise);
  EXPECT_EQ(b.algorithm, models::CollectiveAlgorithm::two_hop);
  EXPECT_DOUBLE_EQ(b.latency_s, a.latency_s);
  const double nvlink = nvlink_busbw(h800, CollectiveKind::all_to_all, 1e9);
  // Pairwise: the node's own 7 of 64 ranks, and what PXN forwards to another rail.
  const double local = 1e9 * all_to_all_nvlink_share(g, cluster) / nvlink;
  const double remote = a.bandwidth_s - local;  // 56/64 of the bytes at the NIC's rate
  EXPECT_NEAR(b.bandwidth_s, std::max(1e9 * 7 / 8 / nvlink, remote * 0.5), 1e-12 * b.bandwidth_s);
  EXPECT_LT(b.time_s, a.time_s);

  // A limit past the nodes there are: a token reaches every node, once.
  hops.hop_nodes = 8;
  EXPECT_DOUBLE_EQ(two_hop_shares(hops, {16, 8, 2}).network, 2 * 0.5 / 8);
}

// The router's limit reaches the layer's dispatch and combine (no more nodes
// than copies), and the exposed expert time drops.
TEST(NodeLimitedRouting, TheLimitReachesTheLayersAllToAlls) {
  const auto limited = deepseek("max_nodes_per_token: 4");
  const auto wide = deepseek("max_nodes_per_token: 16");
  const auto plain = deepseek("");
  const auto comm = [](const models::scenario::Scenario& s, std::string_view name) {
    const auto layer =
        models::transformer_layer(s.model, models::shard_shape(s), models::LayerKind::moe);
    for (const auto& c : layer.forward.comms) {
      if (c.name == name) return c;
    }
    ADD_FAILURE() << name << " not found";
    return models::Collective{};
  };
  for (const char* name : {"ep.dispatch", "ep.combine"}) {
    EXPECT_EQ(comm(limited, name).hop_nodes, 4);
    EXPECT_EQ(comm(limited, name).hop_copies, 8);
    EXPECT_EQ(comm(wide, name).hop_nodes, 8);
    EXPECT_EQ(comm(plain, name).hop_nodes, 0);
    EXPECT_DOUBLE_EQ(comm(limited, name).bytes, comm(plain, name).bytes);
  }
  const DeviceProfile& h800 = testing::shipped_profile("H800");
  const StepReport a = estimate(plain, h800);
  const StepReport b = estimate(limited, h800);
  EXPECT_LT(b.step_time_s, a.step_time_s);
  // Inside one node the limit changes nothing.
  const auto one_node = [](const std::string& moe) {
    return models::scenario::load_scenario_text(
        "cluster: {preset: deepseek-like, gpus: 64}\n"
        "model: {preset: deepseek-v3, layers: 16, mtp_depth: 0, moe: {" +
            moe +
            "}}\n"
            "parallelism: {pp: 8, ep: 8, zero: 1, global_batch: 64}\n",
        "node_limited.yaml", kShipped);
  };
  EXPECT_EQ(estimate(one_node("max_nodes_per_token: 1"), h800).step_time_s,
            estimate(one_node(""), h800).step_time_s);
}

// The step engine plays a two-hop all-to-all as the network's share in flows
// with NVLink's forwarding beside them: it agrees with the closed form, exposed
// and overlapped.
TEST(NodeLimitedRouting, TheStepEngineAgrees) {
  for (const char* overlap : {"false", "true"}) {
    const auto s = models::scenario::load_scenario_text(
        std::string("cluster: {preset: llama3-like, gpus: 64}\n"
                    "model: {preset: mixtral-8x7b, seq_length: 4096, moe: {max_nodes_per_token: "
                    "1}}\n"
                    "parallelism: {tp: 2, sp: true, ep: 8, pp: 4, zero: 1, global_batch: 32}\n"
                    "overlap: {dp: true, pp: true, ep: ") +
            overlap + "}\n",
        "node_limited.yaml", kShipped);
    ASSERT_EQ(models::group_span(GroupKind::ep, s).nodes, 2);
    const DeviceProfile& h100 = testing::shipped_profile("H100");
    const double est = estimate(s, h100, Detail::summary).step_time_s;
    const double engine = testing::run_in_child(s, testing::options(), h100).step_time_s;
    EXPECT_NEAR(engine / est, 1, 0.02)
        << "overlap.ep " << overlap << ": " << engine << " s against " << est << " s";
    // Without the limit each copy crosses on its own: slower.
    auto wide = s;
    wide.model.moe.max_nodes_per_token = 0;
    EXPECT_GT(estimate(wide, h100, Detail::summary).step_time_s, est);
  }
}

TEST(NodeLimitedRouting, TheKeyNeedsExperts) {
  try {
    (void)models::scenario::load_scenario_text(
        "cluster: {preset: llama3-like, gpus: 8}\n"
        "model: {preset: llama3-8b, moe: {max_nodes_per_token: 4}}\n"
        "parallelism: {tp: 8, global_batch: 8}\n",
        "dense.yaml", kShipped);
    ADD_FAILURE() << "max_nodes_per_token on a dense model loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("model.moe"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace myriad::sim
