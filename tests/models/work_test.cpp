// The workload model: parameter counts, FLOP accounting, layer programs,
// memory and placement, each against a closed form or a published figure.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "models/plan/memory.hpp"
#include "models/plan/rank_layout.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/loader.hpp"
#include "models/transformer/model_stats.hpp"
#include "myriad_source_paths.hpp"
#include "tests/models/published_layouts.hpp"

namespace myriad::models {
namespace {

const scenario::LoadOptions kShipped{{MYRIAD_SCENARIO_DIR}};

scenario::Scenario load(const std::string& text) {
  return scenario::load_scenario_text(text, "work_test.yaml", kShipped);
}

scenario::Scenario korthikanti(const std::string& model, int gpus, int pp, int batch, int mb) {
  return load("cluster: {preset: selene-like, gpus: " + std::to_string(gpus) +
              "}\nmodel: {preset: " + model +
              "}\nparallelism: {tp: 8, sp: true, pp: " + std::to_string(pp) +
              ", micro_batch: " + std::to_string(mb) + ", global_batch: " + std::to_string(batch) +
              ", recompute: selective}\n"
              // Megatron-LM of 2022: attention unfused, so selective recomputation has work.
              "training: {fused_kernels: false}\n");
}

// Expectation: with a 312 TFLOPS peak, the model-FLOPs formula reproduces the MFU
// and HFU columns of Korthikanti'22 Table 5 from its iteration times (to 0.3 points).
TEST(ModelFlops, ReproduceKorthikantiMfuAndHfu) {
  const struct {
    const char* model;
    int gpus, pp, batch, mb;
    double seconds, mfu, hfu;
  } rows[] = {{"megatron-22b", 8, 1, 4, 4, 1.10, 0.415, 0.437},
              {"gpt3-175b-megatron", 64, 8, 64, 1, 13.75, 0.514, 0.528},
              {"megatron-530b", 280, 35, 280, 1, 37.83, 0.560, 0.570},
              {"megatron-1t", 512, 64, 512, 1, 71.49, 0.563, 0.570}};
  for (const auto& r : rows) {
    const auto s = korthikanti(r.model, r.gpus, r.pp, r.batch, r.mb);
    const double peak = r.gpus * 312e12 * r.seconds;
    EXPECT_NEAR(model_flops_per_step(s) / peak, r.mfu, 0.003) << r.model;
    EXPECT_NEAR(hardware_flops_per_step(s) / peak, r.hfu, 0.003) << r.model;
  }
}

// Expectation: with fused attention, selective recomputation has nothing to
// recompute (the layer program prices nothing), so HFU is MFU.
TEST(ModelFlops, SelectiveRecomputationWithFusedAttentionCountsNothing) {
  auto s = korthikanti("gpt3-175b-megatron", 64, 8, 64, 1);
  s.training.fused_kernels = true;
  EXPECT_EQ(hardware_flops_per_step(s), model_flops_per_step(s));
}

TEST(ModelFlops, FullRecomputationIs96Over72) {
  auto s = korthikanti("gpt3-175b-megatron", 64, 8, 64, 1);
  const double model = model_flops_per_step(s);
  s.parallelism.recompute = scenario::Recompute::full;
  // 96 B L s h^2 (1 + s/6h + V/(16hL)) over 72 B L s h^2 (1 + s/6h + V/(12hL)).
  const double h = 12288, L = 96, seq = 2048, V = 51200;
  const double expected =
      96 * (1 + seq / (6 * h) + V / (16 * h * L)) / (72 * (1 + seq / (6 * h) + V / (12 * h * L)));
  EXPECT_NEAR(hardware_flops_per_step(s) / model, expected, 1e-12);
}

TEST(ParamCounts, MatchPublishedSizes) {
  const auto count = [](const std::string& preset) {
    return param_counts(load("cluster: {preset: selene-like, gpus: 8}\nmodel: {preset: " + preset +
                             "}\nparallelism: {tp: 8, global_batch: 8}\n")
                            .model);
  };
  // Expectation (GPT-3 has biases and learned positions Myriad leaves out: 174.6B
  // of matrices plus embeddings); Llama 3 and Mixtral as their releases state.
  EXPECT_NEAR(count("gpt3-175b-megatron").total / 1e9, 175.0, 1.5);
  EXPECT_NEAR(count("llama3-8b").total / 1e9, 8.03, 0.05);
  EXPECT_NEAR(count("llama3-70b").total / 1e9, 70.6, 0.2);
  EXPECT_NEAR(count("llama3-405b").total / 1e9, 405.8, 1.0);
  EXPECT_NEAR(count("mixtral-8x7b").total / 1e9, 46.7, 0.2);
  EXPECT_NEAR(count("mixtral-8x7b").active / 1e9, 12.9, 0.1);
  // The validation notes: MegaScale-MoE's table adds up to about 341B.
  EXPECT_NEAR(count("megascale-moe-352b").total / 1e9, 341, 2);
  // Qwen3-4B's model card: 4.0B, 3.6B without the (tied) embedding. Its 32 heads
  // are 128 wide on a hidden size of 2,560: with hidden / heads (80) the attention
  // would lose a third of its weights and the model come out 3.3B without it.
  const ParamCounts qwen = count("qwen3-4b");
  EXPECT_NEAR(qwen.total / 1e9, 4.02, 0.02);
  EXPECT_NEAR((qwen.total - qwen.embedding) / 1e9, 3.63, 0.02);
  EXPECT_DOUBLE_EQ(qwen.attention, 2560.0 * (32 * 128 + 2 * 8 * 128) + 32 * 128 * 2560.0);
  // GPT-OSS's model card (arXiv:2508.10925 Table 1): 116.83B and 20.91B in all, of
  // which Myriad leaves out the biases and attention sinks (about 0.04B); 5.13B and
  // 3.61B active, counting the unembedding but not the embedding's lookup, which
  // Myriad's active count includes (201,088 x 2,880).
  const double lookup = 201088.0 * 2880 / 1e9;
  EXPECT_NEAR(count("gpt-oss-120b").total / 1e9, 116.83, 0.06);
  EXPECT_NEAR(count("gpt-oss-120b").active / 1e9, 5.13 + lookup, 0.01);
  EXPECT_NEAR(count("gpt-oss-20b").total / 1e9, 20.91, 0.02);
  EXPECT_NEAR(count("gpt-oss-20b").active / 1e9, 3.61 + lookup, 0.01);
}

// Expectation: an explicit head_dim shapes the attention's GEMMs (queries of
// heads x head_dim, the projection back from it) and its core (scores and context
// over head_dim), and the model's FLOPs with them; without it, hidden / heads.
TEST(LayerProgram, HeadDimShapesTheAttention) {
  auto s = load(
      "cluster: {preset: llama3-like, gpus: 8}\nmodel: {preset: qwen3-4b}\n"
      "parallelism: {tp: 8, global_batch: 8}\n");
  EXPECT_EQ(s.model.head_dim, 128);
  const LayerProgram lp = transformer_layer(s.model, shard_shape(s));
  const auto op = [&](const std::string& name) {
    for (const Op& o : lp.forward.ops) {
      if (o.name == name) return o;
    }
    ADD_FAILURE() << name;
    return Op{};
  };
  const double tokens = 4096;  // one micro-batch of one sequence
  // qkv: (4 + 2 x 1) local heads of 128 from the hidden state; proj: back from 4 x 128.
  EXPECT_DOUBLE_EQ(op("qkv").flops, 2 * tokens * (4 + 2) * 128 * 2560.0);
  EXPECT_DOUBLE_EQ(op("proj").flops, 2 * tokens * 2560.0 * 4 * 128);
  const double with_head_dim = model_flops_per_step(s);
  s.model.head_dim = 80;  // as hidden / heads would have it
  EXPECT_LT(model_flops_per_step(s), with_head_dim);
  const auto llama = load(
      "cluster: {preset: llama3-like, gpus: 8}\nmodel: {preset: llama3-8b}\n"
      "parallelism: {tp: 8, global_batch: 8}\n");
  EXPECT_EQ(llama.model.head_dim, 4096 / 32);
  // Heads that do not divide the hidden size are fine with a head_dim given.
  const auto odd = load(
      "cluster: {preset: llama3-like, gpus: 8}\n"
      "model: {preset: qwen3-4b, hidden: 2570}\n"
      "parallelism: {tp: 8, global_batch: 8}\n");
  EXPECT_EQ(odd.model.head_dim, 128);
}

double gemm_flops(const Phase& p) {
  return std::accumulate(p.ops.begin(), p.ops.end(), 0.0, [](double a, const Op& op) {
    return op.cls == OpClass::gemm ? a + op.flops : a;
  });
}

TEST(LayerProgram, GemmFlopsAreTwicePerParameterPerToken) {
  auto s = korthikanti("gpt3-175b-megatron", 64, 8, 64, 1);
  s.training.fused_kernels = true;  // attention's GEMMs inside its fused kernel
  const LayerProgram lp = transformer_layer(s.model, shard_shape(s));
  const double tokens = 2048, h = 12288;
  EXPECT_DOUBLE_EQ(gemm_flops(lp.forward), 2 * tokens * 12 * h * h / 8);
  EXPECT_DOUBLE_EQ(gemm_flops(lp.backward), 2 * gemm_flops(lp.forward));
  // Sequence parallelism: an all-gather in and a reduce-scatter out, twice.
  ASSERT_EQ(lp.forward.comms.size(), 4u);
  EXPECT_EQ(lp.forward.comms[0].kind, CollectiveKind::all_gather);
  EXPECT_EQ(lp.backward.comms[0].kind, CollectiveKind::all_gather);  // mirrors the last RS
}

TEST(LayerProgram, FusedCausalAttentionDoesHalfTheWork) {
  auto s = korthikanti("gpt3-175b-megatron", 64, 8, 64, 1);
  s.training.fused_kernels = true;
  const auto flops = [&](const scenario::Scenario& sc) {
    const LayerProgram lp = transformer_layer(sc.model, shard_shape(sc));
    for (const auto& op : lp.forward.ops) {
      if (op.cls == OpClass::attention) return op.flops;
    }
    return 0.0;
  };
  const double full = 4.0 * 2048 * 2048 * 12288 / 8;  // QK^T and PV over all keys
  EXPECT_NEAR(flops(s) / full, 0.5, 0.001);
  s.model.sliding_window = 512;
  EXPECT_NEAR(flops(s) / full, attended_pairs(2048, 512) / (2048.0 * 2048), 1e-12);
  EXPECT_LT(attended_pairs(2048, 512), 2048.0 * 512);
}

// Expectation (GPT-OSS: model.full_attention_every 2): windowed and full layers
// alternate, the first windowed. The averaged layer runs each kind's attention at its
// share of the stack: the work of the layers together, each kernel's fixed cost once a
// layer; model FLOPs count every key of the window or the sequence, layer by layer.
TEST(LayerProgram, AlternatingWindowsAverageTheirAttention) {
  auto s = load(
      "cluster: {preset: llama3-like, gpus: 64}\nmodel: {preset: gpt-oss-120b}\n"
      "parallelism: {pp: 4, ep: 8, global_batch: 64}\ntraining: {precision: bf16}\n");
  ASSERT_EQ(s.model.full_attention_every, 2);
  EXPECT_TRUE(s.model.is_windowed_layer(0));
  EXPECT_FALSE(s.model.is_windowed_layer(1));
  EXPECT_DOUBLE_EQ(s.model.windowed_share(), 0.5);
  const LayerProgram lp = transformer_layer(s.model, shard_shape(s));
  std::vector<Op> cores;
  for (const auto& op : lp.forward.ops) {
    if (op.cls == OpClass::attention) cores.push_back(op);
  }
  ASSERT_EQ(cores.size(), 2U);
  const double per_pair = 4.0 * 64 * 64;  // QK^T and PV, 64 heads of 64
  EXPECT_EQ(cores[0].name, "attention");
  EXPECT_DOUBLE_EQ(cores[0].attention.window, 0);
  EXPECT_DOUBLE_EQ(cores[0].flops, 0.5 * attended_pairs(4096, 0) * per_pair);
  EXPECT_EQ(cores[1].name, "attention.window");
  EXPECT_DOUBLE_EQ(cores[1].attention.window, 128);
  EXPECT_DOUBLE_EQ(cores[1].flops, 0.5 * attended_pairs(4096, 128) * per_pair);
  EXPECT_DOUBLE_EQ(cores[0].share, 0.5);
  EXPECT_DOUBLE_EQ(cores[1].share, 0.5);
  // Model FLOPs: half the layers over 128 keys, half over 4,096.
  const double model = model_flops_per_step(s);
  s.model.full_attention_every = 0;  // every layer windowed
  const double windowed = model_flops_per_step(s);
  s.model.sliding_window = 0;  // every layer full
  const double full = model_flops_per_step(s);
  EXPECT_NEAR((model - windowed) / (full - windowed), 0.5, 1e-12);
  // A pattern without a window, or of 1, is refused naming the key.
  for (const char* bad :
       {"sliding_window: 0, full_attention_every: 2", "full_attention_every: 1"}) {
    try {
      (void)load(std::string("cluster: {preset: llama3-like, gpus: 64}\n"
                             "model: {preset: gpt-oss-120b, ") +
                 bad + "}\nparallelism: {pp: 4, ep: 8, global_batch: 64}\n");
      ADD_FAILURE() << bad << " loaded";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("model.full_attention_every"), std::string::npos)
          << e.what();
    }
  }
}

// Expectation: under an fp8 recipe the layers' GEMMs run in fp8, each behind a
// cast kernel, and the LM head stays in bf16 without one (Megatron-Core's output
// layer is not a Transformer Engine module).
TEST(LayerProgram, Fp8LeavesTheLmHeadInBf16) {
  auto s = load(
      "cluster: {preset: llama3-like, gpus: 8}\nmodel: {preset: llama3-8b}\n"
      "parallelism: {tp: 8, global_batch: 8}\ntraining: {precision: fp8}\n");
  const ShardShape sh = shard_shape(s);
  const auto count = [](const Phase& p, bool fp8) {
    return std::count_if(p.ops.begin(), p.ops.end(),
                         [&](const Op& op) { return op.cls == OpClass::gemm && op.fp8 == fp8; });
  };
  const auto casts = [](const Phase& p) {
    return std::count_if(p.ops.begin(), p.ops.end(),
                         [](const Op& op) { return op.name == "fp8.cast"; });
  };
  const LayerProgram layer = transformer_layer(s.model, sh);
  EXPECT_EQ(count(layer.forward, false), 0);
  EXPECT_EQ(casts(layer.forward), count(layer.forward, true));
  const LayerProgram head = lm_head_and_loss(s.model, sh);
  EXPECT_EQ(count(head.forward, true), 0);
  EXPECT_EQ(count(head.forward, false), 1);
  EXPECT_EQ(count(head.backward, true), 0);
  EXPECT_EQ(casts(head.forward) + casts(head.backward), 0);
}

// Expectation: under chunk-by-chunk tensor-parallel overlap the GEMMs its collectives
// overlap run in pieces along the tokens, as userbuffers run them: qkv and fc1 (after
// an all-gather) one per tp rank, proj and fc2 (before a reduce-scatter) in 4
// pipelined splits and their data gradients (before the backward's all-gather) one
// per tp rank; every other GEMM whole; nothing in pieces without overlap.tp, with
// fused overlap or without sequence parallelism.
TEST(LayerProgram, ChunkedTensorOverlapRunsItsGemmsInPieces) {
  auto s = load(
      "cluster: {preset: llama3-like, gpus: 8}\nmodel: {preset: llama3-8b}\n"
      "parallelism: {tp: 8, sp: true, global_batch: 8}\noverlap: {tp: true}\n");
  const auto pieces = [](const scenario::Scenario& sc) {
    const LayerProgram lp = transformer_layer(sc.model, shard_shape(sc));
    std::vector<std::string> out;
    for (const Phase* phase : {&lp.forward, &lp.backward}) {
      for (const auto& op : phase->ops) {
        if (op.cls == OpClass::gemm) {
          out.push_back(std::string(op.name) + "/" + std::to_string(static_cast<int>(op.pieces)));
        }
      }
    }
    return out;
  };
  // Backward runs in reverse, data gradient before weight gradient.
  EXPECT_EQ(pieces(s),
            (std::vector<std::string>{"qkv/8", "proj/4", "fc1/8", "fc2/4", "fc2/8", "fc2/1",
                                      "fc1/1", "fc1/1", "proj/8", "proj/1", "qkv/1", "qkv/1"}));
  const auto whole = [&](const scenario::Scenario& sc) {
    for (const auto& name : pieces(sc)) {
      if (!name.ends_with("/1")) return false;
    }
    return true;
  };
  s.overlap.tp = false;
  EXPECT_TRUE(whole(s));
  s.overlap.tp = true;
  s.overlap.fused = true;
  EXPECT_TRUE(whole(s));
  s.overlap.fused = false;
  s.parallelism.sp = false;
  EXPECT_TRUE(whole(s));
}

// Expectation: the fp8 recipe sets what each cast reads and writes: delayed scaling
// 4 bytes an element (a 2-byte read, two 1-byte copies), current scaling a second
// 2-byte read for its amax, blockwise a 4-byte scale per 128 values in each copy;
// the GEMMs are the same; the recipe is refused without fp8.
TEST(LayerProgram, Fp8RecipesCastWithTheirReads) {
  const std::string text =
      "cluster: {preset: llama3-like, gpus: 8}\nmodel: {preset: llama3-8b}\n"
      "parallelism: {tp: 8, global_batch: 8}\ntraining: {precision: fp8";
  const auto casts = [&](const std::string& recipe) {
    const auto s = load(text + (recipe.empty() ? "" : ", fp8_recipe: " + recipe) + "}\n");
    const LayerProgram lp = transformer_layer(s.model, shard_shape(s));
    double bytes = 0;
    for (const Phase* phase : {&lp.forward, &lp.backward}) {
      for (const auto& op : phase->ops) bytes += op.name == "fp8.cast" ? op.bytes : 0;
    }
    return bytes;
  };
  const double delayed = casts("");
  EXPECT_GT(delayed, 0);
  EXPECT_DOUBLE_EQ(casts("delayed"), delayed);
  EXPECT_DOUBLE_EQ(casts("current"), delayed * 6 / 4);
  EXPECT_DOUBLE_EQ(casts("blockwise"), delayed * (4 + 8.0 / 128) / 4);
  try {
    (void)load(
        "cluster: {preset: llama3-like, gpus: 8}\nmodel: {preset: llama3-8b}\n"
        "parallelism: {tp: 8, global_batch: 8}\ntraining: {fp8_recipe: current}\n");
    ADD_FAILURE() << "accepted";
  } catch (const scenario::ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "training.fp8_recipe: scales fp8 GEMM inputs; training.precision is not fp8"),
              std::string::npos)
        << e.what();
  }
}

