// Flash-style attention, CPU backend: forward (output and log-sum-exp) against a
// float64 attention that builds the full score matrix, and dq, dk, dv against
// finite differences of it; causal, sliding window, GQA/MQA, several key tiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "kernels/ops/attention.hpp"
#include "ops_test_support.hpp"

namespace myriad::kernels::ops {
namespace {

using testing::expect_close;
using testing::numeric_grad;
using testing::poisoned;
using testing::random_floats;
using testing::to_double;
using Vec = std::vector<double>;

struct Reference {
  Vec o;    // [batch, q_heads, seq, head_dim]
  Vec lse;  // [batch, q_heads, seq]
};

Reference attention_reference(const AttentionShape& s, const Vec& q, const Vec& k, const Vec& v) {
  const auto d = static_cast<std::size_t>(s.head_dim);
  const auto n = static_cast<std::size_t>(s.seq);
  const double scale = 1.0 / std::sqrt(static_cast<double>(s.head_dim));
  Reference r{Vec(q.size(), 0.0), Vec(q.size() / d)};
  for (std::size_t bh = 0; bh < static_cast<std::size_t>(s.batch * s.q_heads); ++bh) {
    const std::size_t b = bh / static_cast<std::size_t>(s.q_heads);
    const std::size_t h = bh % static_cast<std::size_t>(s.q_heads);
    const std::size_t kvh = b * static_cast<std::size_t>(s.kv_heads) +
                            h / static_cast<std::size_t>(s.q_heads / s.kv_heads);
    for (std::size_t i = 0; i < n; ++i) {
      Vec score(n, -INFINITY);
      double mx = -INFINITY;
      for (std::size_t j = 0; j < n; ++j) {
        if (!attention_allowed(s, static_cast<std::int64_t>(i), static_cast<std::int64_t>(j)))
          continue;
        double acc = 0.0;
        for (std::size_t c = 0; c < d; ++c)
          acc += q[(bh * n + i) * d + c] * k[(kvh * n + j) * d + c];
        score[j] = acc * scale;
        mx = std::max(mx, score[j]);
      }
      double sum = 0.0;
      for (std::size_t j = 0; j < n; ++j) sum += std::exp(score[j] - mx);
      for (std::size_t j = 0; j < n; ++j) {
        const double p = std::exp(score[j] - mx) / sum;
        for (std::size_t c = 0; c < d; ++c)
          r.o[(bh * n + i) * d + c] += p * v[(kvh * n + j) * d + c];
      }
      r.lse[bh * n + i] = mx + std::log(sum);
    }
  }
  return r;
}

struct Case {
  AttentionShape shape;
  bool check_backward;
};

std::vector<Case> cases() {
  // batch, q_heads, kv_heads, seq, head_dim, causal, window, scale, key_tile
  return {
      {{1, 2, 2, 17, 8, true, 0, 0.0F, 5}, true},    // causal MHA, 4 key tiles
      {{2, 4, 2, 17, 8, true, 4, 0.0F, 3}, true},    // sliding window, GQA
      {{1, 3, 1, 13, 5, false, 0, 0.0F, 64}, true},  // bidirectional MQA, one tile
      {{1, 2, 1, 9, 4, false, 3, 0.0F, 2}, true},    // bidirectional window
      {{1, 1, 1, 1, 3, true, 0, 0.0F, 64}, true},    // a single token
      {{1, 4, 2, 130, 16, true, 50, 0.0F, 32}, false},
      {{2, 2, 1, 130, 16, true, 0, 0.0F, 17}, false},
  };
}

TEST(AttentionCpu, MatchesFloat64WithoutScoreMatrix) {
  std::mt19937_64 rng(41);
  for (const Case& c : cases()) {
    const AttentionShape& s = c.shape;
    SCOPED_TRACE(::testing::Message()
                 << "seq " << s.seq << " heads " << s.q_heads << "/" << s.kv_heads << " causal "
                 << s.causal << " window " << s.window << " tile " << s.key_tile);
    const auto nq = static_cast<std::size_t>(s.batch * s.q_heads * s.seq * s.head_dim);
    const auto nkv = static_cast<std::size_t>(s.batch * s.kv_heads * s.seq * s.head_dim);
    const auto q = random_floats(rng, nq, -2.0F, 2.0F);
    const auto k = random_floats(rng, nkv, -2.0F, 2.0F);
    const auto v = random_floats(rng, nkv);
    auto o = poisoned(nq);
    auto lse = poisoned(nq / static_cast<std::size_t>(s.head_dim));
    attention_forward_cpu(s, q, k, v, o, lse);
    const Vec qd = to_double(q), kd = to_double(k), vd = to_double(v);
    const Reference want = attention_reference(s, qd, kd, vd);
    expect_close(o, want.o, 1e-5, 1e-5, "o");
    expect_close(lse, want.lse, 1e-5, 1e-5, "lse");
    if (!c.check_backward) continue;
    const auto dout = random_floats(rng, nq);
    auto dq = poisoned(nq);
    auto dk = poisoned(nkv);
    auto dv = poisoned(nkv);
    attention_backward_cpu(s, q, k, v, o, lse, dout, AttentionGrads{dq, dk, dv});
    const Vec dod = to_double(dout);
    const auto fq = [&](const Vec& x) { return attention_reference(s, x, kd, vd).o; };
    const auto fk = [&](const Vec& x) { return attention_reference(s, qd, x, vd).o; };
    const auto fv = [&](const Vec& x) { return attention_reference(s, qd, kd, x).o; };
    expect_close(dq, numeric_grad(fq, qd, dod), 1e-4, 1e-4, "dq");
    expect_close(dk, numeric_grad(fk, kd, dod), 1e-4, 1e-4, "dk");
    expect_close(dv, numeric_grad(fv, vd, dod), 1e-4, 1e-4, "dv");
  }
}

TEST(AttentionCpu, MaskAndDescriptor) {
  const AttentionShape causal{1, 1, 1, 8, 4, true, 3};
  EXPECT_TRUE(attention_allowed(causal, 5, 5));
  EXPECT_TRUE(attention_allowed(causal, 5, 3));
  EXPECT_FALSE(attention_allowed(causal, 5, 2));  // outside the window of 3
  EXPECT_FALSE(attention_allowed(causal, 5, 6));  // the future
  // Full causal mask over 8 tokens: 36 pairs, 4*d FLOPs each, per head.
  const models::Op op = attention_op(AttentionShape{2, 3, 1, 8, 4, true, 0}, 2.0);
  EXPECT_EQ(op.cls, models::OpClass::attention);
  EXPECT_DOUBLE_EQ(op.flops, 4.0 * 2 * 3 * 36 * 4);
  EXPECT_FALSE(attention_can_implement(AttentionShape{1, 3, 2, 8, 4}).empty());
  EXPECT_FALSE(attention_can_implement(AttentionShape{1, 2, 2, 8, 4, true, 0, 0.0F, 0}).empty());
}

}  // namespace
}  // namespace myriad::kernels::ops
