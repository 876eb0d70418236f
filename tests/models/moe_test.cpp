// Mixture-of-experts workload: routing load under skew and capacity, the MoE
// block's ops and collectives in each layout, expert data parallelism, pruning,
// and the scenario checks of the MoE keys.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "models/plan/memory.hpp"
#include "models/plan/rank_layout.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/loader.hpp"
#include "models/transformer/model_stats.hpp"
#include "models/transformer/moe_routing.hpp"
#include "myriad_source_paths.hpp"

namespace myriad::models {
namespace {

const scenario::LoadOptions kShipped{{MYRIAD_SCENARIO_DIR}};

scenario::Scenario load(const std::string& text) {
  return scenario::load_scenario_text(text, "moe_test.yaml", kShipped);
}

// The MegaScale-MoE 352B on one 8-GPU node per stage, with `parallelism` and `moe` keys added.
scenario::Scenario moe352(const std::string& parallelism, const std::string& moe = "") {
  return load(
      "cluster: {preset: llama3-like, gpu: H800, gpus: 240}\n"
      "model: {preset: megascale-moe-352b" +
      (moe.empty() ? std::string() : ", moe: {" + moe + "}") +
      "}\nparallelism: {pp: 15, global_batch: 720, " + parallelism + "}\n");
}

const Op* find_op(const Phase& p, std::string_view name) {
  const auto it =
      std::find_if(p.ops.begin(), p.ops.end(), [&](const Op& op) { return op.name == name; });
  return it == p.ops.end() ? nullptr : &*it;
}

const Collective* find_comm(const Phase& p, std::string_view name) {
  const auto it = std::find_if(p.comms.begin(), p.comms.end(),
                               [&](const Collective& c) { return c.name == name; });
  return it == p.comms.end() ? nullptr : &*it;
}

scenario::MoeSpec spec(int experts, int top_k) {
  scenario::MoeSpec m;
  m.experts = experts;
  m.top_k = top_k;
  return m;
}

// Expectation: an even spread gives every rank top_k slots per token routed and
// drops nothing; a capacity pads every rank to capacity_factor * top_k.
TEST(MoeLoad, UniformAndPaddedToCapacity) {
  auto m = spec(32, 3);
  MoeLoad l = moe_load(m, 8);
  EXPECT_DOUBLE_EQ(l.busiest_slots, 3);
  EXPECT_DOUBLE_EQ(l.imbalance(), 1);
  EXPECT_DOUBLE_EQ(l.dropped, 0);
  m.capacity_factor = 1.25;
  l = moe_load(m, 8);
  EXPECT_DOUBLE_EQ(l.busiest_slots, 3.75);
  EXPECT_DOUBLE_EQ(l.dropped, 0);
}

// Expectation: a histogram of 4 experts on 2 ranks, (0.4, 0.3, 0.2, 0.1), puts 0.7
// of the group's 2 slots per token on rank 0: 1.4, imbalance 1.4. With capacity
// factor 1, each expert takes 0.5: the first two drop 0.3 and 0.1 of 2 slots (20 %),
// and every rank computes its padded 1.0.
TEST(MoeLoad, HistogramSetsTheBusiestRankAndCapacityDrops) {
  auto m = spec(4, 1);
  m.skew = scenario::RouterSkew::histogram;
  m.histogram = {0.4, 0.3, 0.2, 0.1};
  MoeLoad l = moe_load(m, 2);
  EXPECT_NEAR(l.busiest_slots, 1.4, 1e-12);
  EXPECT_NEAR(l.imbalance(), 1.4, 1e-12);
  EXPECT_DOUBLE_EQ(l.dropped, 0);
  m.capacity_factor = 1;
  l = moe_load(m, 2);
  EXPECT_NEAR(l.busiest_slots, 1.0, 1e-12);
  EXPECT_NEAR(l.dropped, 0.2, 1e-12);
}

// Expectation: Zipf shares fall as 1 / (e + 1)^s and sum to 1; the hottest rank
// carries more than an even share, the more so for a larger exponent.
TEST(MoeLoad, ZipfSkewGrowsWithItsExponent) {
  auto m = spec(8, 2);
  m.skew = scenario::RouterSkew::zipf;
  m.zipf_exponent = 1;
  const auto shares = expert_shares(m);
  double sum = 0;
  for (const double s : shares) sum += s;
  EXPECT_NEAR(sum, 1, 1e-12);
  EXPECT_NEAR(shares[0] / shares[3], 4, 1e-12);
  const double mild = moe_load(m, 4).imbalance();
  m.zipf_exponent = 2;
  EXPECT_GT(moe_load(m, 4).imbalance(), mild);
  EXPECT_GT(mild, 1.5);
}

// Expectation: a load asked for again (kept per thread, the last four) is the one
// computed for that spec and ep, whichever others were asked for in between: six
// specs that differ in one input each (experts pruned, top-k, capacity, skew, its
// exponent, a histogram's shares), asked for in turn, twice round.
TEST(MoeLoad, AKeptLoadIsTheOneForItsSpec) {
  auto base = spec(64, 2);
  base.skew = scenario::RouterSkew::zipf;
  base.zipf_exponent = 1;
  std::vector<std::pair<scenario::MoeSpec, int>> asked;
  for (int k = 0; k < 7; ++k) asked.emplace_back(base, 8);
  asked[1].first.prune.experts = 16;
  asked[2].first.top_k = 4;
  asked[3].first.capacity_factor = 1.25;
  asked[4].first.zipf_exponent = 1.5;
  asked[5].first.skew = scenario::RouterSkew::histogram;
  asked[5].first.histogram = expert_shares(asked[4].first);
  asked[6].second = 4;
  auto other = asked[5];
  other.first.histogram = expert_shares(base);
  asked.push_back(other);
  std::vector<double> first;
  for (const auto& [m, ep] : asked) first.push_back(moe_load(m, ep).busiest_slots);
  for (std::size_t i = 1; i < first.size(); ++i) {
    // 5 and 7: histograms of Zipf 1.5's and the base's shares, checked below.
    if (i != 5 && i != 7) {
      EXPECT_NE(first[i], first[0]) << i;
    }
  }
  EXPECT_NEAR(first[5], first[4], 1e-9 * first[4]);  // the same shares
  EXPECT_NEAR(first[7], first[0], 1e-9 * first[0]);
  for (int round = 0; round < 2; ++round) {
    for (std::size_t i = asked.size(); i-- > 0;) {
      EXPECT_EQ(moe_load(asked[i].first, asked[i].second).busiest_slots, first[i]) << i;
    }
  }
}

// Expectation: the load in closed form (uniform, or Zipf summed by Euler-Maclaurin
// past 32 terms) is the load summed expert by expert, within 1e-9, dropless or
// with a capacity, whether ep divides the experts or not.
TEST(MoeLoad, ClosedFormIsTheSumExpertByExpert) {
  for (const int experts : {5, 64, 1000, 65536}) {
    for (const int ep : {1, 3, 8, 64}) {
      for (const double capacity : {0.0, 1.0, 1.25}) {
        for (const double s : {0.0, 0.5, 1.0, 2.0}) {
          auto m = spec(experts, 2);
          m.capacity_factor = capacity;
          m.skew = s > 0 ? scenario::RouterSkew::zipf : scenario::RouterSkew::uniform;
          m.zipf_exponent = s;
          auto h = m;  // the same shares as a histogram: summed one by one
          h.skew = scenario::RouterSkew::histogram;
          h.histogram = expert_shares(m);
          const MoeLoad want = moe_load(h, ep);
          const MoeLoad got = moe_load(m, ep);
          SCOPED_TRACE(testing::Message() << experts << " experts, ep " << ep << ", capacity "
                                          << capacity << ", zipf " << s);
          EXPECT_NEAR(got.busiest_slots, want.busiest_slots, 1e-9 * want.busiest_slots);
          EXPECT_NEAR(got.mean_slots, want.mean_slots, 1e-9 * want.mean_slots);
          EXPECT_NEAR(got.dropped, want.dropped, 1e-9);
          ASSERT_EQ(got.rank_slots.size(), want.rank_slots.size());
        }
      }
    }
  }
}

// Expectation: in MegaScale-MoE's layout (cp 8, ep 8, whole experts) a rank's
// expert GEMMs take its 4 experts' share of the 8 ranks' 1,024 tokens x top-3, and
// the all-to-alls move 1,024 x 3 tokens of 4,096 bf16 values, inside the node.
TEST(MoeProgram, ExpertParallelLayoutShapesAndTraffic) {
  const auto s = moe352("cp: 8, ep: 8, etp: 1");
  const StepPlan plan = plan_step(s);
  const Op* fc1 = find_op(plan.layer.forward, "expert.fc1");
  ASSERT_NE(fc1, nullptr);
  EXPECT_DOUBLE_EQ(fc1->gemm.batch, 4);
  EXPECT_DOUBLE_EQ(fc1->gemm.m, 1024.0 * 3 / 4);
  EXPECT_DOUBLE_EQ(fc1->gemm.n, 2 * 14336);
  EXPECT_TRUE(fc1->grouped);
  const Collective* dispatch = find_comm(plan.layer.forward, "ep.dispatch");
  ASSERT_NE(dispatch, nullptr);
  EXPECT_EQ(dispatch->kind, CollectiveKind::all_to_all);
  EXPECT_DOUBLE_EQ(dispatch->bytes, 1024.0 * 3 * 4096 * 2);
  const GroupSpan ep = group_span(GroupKind::ep, s);
  EXPECT_EQ(ep.nodes, 1);
  EXPECT_EQ(ep.per_node, 8);
  // Backward mirrors both all-to-alls.
  EXPECT_NE(find_comm(plan.layer.backward, "ep.combine"), nullptr);
}

// Expectation: with etp 1 beside tp 8 (sequence parallel) the experts take the
// tokens each tp rank holds (8,192 / 8) and the ep group is the tp group, in the
// node; with etp = tp it strides over the replicas' nodes.
TEST(MoeProgram, ExpertTensorParallelChoosesTokensAndGroup) {
  const auto whole = load(
      "cluster: {preset: llama3-like, gpu: H800, gpus: 960}\n"
      "model: {preset: megascale-moe-352b}\n"
      "parallelism: {tp: 8, sp: true, pp: 15, ep: 8, etp: 1, global_batch: 720}\n");
  const StepPlan plan = plan_step(whole);
  EXPECT_DOUBLE_EQ(find_op(plan.layer.forward, "router")->gemm.m, 1024);
  EXPECT_EQ(find_comm(plan.layer.forward, "tp.mlp.in"), nullptr);
  EXPECT_EQ(group_span(GroupKind::ep, whole).nodes, 1);
  auto split = whole;
  split.parallelism.etp = 8;
  const StepPlan split_plan = plan_step(split);
  EXPECT_DOUBLE_EQ(find_op(split_plan.layer.forward, "router")->gemm.m, 8192);
  EXPECT_EQ(group_span(GroupKind::ep, split).nodes, 8);
}

// Expectation: with top_k past the ep degree, gathering every token (ep x tokens)
// moves fewer bytes than sending top_k copies: auto picks all-gather and
// reduce-scatter; all-to-all is kept when asked for.
TEST(MoeProgram, DispatchByAllGatherWhenTopKExceedsEp) {
  const auto s = moe352("cp: 8, ep: 2, etp: 1", "top_k: 8");
  const StepPlan plan = plan_step(s);
  const Collective* d = find_comm(plan.layer.forward, "ep.dispatch");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->kind, CollectiveKind::all_gather);
  EXPECT_DOUBLE_EQ(d->bytes, 1024.0 * 2 * 4096 * 2);
  EXPECT_EQ(find_comm(plan.layer.forward, "ep.combine")->kind, CollectiveKind::reduce_scatter);
  const auto forced = moe352("cp: 8, ep: 2, etp: 1", "top_k: 8, dispatch: all-to-all");
  const StepPlan forced_plan = plan_step(forced);
  EXPECT_EQ(find_comm(forced_plan.layer.forward, "ep.dispatch")->kind, CollectiveKind::all_to_all);
}

// Expectation: fp8 all-to-alls carry 1 byte and a 4-byte scale per 128 values, with
// a quantize and a dequantize op on either side.
TEST(MoeProgram, Fp8AllToAllCompressesTheBytes) {
  auto s = moe352("cp: 8, ep: 8, etp: 1");
  const StepPlan bf16_plan = plan_step(s);
  const double bf16 = find_comm(bf16_plan.layer.forward, "ep.dispatch")->bytes;
  s.training.all_to_all_precision = scenario::WirePrecision::fp8;
  s.training.combine_precision = scenario::WirePrecision::fp8;  // as the loader derives it
  const StepPlan plan = plan_step(s);
  EXPECT_NEAR(find_comm(plan.layer.forward, "ep.dispatch")->bytes / bf16, (1 + 4.0 / 128) / 2,
              1e-12);
  EXPECT_NE(find_op(plan.layer.forward, "ep.quantize"), nullptr);
  EXPECT_NE(find_op(plan.layer.forward, "ep.dequantize"), nullptr);
}

// Expectation: compressed all-gather dispatch gathers fp8 tokens; its combine, which
// cannot sum in fp8 on the wire, sends the reduce-scatter's bytes as an all-to-all of
// fp8 partial outputs; quantize and dequantize ops sit on either side of both.
TEST(MoeProgram, Fp8AllGatherDispatchCompressesBothWays) {
  auto s = moe352("cp: 8, ep: 8, etp: 1", "dispatch: all-gather");
  const StepPlan bf16_plan = plan_step(s);
  const Collective* bf16 = find_comm(bf16_plan.layer.forward, "ep.combine");
  ASSERT_NE(bf16, nullptr);
  EXPECT_EQ(bf16->kind, CollectiveKind::reduce_scatter);
  EXPECT_EQ(find_op(bf16_plan.layer.forward, "ep.quantize"), nullptr);
  s.training.all_to_all_precision = scenario::WirePrecision::fp8;
  s.training.combine_precision = scenario::WirePrecision::fp8;  // as the loader derives it
  const StepPlan plan = plan_step(s);
  const Collective* dispatch = find_comm(plan.layer.forward, "ep.dispatch");
  const Collective* combine = find_comm(plan.layer.forward, "ep.combine");
  ASSERT_NE(dispatch, nullptr);
  ASSERT_NE(combine, nullptr);
  EXPECT_EQ(dispatch->kind, CollectiveKind::all_gather);
  EXPECT_DOUBLE_EQ(dispatch->bytes, 1024.0 * 8 * 4096 * (1 + 4.0 / 128));
  EXPECT_EQ(combine->kind, CollectiveKind::all_to_all);
  EXPECT_DOUBLE_EQ(combine->bytes, dispatch->bytes);
  int quantizes = 0;
  for (const auto& op : plan.layer.forward.ops) quantizes += op.name == "ep.quantize";
  EXPECT_EQ(quantizes, 2);
}

// DeepSeek-V3's wire precisions (s3.3.3): dispatch in fp8, combine in bf16; the
// combine follows all_to_all_precision unless given; backward mirrors them (the
// gradients go to the experts by the combine's mirror, back by the dispatch's).
TEST(MoeProgram, DispatchInFp8AndCombineInBf16) {
  const auto load_wire = [](const std::string& training) {
    return load(
        "cluster: {preset: llama3-like, gpu: H800, gpus: 240}\n"
        "model: {preset: megascale-moe-352b}\n"
        "parallelism: {pp: 15, global_batch: 720, cp: 8, ep: 8, etp: 1}\n"
        "training: {" +
        training + "}\n");
  };
  const auto both = load_wire("all_to_all_precision: fp8");
  EXPECT_EQ(both.training.combine_precision, scenario::WirePrecision::fp8);
  const auto split = load_wire("all_to_all_precision: fp8, combine_precision: bf16");
  const StepPlan a = plan_step(both);
  const StepPlan b = plan_step(split);
  const StepPlan plain = plan_step(load_wire(""));
  const double fp8 = find_comm(a.layer.forward, "ep.combine")->bytes;
  const double bf16 = find_comm(plain.layer.forward, "ep.combine")->bytes;
  EXPECT_DOUBLE_EQ(find_comm(b.layer.forward, "ep.dispatch")->bytes, fp8);
  EXPECT_DOUBLE_EQ(find_comm(b.layer.forward, "ep.combine")->bytes, bf16);
  int quantizes = 0;
  for (const auto& op : b.layer.forward.ops) quantizes += op.name == "ep.quantize";
  EXPECT_EQ(quantizes, 1);  // the dispatch's only
  double backward = 0;
  for (const auto& c : b.layer.backward.comms) {
    if (c.group == GroupKind::ep) backward += c.bytes;
  }
  EXPECT_DOUBLE_EQ(backward, fp8 + bf16);
  // Only fp8 and bf16 are wire precisions of a combine.
  EXPECT_THROW((void)load_wire("combine_precision: fp32"), std::exception);
}

// fp8 GEMMs with an fp8 dispatch (DeepSeek-V3 s3.3.3): the experts' fc1 reads the
// tokens as they arrive, so neither a dequantize after the dispatch nor a cast
// before fc1 runs; the quantize before the dispatch stays, as do fc2's cast and
// the combine's. With bf16 GEMMs the dispatch is dequantized as before.
TEST(MoeProgram, Fp8TokensGoStraightIntoTheExpertsGemm) {
  const auto layer = [](const std::string& training) {
    const auto s = load(
        "cluster: {preset: llama3-like, gpu: H800, gpus: 240}\n"
        "model: {preset: megascale-moe-352b}\n"
        "parallelism: {pp: 15, global_batch: 720, cp: 8, ep: 8, etp: 1}\n"
        "training: {" +
        training + "}\n");
    return plan_step(s).layer.forward;
  };
  const auto count = [](const Phase& p, std::string_view name) {
    int n = 0;
    for (const auto& op : p.ops) n += op.name == name;
    return n;
  };
  // The op before a GEMM of this name.
  const auto before = [](const Phase& p, std::string_view name) {
    for (std::size_t i = 1; i < p.ops.size(); ++i) {
      if (p.ops[i].name == name) return p.ops[i - 1].name;
    }
    return std::string_view{};
  };
  const Phase fp8 = layer("precision: fp8, all_to_all_precision: fp8, combine_precision: bf16");
  EXPECT_EQ(count(fp8, "ep.quantize"), 1);
  EXPECT_EQ(count(fp8, "ep.dequantize"), 0);
  EXPECT_NE(before(fp8, "expert.fc1"), "fp8.cast");
  EXPECT_EQ(before(fp8, "expert.fc2"), "fp8.cast");
  const Phase wire16 = layer("precision: fp8");
  EXPECT_EQ(before(wire16, "expert.fc1"), "fp8.cast");
  const Phase gemm16 = layer("all_to_all_precision: fp8, combine_precision: bf16");
  EXPECT_EQ(count(gemm16, "ep.dequantize"), 1);
}

// Expectation: expert gradients reduce over tp*cp*dp / (etp*ep) ranks, dense ones
// over dp*cp; in MegaScale-MoE's layout at 240 GPUs the data-parallel ring carries a
// 1/8 shard of the dense gradients and all of the experts' (expert dp = dp = 2).
TEST(MoePlan, ExpertAndDenseGradientGroups) {
  const auto s = moe352("cp: 8, ep: 8, etp: 1, zero: 1");
  const StepPlan plan = plan_step(s);
  EXPECT_EQ(plan.dense_dp, 16);
  EXPECT_EQ(plan.expert_dp, 2);
  const double expert = plan.expert_params_at_max;
  EXPECT_DOUBLE_EQ(expert, 4 * 4 * 3.0 * 4096 * 14336);  // 4 layers x 4 experts
  const double dense = plan.params_max - expert;
  ASSERT_FALSE(plan.dp_comms.empty());
  EXPECT_NEAR(plan.dp_comms[0].bytes, (dense / 8 + expert) * 4, 1);
  // ZeRO-1 shards the experts' optimizer states over 2 ranks and the dense ones over
  // 16 (the most loaded stage, the last, holds the final norm besides: 1e-6 apart).
  const MemoryBreakdown mem = memory_per_gpu(s, plan);
  const double sharded = dense * 12 / 16 + expert * 12 / 2;
  EXPECT_NEAR(mem.optimizer, sharded, 1e-6 * sharded);
}

// Expectation: shared experts add to every token's FLOPs and to the parameters;
// pruned experts leave the active FLOPs alone and shrink the total.
TEST(MoeStats, SharedAndPrunedExperts) {
  auto m = moe352("cp: 8, ep: 8").model;
  const ParamCounts base = param_counts(m);
  m.moe.shared_experts = 1;
  m.moe.shared_expert_ffn_hidden = 2048;
  const ParamCounts shared = param_counts(m);
  EXPECT_DOUBLE_EQ(shared.mlp_active - base.mlp_active, 3.0 * 4096 * 2048);
  m.moe.shared_experts = 0;
  m.moe.prune.experts = 8;
  const ParamCounts pruned = param_counts(m);
  EXPECT_NEAR(base.mlp - pruned.mlp, 8 * (3.0 * 4096 * 14336 + 4096), 1);
  EXPECT_NEAR(pruned.mlp_active, base.mlp_active - 8 * 4096, 1);  // router rows only
}

// Expectation: 2:4 marks the experts' forward and input-gradient GEMMs sparse (the
// weight gradient stays dense), stores 1.125 bytes a weight and trains half of them.
TEST(MoePlan, TwoFourPruningMarksGemmsAndShrinksMemory) {
  const auto dense = moe352("cp: 8, ep: 8, etp: 1, zero: 1");
  const auto sparse = moe352("cp: 8, ep: 8, etp: 1, zero: 1", "prune: {pattern: \"2:4\"}");
  const StepPlan plan = plan_step(sparse);
  EXPECT_DOUBLE_EQ(sparse.model.moe.prune.sparsity, 0.5);
  EXPECT_EQ(find_op(plan.layer.forward, "expert.fc1")->sparse, SparseKernel::two_four);
  int sparse_bwd = 0;
  int dense_bwd = 0;
  for (const Op& op : plan.layer.backward.ops) {
    if (op.name != "expert.fc1") continue;
    (op.sparse == SparseKernel::two_four ? sparse_bwd : dense_bwd) += 1;
  }
  EXPECT_EQ(sparse_bwd, 1);
  EXPECT_EQ(dense_bwd, 1);
  const MemoryBreakdown a = memory_per_gpu(dense, plan_step(dense));
  const MemoryBreakdown b = memory_per_gpu(sparse, plan);
  const double expert = plan.expert_params_at_max;
  EXPECT_NEAR(a.weights - b.weights, expert * (2 - 1.125), 1e3);
  EXPECT_NEAR(a.gradients - b.gradients, expert * 0.5 * 4, 1e3);
  // Unstructured on dense kernels: the same GEMMs and memory as unpruned.
  const auto unstructured =
      moe352("cp: 8, ep: 8, etp: 1, zero: 1", "prune: {pattern: unstructured, sparsity: 0.5}");
  const StepPlan unstructured_plan = plan_step(unstructured);
  EXPECT_EQ(find_op(unstructured_plan.layer.forward, "expert.fc1")->sparse, SparseKernel::none);
  EXPECT_DOUBLE_EQ(memory_per_gpu(unstructured, plan_step(unstructured)).total(), a.total());
}

// Expectation: MoE keys that cannot take effect, or contradict each other, are
// errors naming the key.
TEST(MoeChecks, ContradictionsAreErrorsNamingTheKey) {
  const struct {
    const char* parallelism;
    const char* moe;
    const char* key;
  } cases[] = {
      {"cp: 8, ep: 8, etp: 2", "", "parallelism.etp"},
      {"tp: 8, ep: 8, etp: 1", "", "parallelism.etp"},  // etp 1 beside tp 8 without sp
      {"cp: 8, ep: 8", "zipf_exponent: 2", "model.moe.zipf_exponent"},
      {"cp: 8, ep: 8", "skew: histogram, histogram: [0.5, 0.5]", "model.moe.histogram"},
      {"cp: 8, ep: 8", "histogram: [1, 1]", "model.moe.histogram"},
      {"cp: 8, ep: 8",
       "skew: histogram, histogram: [1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, "
       "1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, "
       "1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308, 1e308]",
       "model.moe.histogram"},  // shares that overflow their sum
      {"cp: 8, ep: 8", "prune: {pattern: \"2:4\", sparsity: 0.3}", "model.moe.prune.sparsity"},
      {"cp: 8, ep: 8", "prune: {experts: 32}", "model.moe.prune.experts"},
      {"cp: 8, ep: 8", "prune: {experts: 4}", "parallelism.ep"},  // 28 experts over 8
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.parallelism) + " / " + c.moe);
    try {
      (void)moe352(c.parallelism, c.moe);
      ADD_FAILURE() << "expected an error at " << c.key;
    } catch (const scenario::ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find(c.key), std::string::npos) << e.what();
    }
  }
  try {
    (void)load(
        "cluster: {preset: selene-like, gpus: 8}\nmodel: {preset: llama3-8b, moe: "
        "{capacity_factor: 1.25}}\nparallelism: {tp: 8, global_batch: 8}\n");
    ADD_FAILURE() << "MoE keys on a dense model should be an error";
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("model.moe"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace myriad::models