// Expectation: norms and activations name the kernel the model runs, in the
// families calibration measures, forward and backward ("norm.rms.bwd").
TEST(LayerProgram, NormsAndActivationsNameTheirKernels) {
  const auto families = [](const scenario::Scenario& sc) {
    const LayerProgram lp = transformer_layer(sc.model, shard_shape(sc));
    std::vector<std::string> out;
    for (const Phase* phase : {&lp.forward, &lp.backward}) {
      for (const auto& op : phase->ops) {
        if (op.name.starts_with("norm") || op.name == "activation") {
          out.push_back(kernel_family(op));
        }
      }
    }
    return out;
  };
  const auto gpt = families(korthikanti("gpt3-175b-megatron", 64, 8, 64, 1));
  EXPECT_EQ(gpt,
            (std::vector<std::string>{"norm.layer.fwd", "norm.layer.fwd", "activation.gelu.fwd",
                                      "activation.gelu.bwd", "norm.layer.bwd", "norm.layer.bwd"}));
  auto llama = korthikanti("gpt3-175b-megatron", 64, 8, 64, 1);
  llama.model.norm = scenario::Norm::rmsnorm;
  llama.model.activation = scenario::Activation::swiglu;
  const auto rms = families(llama);
  EXPECT_EQ(rms.front(), "norm.rms.fwd");
  EXPECT_EQ(rms[2], "activation.swiglu.fwd");
  EXPECT_EQ(rms.back(), "norm.rms.bwd");
  // An op that names no kernel is looked up by its name.
  EXPECT_EQ(kernel_family(make_elementwise("residual.mlp", 1)), "residual.mlp");
}

