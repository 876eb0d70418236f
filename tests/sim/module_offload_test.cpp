// Fine-grained activation offload (parallelism.offload_modules, Megatron-Core's
// --offload-modules): what each module sends to the host, worked out by hand from
// the memory model's terms; what the GPU and the host then hold; the waits the
// copies add, and both engines playing them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>

#include "models/plan/memory.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/loader.hpp"
#include "sim/analytic/activation_offload.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/fit_remedies.hpp"
#include "sim/program/evaluator.hpp"
#include "sim/program/step_program.hpp"
#include "tests/sim/shipped.hpp"
#include "tests/sim/step_engine_support.hpp"

namespace myriad::sim {
namespace {

using models::LayerKind;
using models::scenario::OffloadModule;
using testing::kShipped;

// Llama 3 8B (hidden 4096, 32 heads of 128, 8 key/value heads) at 8K, tp 2 with
// sp, pp 2, fused attention: 8,192 tokens a micro-batch.
models::scenario::Scenario llama8b(const std::string& extra = "", const std::string& gpu = "") {
  return models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 16, gpu: {preset: H100" + gpu +
          "}}\n"
          "model: {preset: llama3-8b, seq_length: 8192}\n"
          "parallelism: {tp: 2, sp: true, pp: 2, global_batch: 64" +
          extra + "}\n",
      "module_offload_test.yaml", kShipped);
}

double offloaded(models::scenario::Scenario s, std::initializer_list<OffloadModule> modules,
                 LayerKind kind = LayerKind::dense) {
  s.parallelism.offload_modules = modules;
  return models::layer_offloaded_bytes(s, kind);
}

// Per token, on one of 2 tensor-parallel ranks, in bf16: the norms' inputs 2h / 2
// = 4,096 B each (split by sequence); the QKV GEMM's input, the norm's output,
// as much; the attention core's queries, keys and values (2 x 4096 + 4 x 1024) / 2
// = 6,144 B and its output 2 x 4096 / 2 = 4,096 B, which is also the output
// projection's input: offloaded by either, once.
TEST(ModuleOffload, EachModuleSendsWhatItKeeps) {
  const auto s = llama8b();
  const double tokens = 8192;
  EXPECT_EQ(offloaded(s, {}), 0);
  EXPECT_DOUBLE_EQ(offloaded(s, {OffloadModule::attn_norm}), tokens * 4096);
  EXPECT_DOUBLE_EQ(offloaded(s, {OffloadModule::mlp_norm}), tokens * 4096);
  EXPECT_DOUBLE_EQ(offloaded(s, {OffloadModule::qkv_linear}), tokens * 4096);
  EXPECT_DOUBLE_EQ(offloaded(s, {OffloadModule::core_attn}), tokens * (6144 + 4096));
  EXPECT_DOUBLE_EQ(offloaded(s, {OffloadModule::attn_proj}), tokens * 4096);
  EXPECT_DOUBLE_EQ(offloaded(s, {OffloadModule::core_attn, OffloadModule::attn_proj}),
                   tokens * (6144 + 4096));
  // What the GPU keeps is the rest.
  auto both = s;
  both.parallelism.offload_modules = {OffloadModule::attn_norm, OffloadModule::core_attn};
  EXPECT_DOUBLE_EQ(
      models::layer_activation_bytes(both, LayerKind::dense),
      models::layer_activation_bytes(s, LayerKind::dense) - tokens * (4096 + 6144 + 4096));
}

// In fp8 (per-tensor scaling) the QKV GEMM keeps its input in fp8 (2,048 B) and
// the output projection a copy of the attention's output of its own, 32 x 128 / 2
// = 2,048 B, which core_attn leaves; DeepSeek's blockwise recipe keeps the output
// once, in 1.5 B a value (3,072 B), which either module offloads.
TEST(ModuleOffload, Fp8KeepsTheProjectionsCopy) {
  const auto s = llama8b("}\ntraining: {precision: fp8");
  const double tokens = 8192;
  EXPECT_DOUBLE_EQ(offloaded(s, {OffloadModule::qkv_linear}), tokens * 2048);
  EXPECT_DOUBLE_EQ(offloaded(s, {OffloadModule::attn_proj}), tokens * 2048);
  EXPECT_DOUBLE_EQ(offloaded(s, {OffloadModule::core_attn}), tokens * (6144 + 4096));
  EXPECT_DOUBLE_EQ(offloaded(s, {OffloadModule::core_attn, OffloadModule::attn_proj}),
                   tokens * (6144 + 4096 + 2048));
  const auto block = llama8b("}\ntraining: {precision: fp8, fp8_recipe: blockwise");
  EXPECT_DOUBLE_EQ(offloaded(block, {OffloadModule::attn_proj}), tokens * 3072);
  EXPECT_DOUBLE_EQ(offloaded(block, {OffloadModule::core_attn, OffloadModule::attn_proj}),
                   tokens * (6144 + 3072));
}

// Mixtral 8x7B's MoE layer (hidden 4096, experts of 14,336, SwiGLU, top-2 of 8 on
// ep 8, tp 1, bf16), 4,096 tokens: the experts' fc1 keeps its 2 token copies a
// token, 2 x 2 x 4096 B; the activation its input, fc1's output, 2 x 2 x 2 x 14336 B.
// A dense layer of the same model has neither.
TEST(ModuleOffload, TheExpertsModules) {
  const auto s = models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: mixtral-8x7b, seq_length: 4096}\n"
      "parallelism: {tp: 1, ep: 8, pp: 2, global_batch: 64}\n",
      "module_offload_test.yaml", kShipped);
  const double tokens = 4096;
  EXPECT_DOUBLE_EQ(offloaded(s, {OffloadModule::expert_fc1}, LayerKind::moe),
                   tokens * 2 * 2 * 4096);
  EXPECT_DOUBLE_EQ(offloaded(s, {OffloadModule::moe_act}, LayerKind::moe),
                   tokens * 2 * 2 * 2 * 14336);
}

