// Dropout's masks and kernels exist only where there is dropout (model.dropout):
// Megatron-LM's default 0.1 stores a 1-byte mask per element of each of a layer's
// two hidden dropouts and of the attention's probabilities (unfused); at 0,
// PyTorch's dropout returns its input and stores nothing. By hand, per token.
#include <gtest/gtest.h>

#include <string>

#include "models/plan/memory.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/loader.hpp"
#include "models/transformer/layer_program.hpp"
#include "myriad_source_paths.hpp"

namespace myriad::models {
namespace {

const scenario::LoadOptions kShipped{{MYRIAD_SCENARIO_DIR}};

scenario::Scenario load(const std::string& model, const std::string& parallelism,
                        const std::string& training = "") {
  return scenario::load_scenario_text("cluster: {preset: llama3-like, gpus: 64}\nmodel: {" + model +
                                          "}\nparallelism: {" + parallelism + "}\ntraining: {" +
                                          training + "}\n",
                                      "dropout_test.yaml", kShipped);
}

const Op& op_named(const Phase& phase, const std::string& name) {
  for (const Op& op : phase.ops) {
    if (op.name == name) return op;
  }
  throw std::runtime_error("no op " + name);
}

// The shipped Llama 3 preset trains without dropout; with Megatron-LM's default a
// layer keeps two 1-byte masks of h per token more, split by sequence under sp.
TEST(Dropout, MasksOnlyWithDropout) {
  const std::string layout = "tp: 4, sp: true, global_batch: 64";
  const auto none = load("preset: llama3-8b", layout);
  const auto some = load("preset: llama3-8b, dropout: 0.1", layout);
  ASSERT_EQ(none.model.dropout, 0);
  const double h = none.model.hidden;
  const double tokens = none.model.seq_length;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(some) - layer_activation_bytes(none), tokens * 2 * h / 4);
  // The embedding's output is the first layer's input, which that layer keeps:
  // only its dropout mask is the embedding's own.
  const StepPlan plan = plan_step(some);
  const auto first_stage = [](const scenario::Scenario& s) {
    return stage_memory(s, plan_step(s), 0).activations;
  };
  EXPECT_DOUBLE_EQ(first_stage(some) - first_stage(none),
                   plan.layers_by_stage[0] * tokens * 2 * h / 4 + tokens * h / 4);
  // Full recomputation keeps the layer's input either way.
  auto full_none = none;
  auto full_some = some;
  full_none.parallelism.recompute = full_some.parallelism.recompute = scenario::Recompute::full;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(full_none), layer_activation_bytes(full_some));
}

// Unfused attention keeps the softmax's output (2 B per score); dropout adds its
// mask (1 B) and output (2 B): 5as^2b of Korthikanti et al. against 2.
TEST(Dropout, UnfusedAttentionKeepsProbabilitiesOnly) {
  const std::string layout = "tp: 2, global_batch: 64";
  const auto none = load("preset: llama3-8b, seq_length: 2048", layout, "fused_kernels: false");
  const auto some =
      load("preset: llama3-8b, seq_length: 2048, dropout: 0.1", layout, "fused_kernels: false");
  const double h = none.model.hidden;
  const double scores_per_token = none.model.heads * 2048.0 / 2;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(some) - layer_activation_bytes(none),
                   2048 * (2 * h + 3 * scores_per_token));
}

// The residual add writes no mask without dropout, and the softmax no dropout output.
TEST(Dropout, KernelsMoveLessWithoutDropout) {
  const std::string layout = "tp: 1, global_batch: 64";
  const auto none = load("preset: llama3-8b, seq_length: 1024", layout, "fused_kernels: false");
  const auto some =
      load("preset: llama3-8b, seq_length: 1024, dropout: 0.1", layout, "fused_kernels: false");
  const LayerProgram a = plan_step(none).layer;
  const LayerProgram b = plan_step(some).layer;
  const double elements = 1024.0 * none.model.hidden;
  EXPECT_DOUBLE_EQ(op_named(a.forward, "residual.mlp").bytes, 3 * 2 * elements);
  EXPECT_DOUBLE_EQ(op_named(b.forward, "residual.mlp").bytes, 3.5 * 2 * elements);
  const double scores = 1024.0 * 1024 * none.model.heads;
  EXPECT_DOUBLE_EQ(op_named(a.forward, "attention.softmax").bytes, 2 * 2 * scores);
  EXPECT_DOUBLE_EQ(op_named(b.forward, "attention.softmax").bytes, (4 * 2 + 1) * scores);
  EXPECT_LT(op_named(a.backward, "attention.softmax").bytes,
            op_named(b.backward, "attention.softmax").bytes);
}

// A probability of 1 drops everything: refused, naming the key.
TEST(Dropout, ProbabilityBelowOne) {
  try {
    (void)load("preset: llama3-8b, dropout: 1", "global_batch: 64");
    FAIL() << "dropout 1 accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("model.dropout"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace myriad::models