// Llama 3.1 405B as Megatron-Bridge runs it on 1,024 H100 (TP 8, CP 2, PP 8, VP 8).
const std::string k405bCluster =
    "cluster: {preset: llama3-like, gpus: 1024}\nmodel: {preset: llama3-405b}\n";
scenario::Scenario megatron_bridge_405b() {
  return load(k405bCluster +
              "parallelism: {tp: 8, sp: true, pp: 8, virtual_stages: 8, cp: 2, "
              "embedding_as_layer: true, loss_as_layer: true, global_batch: 512}\n");
}

// Expectation: with the embedding and the loss each counted as a layer (Megatron-LM's
// --account-for-embedding/loss-in-pipeline-split), Llama 3.1 405B's 126 layers split
// over 8 stages of 8 chunks as Megatron-Bridge runs them: 2 a chunk, the first chunk
// and the last one layer short; over 16 stages of 1 as Meta ran it, the first and
// last stage 7 layers, the others 8. Counts that do not split are refused, and so is
// the key beside explicit stage layers.
TEST(StepPlan, EmbeddingAndLossCountAsLayers) {
  const auto s = megatron_bridge_405b();
  const StepPlan plan = plan_step(s);
  EXPECT_EQ(plan.layers_by_chunk[0][0], 1);
  EXPECT_EQ(plan.layers_by_chunk[7][7], 1);
  EXPECT_EQ(plan.layers_by_chunk[0][1], 2);
  EXPECT_EQ(plan.layers_by_chunk[3][0], 2);
  EXPECT_EQ(plan.layers_by_stage, (std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15}));
  const auto meta = load(
      "cluster: {preset: llama3-like, gpus: 2048}\nmodel: {preset: llama3-405b}\n"
      "parallelism: {tp: 8, sp: true, pp: 16, embedding_as_layer: true, loss_as_layer: true, "
      "global_batch: 256}\n");
  const StepPlan meta_plan = plan_step(meta);
  EXPECT_EQ(meta_plan.layers_by_stage.front(), 7);
  EXPECT_EQ(meta_plan.layers_by_stage[1], 8);
  EXPECT_EQ(meta_plan.layers_by_stage.back(), 7);
  const auto refused = [&](const std::string& parallelism) {
    try {
      (void)load(k405bCluster + parallelism);
    } catch (const scenario::ScenarioError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refused("parallelism: {tp: 8, pp: 8, virtual_stages: 8, cp: 2, "
                    "embedding_as_layer: true, global_batch: 512}\n")
                .find("layers (126) with the embedding counted (127) must be a multiple of "
                      "pp * virtual_stages = 8 * 8 = 64"),
            std::string::npos);
  EXPECT_NE(refused("parallelism: {tp: 8, pp: 8, cp: 2, loss_as_layer: true, "
                    "stage_layers: [15, 16, 16, 16, 16, 16, 16, 15], global_batch: 512}\n")
                .find("parallelism.loss_as_layer"),
            std::string::npos);
}