// A stage's GPU keeps what its layers in flight keep less what they sent, plus one
// layer's offloaded tensors on their way; the host holds what they sent.
TEST(ModuleOffload, TheGpuKeepsOneLayersCopiesTheHostTheRest) {
  const auto s = llama8b();
  auto off = s;
  off.parallelism.offload_modules = {OffloadModule::core_attn, OffloadModule::mlp_norm};
  const models::StepPlan plan = models::plan_step(s);
  for (const int stage : {0, 1}) {
    const models::MemoryBreakdown all = models::stage_memory(s, plan, stage);
    const models::MemoryBreakdown kept = models::stage_memory(off, plan, stage);
    const double layer = models::layer_offloaded_bytes(off, LayerKind::dense);
    const double sent = models::layers_in_flight(s, plan, stage) * layer;
    EXPECT_DOUBLE_EQ(kept.offloaded, sent) << stage;
    EXPECT_NEAR(kept.activations, all.activations - sent + layer, 1e-6 * all.activations) << stage;
    EXPECT_EQ(kept.weights, all.weights);
  }
}

// A layer waits for what its copies take beyond the compute beside them: out
// during its forward, back during the backward of the layer after it.
TEST(ModuleOffload, TheWaitsAreWhatTheLinkTakesBeyondTheCompute) {
  auto s = llama8b("", ", host_link_bandwidth: 10GB/s");
  s.parallelism.offload_modules = {OffloadModule::core_attn};
  const DeviceProfile& p = testing::h100();
  const double bytes = models::layer_offloaded_bytes(s, LayerKind::dense);  // 83.9 MB
  const models::LayerProgram program = models::plan_step(s).layer;  // nothing leaves the node
  PassTimes layer;
  layer.forward = 2e-3;
  layer.backward = 12e-3;
  const PassTimes stall = module_offload_stall(s, p, layer, LayerKind::dense, program);
  EXPECT_DOUBLE_EQ(stall.forward, bytes / (10e9 * p.device_to_host_efficiency) - 2e-3);
  EXPECT_EQ(stall.backward, 0);  // 83.9 MB back in 12 ms
  EXPECT_DOUBLE_EQ(stall.offload, stall.forward);
  layer.backward = 4e-3;
  EXPECT_DOUBLE_EQ(module_offload_stall(s, p, layer, LayerKind::dense, program).backward,
                   bytes / (10e9 * p.host_to_device_efficiency) - 4e-3);
  s.parallelism.offload_modules.clear();
  EXPECT_EQ(module_offload_stall(s, p, layer, LayerKind::dense, program).offload, 0);
}

