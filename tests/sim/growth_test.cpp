// The model-growth what-if (training.growth, sim/planning/growth.hpp): the scenario
// keys, the small model's training on the same cluster, and the days, GPU-hours
// and cost that add up the two phases.
#include "sim/planning/growth.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "models/scenario/loader.hpp"
#include "models/transformer/model_stats.hpp"
#include "sim/analytic/estimator.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using testing::h100;
using testing::kShipped;

const std::string kGrown =
    "cluster: {preset: llama3-like, gpus: 256, price_per_gpu_hour: 2.5}\n"
    "model: {preset: llama3-70b}\n"
    "parallelism: {tp: 8, sp: true, pp: 4, virtual_stages: 5, zero: 1, global_batch: 256}\n"
    "overlap: {tp: true, pp: true, dp: true}\n"
    "training:\n"
    "  tokens: 1T\n"
    "  growth: {from: llama3-8b, tokens: 100B, saved_fraction: 0.3, source: a test}\n";

models::scenario::Scenario grown(const std::string& extra = "") {
  return models::scenario::load_scenario_text(kGrown + extra, "grown.yaml", kShipped);
}

std::string error_of(const std::string& text) {
  try {
    (void)models::scenario::load_scenario_text(text, "grown.yaml", kShipped);
  } catch (const models::scenario::ScenarioError& e) {
    return e.what();
  }
  return "";
}

// Expectation: `from` names a model preset, read and derived as `model:` would be
// (Llama 3 8B: 32 layers, 8 KV heads, SwiGLU FFN of 14,336).
TEST(Growth, FromNamesAModelPreset) {
  const auto s = grown();
  const auto& g = s.training.growth;
  ASSERT_TRUE(g.given());
  EXPECT_EQ(g.from, "llama3-8b");
  EXPECT_EQ(g.model.layers, 32);
  EXPECT_EQ(g.model.hidden, 4096);
  EXPECT_EQ(g.model.kv_heads, 8);
  EXPECT_EQ(g.model.ffn_hidden, 14336);
  EXPECT_DOUBLE_EQ(g.tokens, 100e9);
  EXPECT_DOUBLE_EQ(g.saved_fraction, 0.3);
}

// Expectation: all four keys or none, the source stated, a saving below 1, a
// preset that exists; each error names its key.
TEST(Growth, TheKeysAreCheckedTogether) {
  const std::string base = kGrown.substr(0, kGrown.find("  growth:"));
  EXPECT_EQ(error_of(base), "");
  const auto with = [&](const std::string& growth) {
    return error_of(base + "  growth: " + growth + "\n");
  };
  EXPECT_NE(with("{from: llama3-8b, tokens: 100B, saved_fraction: 0.3}")
                .find("training.growth.source: missing"),
            std::string::npos);
  EXPECT_NE(with("{from: llama3-8b, tokens: 100B, source: x}")
                .find("training.growth.saved_fraction: missing"),
            std::string::npos);
  EXPECT_NE(with("{from: llama3-8b, tokens: 100B, saved_fraction: 1, source: x}")
                .find("training.growth.saved_fraction: expected below 1"),
            std::string::npos);
  EXPECT_NE(with("{from: llama3-9b, tokens: 100B, saved_fraction: 0.3, source: x}")
                .find("training.growth.from: no models preset named 'llama3-9b'"),
            std::string::npos);
  EXPECT_NE(with("{from: llama3-8b, tokens: 100B, saved_fraction: 0.3, source: x, to: y}")
                .find("training.growth.to: unknown key"),
            std::string::npos);
  EXPECT_NE(with("{from: llama3-8b, tokens: 0, saved_fraction: 0.3, source: x}")
                .find("training.growth.tokens"),
            std::string::npos);
}

// Expectation: the small model trains on the same GPUs with the same global batch
// in the fastest layout that fits, for growth.tokens: its days are its tokens over
// its estimated rate, and its GPU-hours its days x 24 x GPUs.
TEST(Growth, TheSmallModelTrainsInItsFastestLayout) {
  const auto s = grown();
  const GrowthPhase g = plan_growth(s, h100());
  EXPECT_EQ(g.from, "llama3-8b");
  EXPECT_EQ(g.small.model.layers, 32);
  EXPECT_EQ(g.small.cluster.gpus, 256);
  EXPECT_EQ(g.small.parallelism.global_batch, 256);
  EXPECT_GT(g.layouts, 1000U);
  const StepReport r = estimate(g.small, h100());
  EXPECT_TRUE(r.fits);
  EXPECT_NEAR(g.metrics.days, 100e9 / r.tokens_per_s / 86400, 1e-9 * g.metrics.days);
  EXPECT_NEAR(g.metrics.gpu_hours, g.metrics.days * 24 * 256, 1e-9 * g.metrics.gpu_hours);
  // Faster a token than the model itself, which is 9 times its size.
  EXPECT_GT(r.tokens_per_s, estimate(s, h100()).tokens_per_s);
}

// Expectation: grown = small + (1 - F) x own, for days, GPU-hours and cost; at F
// = 0 growing only adds the small model's training.
TEST(Growth, TheTwoPhasesAddUp) {
  const auto s = grown();
  const GrowthPhase g = growth_phase(s, h100());
  const LayoutMetrics own = metrics_of(s, estimate(s, h100()));
  const LayoutMetrics m = with_growth(own, g);
  EXPECT_NEAR(m.days, g.metrics.days + 0.7 * own.days, 1e-12 * m.days);
  EXPECT_NEAR(m.gpu_hours, g.metrics.gpu_hours + 0.7 * own.gpu_hours, 1e-12 * m.gpu_hours);
  EXPECT_NEAR(m.cost, 2.5 * m.gpu_hours, 1e-9 * m.cost);
  EXPECT_EQ(m.step_time_s, own.step_time_s);
  auto none = s;
  none.training.growth.saved_fraction = 0;
  const GrowthPhase g0 = growth_phase(none, h100());  // the search remembered, F not
  EXPECT_EQ(g0.saved_fraction, 0);
  EXPECT_NEAR(with_growth(own, g0).days, own.days + g.metrics.days, 1e-12 * own.days);
}

// Expectation: growth starts from a smaller model; from a larger one it is refused.
TEST(Growth, FromALargerModelIsRefused) {
  auto s = grown();
  std::swap(s.model, s.training.growth.model);
  EXPECT_THROW((void)plan_growth(s, h100()), std::invalid_argument);
}

}  // namespace
}  // namespace myriad::sim
