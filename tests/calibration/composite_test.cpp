// The composite layer runs the work the model describes: its GEMM and attention
// FLOPs are those of models/transformer's layer program for the same shape.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "calibration/check/composite.hpp"
#include "calibration/measure/cases.hpp"
#include "models/transformer/layer_program.hpp"

namespace myriad::calibration {
namespace {

double tensor_flops(const std::vector<models::Op>& ops) {
  double f = 0;
  for (const auto& op : ops) {
    if (op.cls == models::OpClass::gemm || op.cls == models::OpClass::attention) f += op.flops;
  }
  return f;
}

// Round rates: 10 GFLOP/s, 10 GB/s, every efficiency 1 (attention 0.5).
sim::DeviceProfile toy_profile() {
  sim::DeviceProfile p;
  p.bf16_flops = 1e10;
  p.hbm_bw_Bps = 1e10;
  p.gemm_efficiency = 1;
  p.sms = 1;
  p.gemm_tiles = {{1, 1, 1}};
  p.attention_fwd_efficiency = 0.5;
  p.attention_bwd_efficiency = 0.5;
  p.memory_efficiency = 1;
  p.nvlink_busbw = {{1, 1e9}};
  return p;
}

TEST(CompositeLayer, DoesTheWorkOfTheModelsLayerProgram) {
  const LayerDims d{2, 96, 128, 4, 320};
  models::scenario::ModelSpec m;
  m.hidden = 128;
  m.heads = 4;
  m.kv_heads = 4;
  m.ffn_hidden = 320;
  m.activation = models::scenario::Activation::gelu;
  models::ShardShape sh;
  sh.micro_batch = 2;
  sh.seq = 96;
  const models::LayerProgram layer = models::transformer_layer(m, sh);
  const double model = tensor_flops(layer.forward.ops) + tensor_flops(layer.backward.ops);
  EXPECT_NEAR(tensor_flops(layer_ops(d)) / model, 1, 1e-12);
}

TEST(CompositeLayer, RunsChecksAndIsPriced) {
  const LayerDims d{1, 32, 64, 2, 96};
  EXPECT_EQ(layer_ops(d).size(), 24U);  // 10 forward kernels, 14 backward
  const sim::DeviceProfile p = toy_profile();
  for (const Composite& c : {dp_composite(d, 3)}) {
    const CompositeWork w = c.build();
    EXPECT_EQ(w.instance.check(), "pass") << c.row.name;
    const double predicted = predict_composite(w, p, {1e-5, 3, 1.0});
    double compute = 0;
    for (const auto& op : w.ops) compute += op.flops;
    EXPECT_GT(predicted, compute / 1e10) << c.row.name;
  }
  // The data-parallel step all-reduces every weight gradient of the layer.
  const CompositeWork dp = dp_composite(d, 2).build();
  ASSERT_EQ(dp.rows.size(), 1U);
  EXPECT_EQ(dp.rows[0].collective.bytes, 4.0 * (4 * 64 * 64 + 2 * 64 * 96 + 4 * 64));
}

// A small model of the given sizes: GPT-like (LayerNorm, GeLU) or Llama-like
// (RMSNorm, SwiGLU).
models::scenario::ModelSpec small_model(int hidden, int heads, int kv_heads, int ffn, bool llama) {
  models::scenario::ModelSpec m;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn;
  m.norm = llama ? models::scenario::Norm::rmsnorm : models::scenario::Norm::layernorm;
  m.activation = llama ? models::scenario::Activation::swiglu : models::scenario::Activation::gelu;
  return m;
}

// Expectation: the layer-program composite predicts the model's own ops, at fp32
// (twice the bf16 traffic), so that a change to the model shows in the check.
TEST(ProgramComposite, PredictsTheModelsOwnOps) {
  models::scenario::ModelSpec m = small_model(128, 4, 2, 320, true);
  models::ShardShape sh;
  sh.micro_batch = 2;
  sh.seq = 64;
  const models::LayerProgram layer = models::transformer_layer(m, sh);
  std::vector<models::Op> model = layer.forward.ops;
  model.insert(model.end(), layer.backward.ops.begin(), layer.backward.ops.end());
  const std::vector<models::Op> ops = program_ops(m, sh);
  ASSERT_EQ(ops.size(), model.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(models::kernel_family(ops[i]), models::kernel_family(model[i])) << i;
    EXPECT_EQ(ops[i].flops, model[i].flops) << ops[i].name;
    EXPECT_EQ(ops[i].bytes, 2 * model[i].bytes) << ops[i].name;
  }
  EXPECT_EQ(models::kernel_family(ops.front()), "norm.rms.fwd");
  m.norm = models::scenario::Norm::layernorm;
  EXPECT_EQ(models::kernel_family(program_ops(m, sh).front()), "norm.layer.fwd");
}

// Expectation: it runs every op (finite outputs) and is priced above its FLOPs'
// time at peak.
TEST(ProgramComposite, RunsChecksAndIsPriced) {
  for (const bool llama : {false, true}) {
    const models::scenario::ModelSpec m = small_model(64, 4, llama ? 2 : 4, 96, llama);
    models::ShardShape sh;
    sh.micro_batch = 1;
    sh.seq = 32;
    const Composite c = program_composite(m, sh);
    const CompositeWork w = c.build();
    EXPECT_EQ(w.instance.check(), "pass") << c.row.name;
    const sim::DeviceProfile p = toy_profile();
    double flops = 0;
    for (const auto& op : w.ops) flops += op.flops;
    EXPECT_GT(predict_composite(w, p, {1e-5, 1, 1.0}), flops / 1e10) << c.row.name;
  }
}

// Expectation: what one rank's CPU kernels cannot run is refused, saying why.
TEST(ProgramComposite, RefusesWhatOneRanksKernelsCannotRun) {
  models::scenario::ModelSpec m = small_model(64, 4, 4, 96, false);
  models::ShardShape sh;
  sh.seq = 32;
  sh.tp = 2;
  EXPECT_THROW(program_composite(m, sh), std::invalid_argument);
  sh.tp = 1;
  m.moe.experts = 4;
  m.moe.top_k = 2;
  m.moe.expert_ffn_hidden = 32;
  try {
    (void)program_composite(m, sh);
    ADD_FAILURE() << "an MoE layer has no CPU kernel for its router";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("has no CPU kernel"), std::string::npos) << e.what();
  }
}
}  // namespace
}  // namespace myriad::calibration