// The copies share the host link with what the layer's collectives send over the
// NICs where the link carries them (an H100's PCIe link): with FSDP across 2
// nodes (dp 4 strided over them), the layer's gathers and reductions, added to
// the copies' bytes.
TEST(ModuleOffload, NetworkBytesBesideTheCopiesLengthenTheWaits) {
  auto s = llama8b(", zero: 3, placement: tp-cp-pp-dp", ", host_link_bandwidth: 10GB/s");
  s.parallelism.offload_modules = {OffloadModule::core_attn};
  const DeviceProfile& p = testing::h100();
  const double bytes = models::layer_offloaded_bytes(s, LayerKind::dense);
  const models::LayerProgram program = models::plan_step(s).layer;
  const LayerNetworkBytes network = layer_network_bytes(program, s);
  EXPECT_GT(network.forward, 0);                 // the parameters' gather
  EXPECT_GT(network.backward, network.forward);  // gathered again, and the gradients reduced
  const double out = 10e9 * p.device_to_host_efficiency;
  const double back = 10e9 * p.host_to_device_efficiency;
  // Passes the copies alone (9.6 ms) and the network bytes alone (7.4 and 24.2
  // ms) fit in; both together do not.
  PassTimes layer;
  layer.forward = 10e-3;
  layer.backward = 30e-3;
  ASSERT_LT(network.forward / out, layer.forward);
  ASSERT_LT(network.backward / back, layer.backward);
  const PassTimes stall = module_offload_stall(s, p, layer, LayerKind::dense, program);
  EXPECT_DOUBLE_EQ(stall.forward, (bytes + network.forward) / out - 10e-3);
  EXPECT_DOUBLE_EQ(stall.backward, (bytes + network.backward) / back - 30e-3);
  s.cluster.gpu.host_link_carries_network = false;
  EXPECT_EQ(module_offload_stall(s, p, layer, LayerKind::dense, program).offload, 0);
}

// The closed form, the step program's evaluator and the step engine add the same
// waits (a host link slow enough to make them), and the breakdown names them.
TEST(ModuleOffload, BothEnginesPlayTheWaits) {
  for (const std::string link : {"64GB/s", "4GB/s"}) {
    auto s = llama8b("", ", host_link_bandwidth: " + link);
    s.parallelism.offload_modules = {OffloadModule::core_attn, OffloadModule::attn_norm};
    const StepReport est = estimate(s, testing::h100(), Detail::summary);
    const double eval = evaluate_program(build_step_program(s, testing::h100())).step_time_s;
    EXPECT_NEAR(eval / est.step_time_s, 1, 1e-9) << link;
    const testing::ChildResult sim = testing::run_in_child(s, testing::options(), testing::h100());
    ASSERT_GT(sim.step_time_s, 0) << link;
    EXPECT_NEAR(sim.step_time_s / est.step_time_s, 1, 1e-6) << link;
    double waits = 0;
    for (const auto& part : est.breakdown) {
      if (part.name == "offload") waits = part.seconds;
    }
    if (link == "4GB/s") {
      EXPECT_GT(waits, 0.1 * est.step_time_s);
      auto plain = s;
      plain.parallelism.offload_modules.clear();
      EXPECT_GT(est.step_time_s, estimate(plain, testing::h100()).step_time_s + waits * 0.99);
    } else {
      EXPECT_EQ(waits, 0) << "64 GB/s keeps up";
    }
  }
}

// Where activations do not fit even so, the report offers offloading every module
// the scenario's recomputation leaves (selective recomputation keeps the attention
// core's inputs itself), priced as the scenario with them: the most it can save.
TEST(ModuleOffload, FitRemedyOffloadsTheModulesTheRecomputationLeaves) {
  const auto s = llama8b(", micro_batch: 8, recompute: selective");
  ASSERT_FALSE(estimate(s, testing::h100()).fits);
  const auto remedies = fit_remedies(s, testing::h100());
  const auto it = std::find_if(remedies.begin(), remedies.end(), [](const FitRemedy& r) {
    return r.key == "parallelism.offload_modules";
  });
  ASSERT_NE(it, remedies.end());
  EXPECT_EQ(it->value, "[attn_norm,qkv_linear,attn_proj,mlp_norm]");
  auto off = s;
  off.parallelism.offload_modules = {OffloadModule::attn_norm, OffloadModule::qkv_linear,
                                     OffloadModule::attn_proj, OffloadModule::mlp_norm};
  const StepReport r = estimate(off, testing::h100(), Detail::summary);
  EXPECT_DOUBLE_EQ(it->memory_needed, r.memory_needed());
  EXPECT_DOUBLE_EQ(it->step_time_s, r.step_time_s);
}