// Expectation: a stage holds its warm-up's forward passes in flight, as Megatron-LM
// schedules them: 1F1B min(m, p - stage); interleaved (p - stage - 1) 2 + (v - 1) p + 1,
// the k-th pass on chunk (k mod p v) / p, each holding that chunk's layers (Llama 3.1
// 405B, pp 8, v 8: the first stage 71 passes, 15 of them on its one-layer first
// chunk; the last stage 57).
TEST(Memory, InFlightAsMegatronWarmsUp) {
  const auto s = megatron_bridge_405b();
  const StepPlan plan = plan_step(s);
  EXPECT_EQ(forwards_in_flight(s, 0), 71);
  EXPECT_EQ(forwards_in_flight(s, 7), 57);
  EXPECT_DOUBLE_EQ(layers_in_flight(s, plan, 0), 15 * 1 + 56 * 2);
  EXPECT_DOUBLE_EQ(layers_in_flight(s, plan, 7), 56 * 2 + 1 * 1);
  // Even chunks: (p v + p - 1) / v micro-batches through the first stage.
  const auto even = load(
      "cluster: {preset: llama3-like, gpus: 1024}\nmodel: {preset: llama3-405b, layers: 128}\n"
      "parallelism: {tp: 8, sp: true, pp: 8, virtual_stages: 8, cp: 2, global_batch: 512}\n");
  EXPECT_DOUBLE_EQ(micro_batches_in_flight(even, plan_step(even), 0), (64.0 + 7) / 8);
  const auto one_f_one_b = load(
      "cluster: {preset: llama3-like, gpus: 64}\nmodel: {preset: llama3-8b}\n"
      "parallelism: {tp: 8, pp: 8, global_batch: 4}\n");
  EXPECT_EQ(forwards_in_flight(one_f_one_b, 0), 4);  // m = 4 < p
  EXPECT_EQ(forwards_in_flight(one_f_one_b, 6), 2);
}

