// MoE routing backward, CPU backend: every gradient against central finite
// differences of a float64 forward with the routing decisions held fixed, on
// odd shapes, with and without renormalization, with and without dropped tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "kernels/ops/moe_router.hpp"
#include "ops_test_support.hpp"

namespace myriad::kernels::ops {
namespace {

using testing::expect_close;
using testing::numeric_grad;
using testing::poisoned;
using testing::random_floats;
using testing::to_double;
using Vec = std::vector<double>;

// Float64 router weights for the experts `r` chose: softmax, then renormalized.
Vec weights_reference(const RouterShape& s, const Routing& r, const Vec& logits) {
  const auto ne = static_cast<std::size_t>(s.experts);
  const auto k = static_cast<std::size_t>(s.top_k);
  Vec w(r.expert.size());
  for (std::size_t t = 0; t < static_cast<std::size_t>(s.tokens); ++t) {
    double mx = logits[t * ne];
    for (std::size_t e = 1; e < ne; ++e) mx = std::max(mx, logits[t * ne + e]);
    double z = 0.0;
    for (std::size_t e = 0; e < ne; ++e) z += std::exp(logits[t * ne + e] - mx);
    double kept = 0.0;
    for (std::size_t c = 0; c < k; ++c) {
      const auto e = static_cast<std::size_t>(r.expert[t * k + c]);
      w[t * k + c] = std::exp(logits[t * ne + e] - mx) / z;
      kept += w[t * k + c];
    }
    for (std::size_t c = 0; s.renormalize && c < k; ++c) w[t * k + c] /= kept;
  }
  return w;
}

// Float64 unpermute: y[t] = sum over kept choices of weight * buffer[expert, slot].
Vec unpermute_reference(const RouterShape& s, const Routing& r, std::size_t hidden,
                        const Vec& buffer, const Vec& weight) {
  const auto k = static_cast<std::size_t>(s.top_k);
  Vec y(static_cast<std::size_t>(s.tokens) * hidden, 0.0);
  for (std::size_t a = 0; a < r.slot.size(); ++a) {
    if (r.slot[a] < 0) continue;
    const auto row = static_cast<std::size_t>(r.expert[a] * s.capacity + r.slot[a]) * hidden;
    for (std::size_t j = 0; j < hidden; ++j) y[(a / k) * hidden + j] += weight[a] * buffer[row + j];
  }
  return y;
}

// Float64 permute: buffer[expert, slot] = x[token] for kept choices, 0 elsewhere.
Vec permute_reference(const RouterShape& s, const Routing& r, std::size_t hidden, const Vec& x) {
  const auto k = static_cast<std::size_t>(s.top_k);
  Vec buffer(static_cast<std::size_t>(s.experts * s.capacity) * hidden, 0.0);
  for (std::size_t a = 0; a < r.slot.size(); ++a) {
    if (r.slot[a] < 0) continue;
    const auto row = static_cast<std::size_t>(r.expert[a] * s.capacity + r.slot[a]) * hidden;
    for (std::size_t j = 0; j < hidden; ++j) buffer[row + j] = x[(a / k) * hidden + j];
  }
  return buffer;
}

bool any_dropped(const Routing& r) {
  return std::any_of(r.slot.begin(), r.slot.end(), [](std::int32_t slot) { return slot < 0; });
}

TEST(RouterBackwardCpu, DlogitsMatchFiniteDifferences) {
  std::mt19937_64 rng(71);
  for (const RouterShape& s : {RouterShape{9, 7, 3, 100, true}, RouterShape{9, 7, 3, 100, false},
                               RouterShape{5, 1, 1, 5, true}, RouterShape{6, 4, 4, 2, false}}) {
    SCOPED_TRACE(::testing::Message() << "experts " << s.experts << " top_k " << s.top_k
                                      << " renormalize " << s.renormalize);
    const auto logits =
        random_floats(rng, static_cast<std::size_t>(s.tokens * s.experts), -3.0F, 3.0F);
    const auto dweight = random_floats(rng, static_cast<std::size_t>(s.tokens * s.top_k));
    const Routing r = route_top_k_cpu(s, logits);
    auto dlogits = poisoned(logits.size());
    route_top_k_backward_cpu(s, r, logits, dweight, dlogits);
    const auto f = [&](const Vec& l) { return weights_reference(s, r, l); };
    expect_close(dlogits, numeric_grad(f, to_double(logits), to_double(dweight)), 1e-5, 1e-4,
                 "dlogits");
  }
}

TEST(RouterBackwardCpu, UnpermuteGradsMatchFiniteDifferences) {
  std::mt19937_64 rng(72);
  const std::int64_t hidden = 13;
  const auto h = static_cast<std::size_t>(hidden);
  for (const std::int64_t capacity : {2, 20}) {
    const RouterShape s{11, 5, 2, capacity};
    const Routing r = route_top_k_cpu(s, random_floats(rng, 55, -2.0F, 2.0F));
    EXPECT_EQ(any_dropped(r), capacity == 2);
    const auto buffer = random_floats(rng, static_cast<std::size_t>(5 * capacity) * h);
    const auto dy = random_floats(rng, static_cast<std::size_t>(11) * h);
    auto dbuffer = poisoned(buffer.size());
    auto dweight = poisoned(r.weight.size());
    unpermute_tokens_backward_cpu(s, r, hidden, dy, buffer, dbuffer, dweight);
    const Vec wd = to_double(r.weight);
    const Vec bd = to_double(buffer);
    const auto by_buffer = [&](const Vec& b) { return unpermute_reference(s, r, h, b, wd); };
    const auto by_weight = [&](const Vec& w) { return unpermute_reference(s, r, h, bd, w); };
    expect_close(dbuffer, numeric_grad(by_buffer, bd, to_double(dy)), 1e-6, 1e-5, "dbuffer");
    expect_close(dweight, numeric_grad(by_weight, wd, to_double(dy)), 1e-5, 1e-5, "dweight");
  }
}

TEST(RouterBackwardCpu, PermuteGradMatchesFiniteDifferences) {
  std::mt19937_64 rng(73);
  const std::int64_t hidden = 7;
  const auto h = static_cast<std::size_t>(hidden);
  for (const std::int64_t capacity : {1, 3, 30}) {
    const RouterShape s{13, 4, 3, capacity};
    const Routing r = route_top_k_cpu(s, random_floats(rng, 52, -2.0F, 2.0F));
    const auto x = random_floats(rng, static_cast<std::size_t>(13) * h);
    const auto dbuffer = random_floats(rng, static_cast<std::size_t>(4 * capacity) * h);
    auto dx = poisoned(x.size());
    permute_tokens_backward_cpu(s, r, hidden, dbuffer, dx);
    const auto f = [&](const Vec& xv) { return permute_reference(s, r, h, xv); };
    expect_close(dx, numeric_grad(f, to_double(x), to_double(dbuffer)), 1e-6, 1e-5, "dx");
  }
}

TEST(RouterBackwardCpu, RefusesMismatchedSizes) {
  const RouterShape s{4, 2, 1, 2};
  const Routing r = route_top_k_cpu(s, std::vector<float>{1, 0, 0, 1, 1, 0, 0, 1});
  std::vector<float> dlogits(8);
  EXPECT_THROW(
      route_top_k_backward_cpu(s, r, std::vector<float>(8), std::vector<float>(3), dlogits),
      std::invalid_argument);
  std::vector<float> dx(std::size_t{4} * 3);
  EXPECT_THROW(permute_tokens_backward_cpu(s, r, 3, std::vector<float>(5), dx),
               std::invalid_argument);
}

}  // namespace
}  // namespace myriad::kernels::ops
