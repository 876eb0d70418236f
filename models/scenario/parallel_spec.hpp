// How a job is split over the GPUs, and which communication overlaps compute.
#pragma once

#include <string>
#include <vector>

#include "models/names/enum_names.hpp"

namespace myriad::models::scenario {

// Pipeline schedules (models/plan/pipeline_schedule.hpp): Megatron-LM's 1F1B and
// interleaved 1F1B, and zero-bubble ZB-H1 (backward split into input and weight
// gradients; one chunk a stage) and DualPipe (bidirectional, two chunks a
// stage of its own), and Megatron-Core's combined 1F1B (1F1B or interleaved,
// each steady-state forward run together with the backward after it, one's
// expert all-to-alls behind the other's compute).
enum class Schedule { one_f_one_b, interleaved, zb_h1, dualpipe, combined_1f1b };
enum class Recompute { none, selective, full };
// The order ranks are laid out in, fastest first; nodes take consecutive ranks.
// Tensor parallelism is always innermost (inside a node) and context next.
enum class RankOrder {
  tp_cp_dp_pp,  // Megatron-LM's: a stage's replicas side by side
  tp_cp_pp_dp,  // a replica's stages side by side (pipelines inside a pod)
};

// The modules whose saved inputs Megatron-Core's fine-grained activation offload
// (--fine-grained-activation-offloading --offload-modules) sends to host memory.
enum class OffloadModule {
  attn_norm,   // the attention's norm: its input
  qkv_linear,  // the QKV (MLA: down-) projection: its input, the norm's output
  core_attn,   // the attention core: queries, keys, values and its output
  attn_proj,   // the output projection: its input (the attention's output, or its fp8 copy)
  mlp_norm,    // the MLP's norm: its input
  expert_fc1,  // the routed experts' fc1: their permuted tokens
  moe_act,     // the routed experts' activation: its input, fc1's output
};

// How the scenario spells them (the schema, reports, `--set` lines).
inline constexpr models::EnumName<Recompute> kRecomputeNames[] = {
    {Recompute::none, "none"}, {Recompute::selective, "selective"}, {Recompute::full, "full"}};
inline constexpr models::EnumName<Schedule> kScheduleNames[] = {
    {Schedule::one_f_one_b, "1f1b"},
    {Schedule::interleaved, "interleaved"},
    {Schedule::zb_h1, "zb-h1"},
    {Schedule::dualpipe, "dualpipe"},
    {Schedule::combined_1f1b, "combined-1f1b"}};
inline constexpr models::EnumName<OffloadModule> kOffloadModuleNames[] = {
    {OffloadModule::attn_norm, "attn_norm"}, {OffloadModule::qkv_linear, "qkv_linear"},
    {OffloadModule::core_attn, "core_attn"}, {OffloadModule::attn_proj, "attn_proj"},
    {OffloadModule::mlp_norm, "mlp_norm"},   {OffloadModule::expert_fc1, "expert_fc1"},
    {OffloadModule::moe_act, "moe_act"}};
inline constexpr models::EnumName<RankOrder> kRankOrderNames[] = {
    {RankOrder::tp_cp_dp_pp, "tp-cp-dp-pp"}, {RankOrder::tp_cp_pp_dp, "tp-cp-pp-dp"}};

struct ParallelSpec {
  int tp = 1;              // tensor parallel
  bool sp = false;         // sequence parallel (with tp)
  int pp = 1;              // pipeline stages
  int virtual_stages = 1;  // model chunks per stage (interleaved schedule)
  // Uneven stages (Megatron-LM's decoder first/last pipeline layers): layers of the
  // first and last stage; 0: an even share. The other stages share the rest evenly.
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  // Or every stage's layers, first to last (a placement: `myriad place`).
  std::vector<int> stage_layers;
  // Or Megatron-LM's --account-for-embedding-in-pipeline-split and
  // --account-for-loss-in-pipeline-split: the embedding (the loss) takes a layer's
  // place in the first (last) model chunk, and the model's layers with them split
  // evenly over pp * virtual_stages chunks (126 layers of Llama 3.1 405B over 64).
  bool embedding_as_layer = false;
  bool loss_as_layer = false;
  // Or Megatron-Core's --pipeline-model-parallel-layout (pipeline_layout.hpp):
  // every model chunk's layers written out, "Et|(tt|)*30mL"; and, derived from it,
  // the transformer layers of each of the pp * virtual_stages chunks in the
  // model's order (chunk c of stage s at c * pp + s).
  std::string pipeline_layout;
  std::vector<int> layout_layers;
  Schedule schedule = Schedule::one_f_one_b;
  int dp = 0;            // data parallel replicas
  int zero = 0;          // ZeRO stage: 0 none, 1 optimizer, 2 + gradients, 3 + parameters
  int cp = 1;            // context parallel
  int ep = 1;            // expert parallel
  int etp = 0;           // tensor parallel of the experts: 1 or tp (0 until derived: tp)
  int micro_batch = 1;   // sequences per micro-batch
  int global_batch = 0;  // sequences per step
  Recompute recompute = Recompute::none;
  // With recompute: full, how many of each model chunk's layers are recomputed,
  // the first ones; the others keep their activations (Megatron-LM's
  // --recompute-method block --recompute-num-layers). 0: every layer.
  int recompute_layers = 0;
  // Activation offload (Megatron-LM's --cpu-offloading with
  // --cpu-offloading-num-layers, Transformer Engine's get_cpu_offload_context):
  // the first N layers' activations are copied to host memory during forward and
  // back for backward, at most layers - N layers' on the GPU at once. 0: none.
  int offload_layers = 0;
  // Fine-grained activation offload (Megatron-Core's
  // --fine-grained-activation-offloading --offload-modules): what these modules
  // keep for backward goes to host memory after their forward, in every layer,
  // and comes back one module ahead in backward. Empty: none.
  std::vector<OffloadModule> offload_modules;
  [[nodiscard]] bool offloads(OffloadModule m) const {
    for (const OffloadModule o : offload_modules) {
      if (o == m) return true;
    }
    return false;
  }
  // Every norm and MLA's up-projections run again in backward instead of keeping
  // their outputs (DeepSeek-V3 s3.2.3).
  bool recompute_norms_and_up = false;
  // The routed experts' activation (SwiGLU) runs again in backward from its
  // input instead of keeping its output, the experts' fc2 input (Megatron-LM's
  // recompute module "moe_act"; DeepSeek-V3 s3.3.3).
  bool recompute_moe_act = false;
  // Under combined 1F1B, the weight-gradient GEMMs run after the input
  // gradients' (Megatron-Core's --delay-wgrad-compute, Transformer Engine's
  // backward_dw): the experts' beside the backward's dispatch, the attention's
  // beside the next layer's combine (model_chunk_schedule_plan.py).
  bool delay_wgrad_compute = false;
  RankOrder placement = RankOrder::tp_cp_dp_pp;