// Expectation: Korthikanti'22 eq. (per layer) sbh(34/t + 5as/(ht)) without recomputation
// and with sequence parallelism, sbh * 34/t with selective recomputation, 2sbh/t full.
TEST(Memory, ActivationsFollowKorthikanti) {
  auto s = korthikanti("gpt3-175b-megatron", 64, 8, 64, 1);
  s.training.fused_kernels = false;
  const double sbh = 2048.0 * 1 * 12288;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s), sbh * 34 / 8);
  s.parallelism.recompute = scenario::Recompute::none;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s), sbh * (34.0 / 8 + 5.0 * 96 * 2048 / (12288 * 8)));
  s.parallelism.sp = false;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s),
                   sbh * (10 + 24.0 / 8 + 5.0 * 96 * 2048 / (12288 * 8)));
  s.parallelism.recompute = scenario::Recompute::full;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(s), 2 * sbh);
}

TEST(Memory, ZeroShardsStatesOverDataParallelRanks) {
  auto s = load(R"(
cluster: {preset: llama3-like, gpus: 64}
model: {preset: llama3-8b}
parallelism: {tp: 8, global_batch: 64}
)");
  const StepPlan plan = plan_step(s);
  const double params = plan.params_max;
  MemoryBreakdown m = memory_per_gpu(s, plan);
  EXPECT_DOUBLE_EQ(m.weights, 2 * params);
  EXPECT_DOUBLE_EQ(m.gradients, 4 * params);
  EXPECT_DOUBLE_EQ(m.optimizer, 12 * params);
  s.parallelism.zero = 3;
  m = memory_per_gpu(s, plan);
  // Besides the shards, the largest unit gathered whole, twice (the one computing
  // and the next), and its fp32 gradients: without pipelining, the head's final
  // norm (4,096) and its own (untied) 128,256 x 4,096 / tp rows.
  const double unit = 128256.0 * 4096 / 8 + 4096;
  EXPECT_DOUBLE_EQ(m.weights, 2 * params / 8 + 2 * unit * 2);
  EXPECT_DOUBLE_EQ(m.gradients, 4 * params / 8 + 4 * unit);
  EXPECT_DOUBLE_EQ(m.optimizer, 12 * params / 8);
}