// The modules `plan --offload` and the fit remedy take: the set fits (within the
// headroom, the host's share within its memory), and no module of it can go back
// to the GPU without leaving the headroom or lengthening the step; with a host link
// that hides every copy that is a pair of modules, with one slow enough to make
// waits, a set that is no slower than sending every module. Micro-batches of 2
// need 71.0 GiB of the H100's 76.9 usable, above 90 %.
TEST(ModuleOffload, TheModulesThatFitAreNoMoreThanTheStepNeeds) {
  const DeviceProfile& p = testing::h100();
  for (const std::string link : {"64GB/s", "4GB/s"}) {
    const auto s = llama8b(", micro_batch: 2", ", host_link_bandwidth: " + link);
    const StepReport plain = estimate(s, p, Detail::summary);
    ASSERT_GT(plain.memory_needed() / plain.memory_usable(), 0.9) << link;
    const std::optional<ModulesFit> fit = offloaded_modules_that_fit(s, p, 0.9);
    ASSERT_TRUE(fit) << link;
    auto with = s;
    with.parallelism.offload_modules = fit->modules;
    const StepReport again = estimate(with, p, Detail::summary);
    EXPECT_EQ(again.step_time_s, fit->report.step_time_s) << link;
    EXPECT_LE(again.memory_needed() / again.memory_usable(), 0.9) << link;
    EXPECT_TRUE(again.host_fits()) << link;
    for (std::size_t k = 0; k < fit->modules.size(); ++k) {
      auto fewer = with;
      fewer.parallelism.offload_modules.erase(fewer.parallelism.offload_modules.begin() +
                                              static_cast<std::ptrdiff_t>(k));
      const StepReport r = estimate(fewer, p, Detail::summary);
      EXPECT_TRUE(r.memory_needed() / r.memory_usable() > 0.9 || r.step_time_s > again.step_time_s)
          << link << " without module " << k;
    }
    auto every = s;
    every.parallelism.offload_modules = {OffloadModule::attn_norm, OffloadModule::qkv_linear,
                                         OffloadModule::core_attn, OffloadModule::attn_proj,
                                         OffloadModule::mlp_norm};
    const StepReport all = estimate(every, p, Detail::summary);
    EXPECT_LE(again.step_time_s, all.step_time_s) << link;
    if (link == "64GB/s") {
      EXPECT_EQ(again.step_time_s, plain.step_time_s) << "every copy hidden";
      EXPECT_LT(fit->modules.size(), every.parallelism.offload_modules.size());
    } else {
      EXPECT_LT(again.step_time_s, all.step_time_s) << "fewer copies, shorter waits";
    }
  }
}

// None where even every module leaves the layout above the headroom, nor where
// fine-grained offload does not apply.
TEST(ModuleOffload, NoModulesWhereNoneFitOrOffloadDoesNotApply) {
  const DeviceProfile& p = testing::h100();
  const auto s = llama8b(", micro_batch: 2");
  ASSERT_TRUE(offloaded_modules_that_fit(s, p, 0.9));
  EXPECT_FALSE(offloaded_modules_that_fit(s, p, 0.5));  // every module: 78 % of usable
  auto full = s;
  full.parallelism.recompute = models::scenario::Recompute::full;
  EXPECT_FALSE(offloaded_modules_that_fit(full, p, 0.9));
  auto layers = s;
  layers.parallelism.pp = 1;
  layers.parallelism.offload_layers = 4;
  EXPECT_FALSE(offloaded_modules_that_fit(layers, p, 0.9));
  auto no_link = s;
  no_link.cluster.gpu.host_link_bw_Bps = 0;
  EXPECT_FALSE(offloaded_modules_that_fit(no_link, p, 0.9));
  DeviceProfile unmeasured = p;
  unmeasured.device_to_host_efficiency = 0;
  EXPECT_FALSE(offloaded_modules_that_fit(s, unmeasured, 0.9));
}

}  // namespace
}  // namespace myriad::sim