  // The recomputation as reports name it: its name, or under partial
  // recomputation "full 2/chunk"; with activation offload "none, 39 offloaded",
  // with fine-grained offload "none, offloads core_attn" or "none, offloads 3 modules".
  [[nodiscard]] std::string recompute_label() const {
    std::string label(name_in(kRecomputeNames, recompute));
    if (recompute == Recompute::full && recompute_layers > 0) {
      label += " " + std::to_string(recompute_layers) + "/chunk";
    }
    if (offload_layers > 0) label += ", " + std::to_string(offload_layers) + " offloaded";
    // Which modules, the row's --set line says: a table column stays narrow.
    if (offload_modules.size() == 1) {
      label += ", offloads " + std::string(name_in(kOffloadModuleNames, offload_modules[0]));
    } else if (!offload_modules.empty()) {
      label += ", offloads " + std::to_string(offload_modules.size()) + " modules";
    }
    return label;
  }

  [[nodiscard]] bool uneven_stages() const {
    return first_stage_layers > 0 || last_stage_layers > 0 || !stage_layers.empty() ||
           embedding_as_layer || loss_as_layer || !pipeline_layout.empty();
  }

  // Micro-batches each pipeline replica runs per step.
  [[nodiscard]] int micro_batches() const {
    return dp > 0 && micro_batch > 0 ? global_batch / (micro_batch * dp) : 0;
  }
};

struct OverlapSpec {
  bool tp = false;  // tensor-parallel collectives chunked and overlapped with GEMMs
  bool cp = false;  // context-parallel collectives likewise
  bool ep = false;  // expert-parallel all-to-alls likewise (inter-operator: chunks interleaved)
  // Intra-operator: tile-level fused communication and GEMM (tp and ep collectives
  // adjacent to a GEMM stream tile by tile inside it).
  bool fused = false;
  bool pp = false;  // pipeline send/recv asynchronous to compute
  bool dp = false;  // gradient reduce-scatter in backward, parameter all-gather prefetch
};

}  // namespace myriad::models::scenario