// Expectation: gradients are held in the precision they are reduced in (Megatron-LM's
// DDP buffer: fp32 with grad_reduce_in_fp32, the parameters' 16 bits without);
// ZeRO-3's gathered unit follows too (FitRemedies.EachSavesMemoryAndSaysWhatItCosts:
// the 405B below fits as it ran, and not with fp32 buffers).
TEST(Memory, GradientsInTheirReductionsPrecision) {
  auto s = load(myriad::testing::kLlama405bMegatronBridge);
  ASSERT_EQ(s.training.gradient_precision, scenario::WirePrecision::bf16);  // fp8's default
  const StepPlan plan = plan_step(s);
  const MemoryBreakdown half = memory_per_gpu(s, plan);
  EXPECT_DOUBLE_EQ(half.gradients, 2 * plan.params_max);
  s.training.gradient_precision = scenario::WirePrecision::fp32;
  const MemoryBreakdown full = memory_per_gpu(s, plan);
  EXPECT_DOUBLE_EQ(full.gradients, 4 * plan.params_max);
  EXPECT_DOUBLE_EQ(full.total() - half.total(), 2 * plan.params_max);
  s.parallelism.zero = 3;
  s.parallelism.pp = 1;
  s.parallelism.virtual_stages = 1;
  s.training.gradient_precision = scenario::WirePrecision::bf16;
  const StepPlan flat = plan_step(s);
  const double bf16 = memory_per_gpu(s, flat).gradients;
  s.training.gradient_precision = scenario::WirePrecision::fp32;
  EXPECT_DOUBLE_EQ(memory_per_gpu(s, flat).gradients, 2 * bf16);
}

