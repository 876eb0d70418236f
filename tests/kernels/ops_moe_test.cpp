// MoE routing, CPU backend: softmax weights and top-k choices against float64,
// capacity given choice by choice in token order, and permute/unpermute moving
// every kept token row (and nothing else) into and out of the expert buffers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "kernels/ops/moe_router.hpp"
#include "ops_test_support.hpp"

namespace myriad::kernels::ops {
namespace {

using testing::expect_close;
using testing::poisoned;
using testing::random_floats;

TEST(RouterCpu, TopKWeightsMatchFloat64) {
  std::mt19937_64 rng(61);
  for (const bool renormalize : {true, false}) {
    const RouterShape s{17, 7, 3, 100, renormalize};
    const auto logits = random_floats(rng, std::size_t{17} * 7, -3.0F, 3.0F);
    const Routing r = route_top_k_cpu(s, logits);
    std::vector<double> want(r.weight.size());
    for (std::size_t t = 0; t < 17; ++t) {
      std::vector<double> p(7);
      for (std::size_t e = 0; e < 7; ++e) p[e] = std::exp(static_cast<double>(logits[t * 7 + e]));
      const double z = std::accumulate(p.begin(), p.end(), 0.0);
      std::vector<std::size_t> order(7);
      std::iota(order.begin(), order.end(), 0U);
      std::sort(order.begin(), order.end(),
                [&p](std::size_t a, std::size_t b) { return p[a] > p[b]; });
      const double kept = p[order[0]] + p[order[1]] + p[order[2]];
      for (std::size_t c = 0; c < 3; ++c) {
        EXPECT_EQ(r.expert[t * 3 + c], static_cast<std::int32_t>(order[c]));
        want[t * 3 + c] = p[order[c]] / (renormalize ? kept : z);
        EXPECT_GE(r.slot[t * 3 + c], 0);  // capacity 100: nothing dropped
      }
    }
    expect_close(r.weight, want, 1e-6, 1e-5, "weight");
  }
}

TEST(RouterCpu, CapacityGoesChoiceByChoiceInTokenOrder) {
  // 4 tokens, 2 experts, top-2, capacity 3: expert 0 is every token's first choice.
  const std::vector<float> logits{2, 0, 2, 0, 2, 0, 2, 0};
  const Routing r = route_top_k_cpu(RouterShape{4, 2, 2, 3}, logits);
  EXPECT_EQ(r.slot, (std::vector<std::int32_t>{0, 0, 1, 1, 2, 2, -1, -1}));
  EXPECT_EQ(r.load, (std::vector<std::int32_t>{3, 3}));
  // Ties go to the lower expert index.
  const Routing tie = route_top_k_cpu(RouterShape{1, 3, 1, 1}, std::vector<float>{1, 1, 1});
  EXPECT_EQ(tie.expert[0], 0);
  EXPECT_EQ(expert_capacity(17, 4, 2, 1.25), 11);
}

TEST(RouterCpu, PermuteThenUnpermuteRestoresKeptTokens) {
  std::mt19937_64 rng(62);
  const std::int64_t hidden = 130;
  for (const std::int64_t capacity : {3, 40}) {
    const RouterShape s{17, 5, 2, capacity};
    const Routing r = route_top_k_cpu(s, random_floats(rng, std::size_t{17} * 5, -2.0F, 2.0F));
    const auto x = random_floats(rng, 17 * hidden);
    auto buffer = poisoned(static_cast<std::size_t>(5 * capacity * hidden));
    permute_tokens_cpu(s, r, hidden, x, buffer);
    auto y = poisoned(x.size());
    unpermute_tokens_cpu(s, r, hidden, buffer, y);
    std::vector<double> want(x.size(), 0.0);
    std::vector<double> buffer_want(buffer.size(), 0.0);
    for (std::size_t a = 0; a < r.slot.size(); ++a) {
      if (r.slot[a] < 0) continue;
      const auto row = static_cast<std::size_t>(r.expert[a] * capacity + r.slot[a]);
      for (std::size_t j = 0; j < static_cast<std::size_t>(hidden); ++j) {
        const double xv = x[(a / 2) * static_cast<std::size_t>(hidden) + j];
        want[(a / 2) * static_cast<std::size_t>(hidden) + j] += r.weight[a] * xv;
        buffer_want[row * static_cast<std::size_t>(hidden) + j] = xv;
      }
    }
    expect_close(buffer, buffer_want, 0.0, 0.0, "buffer");
    expect_close(y, want, 1e-6, 1e-6, "y");
  }
}

TEST(RouterCpu, RefusesBadShapesAndDescribesTraffic) {
  EXPECT_FALSE(router_can_implement(RouterShape{4, 2, 3, 1}).empty());
  EXPECT_FALSE(router_can_implement(RouterShape{4, 2, 1, 0}).empty());
  EXPECT_THROW(route_top_k_cpu(RouterShape{4, 2, 1, 2}, std::vector<float>(7)),
               std::invalid_argument);
  EXPECT_DOUBLE_EQ(router_op(RouterShape{8, 4, 2, 4}).bytes, 4.0 * 32 + 12.0 * 16);
  EXPECT_DOUBLE_EQ(permute_op(RouterShape{8, 4, 2, 4}, 16, 2.0).bytes, 2.0 * 16 * 16 * 2.0);
}

}  // namespace
}  // namespace myriad::kernels::ops