namespace myriad::calibration {
namespace {

// The grid's inputs: element i depends on the seed and i alone, so a buffer
// that several threads fill equals one filled by a single thread, prefix for
// prefix; values lie in [-1, 1) and average near zero.
TEST(CalibrationInputs, UniformValuesDoNotDependOnHowManyThreadsDrewThem) {
  const std::vector<float> large = uniform_floats(std::size_t{1} << 24, 7);  // several threads
  const std::vector<float> small = uniform_floats(1000, 7);                  // one
  ASSERT_EQ(large.size(), std::size_t{1} << 24);
  for (std::size_t i = 0; i < small.size(); ++i) ASSERT_EQ(large[i], small[i]) << i;
  double sum = 0;
  for (const float x : large) {
    ASSERT_GE(x, -1.0F);
    ASSERT_LT(x, 1.0F);
    sum += x;
  }
  EXPECT_NEAR(sum / static_cast<double>(large.size()), 0.0, 1e-3);
  const std::vector<float> tail = uniform_floats((std::size_t{1} << 24) - 3, 7);
  EXPECT_EQ(tail.back(), large[tail.size() - 1]);
  EXPECT_NE(uniform_floats(16, 8), uniform_floats(16, 7));
}

}  // namespace
}  // namespace myriad::calibration