TEST(RankOrder, GroupsFollowMegatronOrder) {
  const auto s = load(R"(
cluster: {preset: megascale-like, gpus: 12288}
model: {preset: gpt3-175b-megascale}
parallelism: {tp: 8, pp: 8, virtual_stages: 6, global_batch: 6144}
)");
  const auto tp = group_span(GroupKind::tp, s);
  EXPECT_EQ(tp.nodes, 1);
  EXPECT_EQ(tp.per_node, 8);
  const auto dp = group_span(GroupKind::dp, s);
  EXPECT_EQ(dp.size, 192);
  EXPECT_EQ(dp.per_node, 1);
  EXPECT_EQ(dp.nodes, 192);
  const auto pp = group_span(GroupKind::pp, s);
  EXPECT_EQ(pp.nodes, 8);
}

// tp 2 on 8-GPU nodes: Megatron's order puts four replicas of a stage in a node;
// tp-cp-pp-dp puts a replica's four stages there instead. The rank groups a node
// holds and the node a rank group starts on agree both ways.
TEST(RankOrder, TheScenarioChoosesTheOrder) {
  const char* text = R"(
cluster: {preset: selene-like, gpus: 64}
model: {preset: llama3-8b}
parallelism: {tp: 2, pp: 4, global_batch: 64%s}
)";
  const auto with = [&](const std::string& extra) {
    std::string t = text;
    t.replace(t.find("%s"), 2, extra);
    return load(t);
  };
  const auto megatron = with("");
  EXPECT_EQ(megatron.parallelism.placement, scenario::RankOrder::tp_cp_dp_pp);
  const auto pipes = with(", placement: tp-cp-pp-dp");
  EXPECT_EQ(pipes.parallelism.placement, scenario::RankOrder::tp_cp_pp_dp);
  EXPECT_EQ(group_span(GroupKind::dp, megatron).per_node, 4);
  EXPECT_EQ(group_span(GroupKind::dp, megatron).nodes, 2);
  EXPECT_EQ(group_span(GroupKind::pp, megatron).nodes, 4);
  EXPECT_EQ(group_span(GroupKind::dp, pipes).per_node, 1);
  EXPECT_EQ(group_span(GroupKind::dp, pipes).nodes, 8);
  EXPECT_EQ(group_span(GroupKind::pp, pipes).per_node, 4);
  EXPECT_EQ(group_span(GroupKind::pp, pipes).nodes, 1);
  for (const auto* s : {&megatron, &pipes}) {
    for (int stage = 0; stage < 4; ++stage) {
      for (int replica = 0; replica < 8; ++replica) {
        const int node = first_node(*s, {stage, replica});
        EXPECT_GE(node, 0);
        EXPECT_LT(node, 8);
        const RankGroup back = group_on_node(*s, node);
        // The node's first rank group: this one, or one beside it in the node.
        EXPECT_EQ(first_node(*s, back), node);
      }
    }
  }
  EXPECT_EQ(first_node(megatron, {1, 0}), 2);  // stage 1 after stage 0's 8 replicas
  EXPECT_EQ(first_node(pipes, {1, 0}), 0);     // beside stage 0
  EXPECT_EQ(first_node(pipes, {0, 1}), 1);
}

