// AdamW and Lion, CPU backend: several steps against a float64 reference, with
// and without cautious weight decay, and the mask's rule checked coordinate by
// coordinate (decay only where update and parameter share a sign).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "kernels/ops/optimizer.hpp"
#include "ops_test_support.hpp"

namespace myriad::kernels::ops {
namespace {

using testing::expect_close;
using testing::random_floats;
using testing::to_double;
using Vec = std::vector<double>;

double decay_ref(double wd, bool cautious, double u, double p) {
  return (!cautious || u * p > 0.0) ? wd * p : 0.0;
}

struct AdamState {
  Vec p, m, v;
};

void adamw_ref(const AdamWArguments& a, AdamState& st, const Vec& g) {
  for (std::size_t i = 0; i < g.size(); ++i) {
    st.m[i] = a.beta1 * st.m[i] + (1.0 - a.beta1) * g[i];
    st.v[i] = a.beta2 * st.v[i] + (1.0 - a.beta2) * g[i] * g[i];
    const double mhat = st.m[i] / (1.0 - std::pow(static_cast<double>(a.beta1), a.step));
    const double vhat = st.v[i] / (1.0 - std::pow(static_cast<double>(a.beta2), a.step));
    const double u = mhat / (std::sqrt(vhat) + a.eps);
    st.p[i] -= a.lr * (u + decay_ref(a.weight_decay, a.cautious_decay, u, st.p[i]));
  }
}

TEST(AdamWCpu, StepsMatchFloat64) {
  for (const bool cautious : {false, true}) {
    std::mt19937_64 rng(cautious ? 51 : 52);
    const std::size_t n = 1031;
    auto p = random_floats(rng, n);
    std::vector<float> m(n, 0.0F), v(n, 0.0F);
    AdamState ref{to_double(p), Vec(n, 0.0), Vec(n, 0.0)};
    AdamWArguments a{1e-2F, 0.9F, 0.95F, 1e-8F, 0.1F, 1, cautious};
    for (std::int64_t step = 1; step <= 5; ++step) {
      a.step = step;
      const auto g = random_floats(rng, n);
      adamw_step_cpu(a, p, g, m, v);
      adamw_ref(a, ref, to_double(g));
    }
    expect_close(p, ref.p, 1e-6, 1e-5, "param");
    expect_close(m, ref.m, 1e-7, 1e-5, "m");
    expect_close(v, ref.v, 1e-7, 1e-5, "v");
  }
}

TEST(AdamWCpu, CautiousDecaySkipsDisagreeingCoordinates) {
  // First step: u = g / (|g| + eps) ~ sign(g). p = +1 with g > 0 (u > 0) agrees, p = +1
  // with g < 0 disagrees, so only the first coordinate decays.
  std::vector<float> p{1.0F, 1.0F};
  const std::vector<float> g{0.5F, -0.5F};
  std::vector<float> m(2, 0.0F), v(2, 0.0F);
  const AdamWArguments a{0.1F, 0.9F, 0.999F, 1e-8F, 0.5F, 1, true};
  adamw_step_cpu(a, p, g, m, v);
  EXPECT_NEAR(p[0], 1.0 - 0.1 * (1.0 + 0.5), 1e-6);
  EXPECT_NEAR(p[1], 1.0 + 0.1 * 1.0, 1e-6);
}

void lion_ref(const LionArguments& a, Vec& p, Vec& m, const Vec& g) {
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double c = a.beta1 * m[i] + (1.0 - a.beta1) * g[i];
    const double u = c > 0.0 ? 1.0 : (c < 0.0 ? -1.0 : 0.0);
    p[i] -= a.lr * (u + decay_ref(a.weight_decay, a.cautious_decay, u, p[i]));
    m[i] = a.beta2 * m[i] + (1.0 - a.beta2) * g[i];
  }
}

TEST(LionCpu, StepsMatchFloat64) {
  for (const bool cautious : {false, true}) {
    std::mt19937_64 rng(cautious ? 53 : 54);
    const std::size_t n = 517;
    auto p = random_floats(rng, n);
    auto m = random_floats(rng, n, -0.1F, 0.1F);
    Vec pd = to_double(p), md = to_double(m);
    const LionArguments a{1e-3F, 0.9F, 0.99F, 0.3F, cautious};
    for (int step = 0; step < 5; ++step) {
      const auto g = random_floats(rng, n);
      lion_step_cpu(a, p, g, m);
      lion_ref(a, pd, md, to_double(g));
    }
    expect_close(p, pd, 1e-6, 1e-5, "param");
    expect_close(m, md, 1e-7, 1e-5, "m");
  }
}

TEST(OptimizerCpu, RefusesBadArgumentsAndDescribesTraffic) {
  EXPECT_FALSE(adamw_can_implement(AdamWArguments{1e-3F, 1.0F}).empty());
  EXPECT_FALSE(adamw_can_implement(AdamWArguments{1e-3F, 0.9F, 0.99F, 1e-8F, 0.0F, 0}).empty());
  EXPECT_FALSE(lion_can_implement(LionArguments{1e-3F, 0.9F, 0.99F, -1.0F}).empty());
  std::vector<float> p(3), g(2), m(3);
  EXPECT_THROW(lion_step_cpu(LionArguments{}, p, g, m), std::invalid_argument);
  EXPECT_EQ(adamw_op(10).cls, models::OpClass::optimizer);
  EXPECT_DOUBLE_EQ(adamw_op(10).bytes, 4.0 * 10 * 7);
}

}  // namespace
}  // namespace myriad::kernels::ops