// Expectation: a data- or pipeline-parallel group's span is its ranks' nodes
// walked one by one (group_span counts whole-node strides without the walk):
// on nodes of 4, 8 and 72 GPUs, in both orders.
TEST(RankOrder, StridedGroupsSpanTheNodesTheirRanksSitOn) {
  auto s = load(R"(
cluster: {preset: megascale-like, gpus: 12288}
model: {preset: gpt3-175b-megascale}
parallelism: {tp: 8, pp: 8, virtual_stages: 6, global_batch: 6144}
)");
  const auto walked = [](int size, long long stride, int gpn) {
    GroupSpan g;
    g.size = size;
    std::map<long long, int> on;
    long long gap = 0;
    for (int i = 0; i < size; ++i) {
      ++on[i * stride / gpn];
      if (i > 0) gap = std::max(gap, i * stride / gpn - (i - 1) * stride / gpn);
    }
    g.nodes = static_cast<int>(on.size());
    g.per_node = 0;
    for (const auto& [node, count] : on) g.per_node = std::max(g.per_node, count);
    g.reach = static_cast<int>(on.rbegin()->first - on.begin()->first + 1);
    g.neighbour_reach = static_cast<int>(gap + 1);
    return g;
  };
  auto& p = s.parallelism;
  for (const int gpn : {4, 8, 72}) {
    for (const auto order : {scenario::RankOrder::tp_cp_dp_pp, scenario::RankOrder::tp_cp_pp_dp}) {
      for (const auto& [tp, cp, dp, pp] :
           {std::tuple{8, 1, 192, 8}, std::tuple{2, 2, 6, 4}, std::tuple{1, 1, 9, 3},
            std::tuple{4, 1, 1, 16}, std::tuple{8, 9, 2, 2}, std::tuple{3, 1, 24, 1}}) {
        s.cluster.gpus_per_node = gpn;
        p.placement = order;
        p.tp = tp;
        p.cp = cp;
        p.dp = dp;
        p.pp = pp;
        const long long group = static_cast<long long>(tp) * cp;
        const bool dp_inner = order == scenario::RankOrder::tp_cp_dp_pp;
        for (const auto& [kind, size, stride] :
             {std::tuple{GroupKind::dp, dp, dp_inner ? group : group * pp},
              std::tuple{GroupKind::pp, pp, dp_inner ? group * dp : group}}) {
          const GroupSpan got = group_span(kind, s);
          const GroupSpan want = walked(size, stride, gpn);
          SCOPED_TRACE(::testing::Message() << gpn << " " << tp << " " << cp << " " << dp << " "
                                            << pp << " " << static_cast<int>(kind));
          EXPECT_EQ(got.size, want.size);
          EXPECT_EQ(got.nodes, want.nodes);
          EXPECT_EQ(got.per_node, want.per_node);
          EXPECT_EQ(got.reach, want.reach);
          EXPECT_EQ(got.neighbour_reach, want.neighbour_reach);
        }
      }
    }
  }
}

}  // namespace
}  // namespace myriad::models
