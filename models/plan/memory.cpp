#include "models/plan/memory.hpp"

#include <algorithm>
#include <array>

#include "models/plan/pipeline_schedule.hpp"
#include "models/transformer/moe_routing.hpp"

namespace myriad::models {

std::string MemoryBreakdown::dominant() const {
  std::pair<double, const char*> parts[] = {{weights, "weights"},
                                            {gradients, "gradients"},
                                            {optimizer, "optimizer states"},
                                            {activations, "activations"}};
  return std::max_element(std::begin(parts), std::end(parts))->second;
}

double layer_activation_bytes(const scenario::Scenario& s) {
  return layer_activation_bytes(s, s.model.is_moe() ? LayerKind::moe : LayerKind::dense);
}

namespace {

// What a layer keeps for backward on one rank, per token: in all, and what each
// module whose saved tensors fine-grained offload sends to the host keeps of it
// (OffloadModule; the attention's output is core_attn's and, where the output
// projection keeps no copy of its own, attn_proj's too).
struct LayerKeeps {
  double tokens = 0;
  double total = 0;
  double attn_norm = 0;
  double qkv_linear = 0;
  double attention_inputs = 0;  // core_attn's: queries, keys, values (and unfused scores)
  double attention_output = 0;  // core_attn's, and attn_proj's without a copy
  double proj_copy = 0;         // attn_proj's fp8 copy of the output, where it keeps one
  double mlp_norm = 0;
  double expert_fc1 = 0;
  double moe_act = 0;
  // What the listed modules keep: each tensor once.
  [[nodiscard]] double offloaded(const scenario::ParallelSpec& p) const {
    using M = scenario::OffloadModule;
    double out = 0;
    if (p.offloads(M::attn_norm)) out += attn_norm;
    if (p.offloads(M::qkv_linear)) out += qkv_linear;
    if (p.offloads(M::core_attn)) out += attention_inputs + attention_output;
    if (p.offloads(M::attn_proj)) {
      out += proj_copy > 0 ? proj_copy : (p.offloads(M::core_attn) ? 0 : attention_output);
    }
    if (p.offloads(M::mlp_norm)) out += mlp_norm;
    if (p.offloads(M::expert_fc1)) out += expert_fc1;
    if (p.offloads(M::moe_act)) out += moe_act;
    return out;
  }
};

// What the attention keeps per token, in 16 bits, whole heads (tensor
// parallelism splits them): queries, keys, values and output (`all`), of which
// the output; and MLA's latents, which every tp rank keeps whole (before sp).
struct AttentionKeeps {
  double all = 0;
  double output = 0;
  double latents = 0;
};

AttentionKeeps attention_keeps(const scenario::Scenario& s) {
  const auto& m = s.model;
  const auto& p = s.parallelism;
  const double kv = static_cast<double>(m.kv_heads) * m.head_width();
  const double q = m.query_width();
  // Queries and the attention's output (2 B each), keys and values.
  AttentionKeeps a{4 * q + 4 * kv, 2 * q, 0};
  if (!m.is_mla()) return a;
  // Every head's query and key (qk wide) and value and output (v wide), and the
  // latents the up-projections read, whole on every tp rank (DeepSeek-V3 s3.2.3
  // recomputes the up-projections in backward instead; not modelled).
  const double heads = m.heads;
  a.all = 2 * heads * (2 * m.head_width() + 2 * m.value_width());
  a.output = 2 * heads * m.value_width();
  if (p.recompute_norms_and_up) {
    // The up-projections' queries, keys and values are made again in backward
    // (the attention's output stays, the output projection's input).
    a.all = 2 * heads * m.value_width();
  }
  const double t = p.tp;
  const bool sp = p.sp && p.tp > 1;
  a.latents = 2 * (m.mla.q_lora_rank + m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * (sp ? t : 1);
  return a;
}

LayerKeeps layer_keeps(const scenario::Scenario& s, LayerKind kind) {
  const auto& m = s.model;
  const bool moe = kind == LayerKind::moe && m.is_moe();
  const auto& p = s.parallelism;
  const double t = p.tp;
  const bool sp = p.sp && p.tp > 1;
  LayerKeeps k;
  k.tokens = static_cast<double>(p.micro_batch) * m.seq_length / p.cp;
  const double h = m.hidden;
  // Full recomputation keeps a layer's input (layer_activation_bytes), no module's.
  if (p.recompute == scenario::Recompute::full && p.recompute_layers == 0) return k;
  const bool swiglu = m.activation == scenario::Activation::swiglu;
  // Bytes a value of what a GEMM keeps of its input for the weight gradient: fp8
  // GEMMs keep it in fp8 (Transformer Engine's Linear saves the quantized input,
  // transformer_engine/pytorch/module/linear.py, "Cached input tensor", as
  // DeepSeek-V3's framework does, arXiv:2412.19437 Figure 6, s3.3.3).
  const bool fp8 = s.training.precision == scenario::Precision::fp8;
  const double gemm_input = fp8 ? 1 : 2;
  double f = m.ffn_hidden;
  double routed = 1;
  double shared = 0;  // shared experts' activations per token
  if (moe) {
    f = m.moe.expert_ffn_hidden;
    // Token copies the busiest expert-parallel rank holds per token routed: top_k
    // evenly, more under skew, capacity_factor * top_k padded.
    routed = moe_load(m.moe, p.ep).busiest_slots;
    const double fs = static_cast<double>(m.moe.shared_experts) * m.moe.shared_expert_ffn_hidden;
    shared = 2 * (swiglu ? 2 * fs : fs) + gemm_input * fs;
  }
  const double f_in = swiglu ? 2 * f : f;
  // Split by sequence under sp: the norms' inputs and outputs (the latter the QKV
  // and fc1 GEMMs' inputs), and the two dropouts' 1-byte masks where there is
  // dropout (Korthikanti et al., arXiv:2205.05198, s4.1: 10sbh of 34sbh).
  const bool dropout = m.dropout > 0;
  double replicated = dropout ? 10 * h : 8 * h;
  const double by_sequence = sp ? 1 / t : 1.0;
  k.attn_norm = 2 * h * by_sequence;
  k.mlp_norm = 2 * h * by_sequence;
  AttentionKeeps a = attention_keeps(s);
  replicated += a.latents;
  // Recomputed norms (Megatron-LM's recompute module layernorm) keep only their
  // inputs: their outputs, the column-parallel GEMMs' inputs, go (4h of the 10h).
  if (p.recompute_norms_and_up) replicated -= 4 * h;
  // Under fp8 the QKV and fc1 inputs (norm outputs, 2h of the 10h) halve; the
  // output projection's input is FlashAttention's output, which FlashAttention
  // keeps in bf16 for its own backward: the projection's fp8 copy comes on top.
  // Kept as they are: the norms' and the activation's inputs, the attention's q,
  // k, v and output (bf16 kernels), MLA's latents.
  // DeepSeek-V3's recipe (blockwise here) keeps that output once, in its E5M6
  // format (1.5 B), for both the attention's backward and the projection's
  // (s3.3.3, "Inputs of the Linear after the attention operator").
  if (fp8) {
    if (!p.recompute_norms_and_up) replicated -= 2 * h;
    const bool e5m6 = s.training.fp8_recipe == scenario::Fp8Recipe::blockwise;
    a.all += (e5m6 ? -0.5 : 1.0) * m.heads * m.value_width();
    if (e5m6) {
      a.output -= 0.5 * m.heads * m.value_width();
    } else {
      k.proj_copy = m.heads * m.value_width() / t;
    }
  }
  if (!p.recompute_norms_and_up) k.qkv_linear = gemm_input * h * by_sequence;
  k.attention_output = a.output / t;
  const double attention = a.all;
  const double output = a.output;
  // What the MLP keeps: its fc1 output (the activation's input) and fc2 input,
  // and an MoE layer's permuted token copies (the experts' fc1 input).
  const double permuted = moe ? gemm_input * h : 0;
  // Recomputing the experts' activation keeps only its input: in fp8 (with 4-byte
  // scales a 128-value tile) where the recipe quantizes tile by tile, as
  // DeepSeek-V3 caches the SwiGLU input (s3.3.3), else as fc1 wrote it.
  const bool act_recomputed = moe && p.recompute_moe_act;
  const double act_input =
      act_recomputed && fp8 && s.training.fp8_recipe == scenario::Fp8Recipe::blockwise
          ? 1 + 4.0 / 128
          : 2;
  const double expert_mlp =
      act_recomputed ? act_input * f_in + permuted : 2 * f_in + gemm_input * f + permuted;
  if (moe) {
    k.expert_fc1 = routed * permuted / t;
    k.moe_act = routed * act_input * f_in / t;
  }
  const double split = attention + shared + routed * expert_mlp;
  double per_token = (sp ? replicated / t : replicated) + split / t;
  double scores = 0;
  if (!s.training.fused_kernels && p.recompute != scenario::Recompute::selective) {
    // The softmax's output, and with dropout its mask and output (5as^2b of Korthikanti).
    scores = (dropout ? 5.0 : 2.0) * m.heads * m.seq_length / t;
    per_token += scores;
  }
  k.attention_inputs = (attention - output) / t - k.proj_copy + scores;
  k.total = per_token;
  return k;
}

}  // namespace

double layer_activation_bytes(const scenario::Scenario& s, LayerKind kind) {
  const auto& p = s.parallelism;
  // Full recomputation keeps a layer's input (recomputed_layer_activation_bytes);
  // partial recomputation's other layers keep what a layer without it keeps.
  if (p.recompute == scenario::Recompute::full && p.recompute_layers == 0) {
    const double tokens = static_cast<double>(p.micro_batch) * s.model.seq_length / p.cp;
    return tokens * 2 * s.model.hidden / (p.sp && p.tp > 1 ? p.tp : 1);
  }
  const LayerKeeps k = layer_keeps(s, kind);
  if (s.parallelism.offload_modules.empty()) return k.tokens * k.total;
  return k.tokens * (k.total - k.offloaded(s.parallelism));
}

double layer_offloaded_bytes(const scenario::Scenario& s, LayerKind kind) {
  const LayerKeeps k = layer_keeps(s, kind);
  return k.tokens * k.offloaded(s.parallelism);
}

OffloadedActivations offloaded_activations(const scenario::Scenario& s) {
  const auto& m = s.model;
  const double moe = layer_activation_bytes(s, LayerKind::moe);
  const double dense = layer_activation_bytes(s, LayerKind::dense);
  const auto bytes = [&](int i) { return m.is_moe_layer(i) ? moe : dense; };
  OffloadedActivations a;
  for (int i = 0; i < m.layers; ++i) a.all += bytes(i);
  const int n = s.parallelism.offload_layers;
  if (n <= 0) {
    a.on_gpu = a.all;
    return a;
  }
  for (int i = 0; i < n; ++i) a.on_host += bytes(i);
  const int kept = m.layers - n;
  double window = 0;
  for (int i = 0; i < m.layers; ++i) {
    window += bytes(i);
    if (i >= kept) window -= bytes(i - kept);
    if (i + 1 >= kept) a.on_gpu = std::max(a.on_gpu, window);
  }
  return a;
}

double recomputed_layer_activation_bytes(const scenario::Scenario& s) {
  const auto& p = s.parallelism;
  const bool sp = p.sp && p.tp > 1;
  const double tokens = static_cast<double>(p.micro_batch) * s.model.seq_length / p.cp;
  return tokens * 2 * s.model.hidden / (sp ? p.tp : 1);
}

namespace {

// ZeRO shards dense parameters over the dp * cp ranks holding copies of them and
// experts over the expert data-parallel ranks (Megatron-LM's distributed optimizer).
MemoryBreakdown states(const scenario::Scenario& s, const StepPlan& plan, double params,
                       double moe_layers) {
  const auto& p = s.parallelism;
  const double expert = moe_layers * plan.expert_params_per_layer;
  const double dense = params - expert;
  const double trained = expert * plan.expert_trained;
  const auto shard = [&](int stage, double group) { return p.zero >= stage ? group : 1.0; };
  const double ddp = plan.dense_dp;
  const double edp = plan.expert_dp;
  MemoryBreakdown b;
  b.weights = dense * 2 / shard(3, ddp) + expert * plan.expert_weight_bytes / shard(3, edp);
  const double grad = gradient_bytes(s);
  b.gradients = dense * grad / shard(2, ddp) + trained * grad / shard(2, edp);
  const double opt = optimizer_bytes_per_param(s.training);
  b.optimizer = dense * opt / shard(1, ddp) + trained * opt / shard(1, edp);
  return b;
}

// The embedding's dropout mask, per micro-batch: its output is the first layer's
// input, which that layer's norm keeps (layer_activation_bytes); its backward
// needs only the token ids.
double embedding_activation_bytes(const scenario::Scenario& s, const StepPlan& plan) {
  if (s.model.dropout <= 0) return 0;
  return plan.shard.tokens() * s.model.hidden / (plan.shard.sp ? s.parallelism.tp : 1);
}

// The fp32 logits of one micro-batch: the model's and each MTP module's.
double logits_bytes(const scenario::Scenario& s, const StepPlan& plan) {
  return (1 + s.model.mtp_depth) * plan.shard.tokens() * static_cast<double>(s.model.vocab) /
         s.parallelism.tp * 4;
}

// What the MTP modules keep for backward of one micro-batch besides their blocks'
// activations: per token and module the shifted token's embedding and the hidden
// state (the norms' inputs, 2 bytes each) and their concatenation (the
// projection's input, 2 x 2 bytes), split by sequence under sequence parallelism.
double mtp_activation_bytes(const scenario::Scenario& s, const StepPlan& plan) {
  return s.model.mtp_depth * plan.shard.tokens() * s.model.hidden * 8 /
         (plan.shard.sp ? s.parallelism.tp : 1);
}

}  // namespace

int forwards_in_flight(const scenario::Scenario& s, int stage) {
  const auto& p = s.parallelism;
  const int m = p.micro_batches();
  return std::min(m * p.virtual_stages,
                  warmup_forwards(p.schedule, p.pp, p.virtual_stages, m, stage) + 1);
}

namespace {

// How many of a stage's first n forward passes ran chunk `chunk`: the k-th runs
// forward_chunk(k) = (k mod p v) / p, so each full round of p v passes runs it p times.
int forwards_of_chunk(int n, int chunk, int p, int v) {
  const int round = p * v;
  return n / round * p + std::clamp(n % round - chunk * p, 0, p);
}

}  // namespace

double layers_in_flight(const scenario::Scenario& s, const StepPlan& plan, int stage) {
  const int p = s.parallelism.pp;
  const int v = s.parallelism.virtual_stages;
  const auto& chunks = plan.layers_by_chunk[static_cast<std::size_t>(stage)];
  const int n = forwards_in_flight(s, stage);
  double layers = 0;
  for (int chunk = 0; chunk < v; ++chunk) {
    layers += static_cast<double>(forwards_of_chunk(n, chunk, p, v)) *
              chunks[static_cast<std::size_t>(chunk)];
  }
  return layers;
}

namespace {

// What one forward pass of a chunk keeps of its layers' activations: each kind
// of layer's, a recomputed one's its input only.
struct ChunkActivations {
  double layer = 0;
  double dense = 0;
  double recomputed = 0;
  ChunkActivations(const scenario::Scenario& s, const StepPlan& plan)
      : layer(layer_activation_bytes(s)),
        dense(plan.mixed() ? layer_activation_bytes(s, LayerKind::dense) : layer),
        recomputed(recomputed_layer_activation_bytes(s)) {}
  [[nodiscard]] double of(const StepPlan& plan, int stage, int chunk) const {
    const auto k = static_cast<std::size_t>(stage);
    const auto c = static_cast<std::size_t>(chunk);
    const int n = plan.layers_by_chunk[k][c];
    const int d = plan.dense_by_chunk[k][c];
    const int r = plan.recomputed_by_chunk[k][c];
    const int rd = plan.recomputed_dense_by_chunk[k][c];
    return (n - d - (r - rd)) * layer + (d - rd) * dense + r * recomputed;
  }
};

}  // namespace

double activations_in_flight(const scenario::Scenario& s, const StepPlan& plan, int stage) {
  if (!plan.mixed() && !plan.partial_recompute()) {
    return layer_activation_bytes(s) * layers_in_flight(s, plan, stage);
  }
  const ChunkActivations per(s, plan);
  const int p = s.parallelism.pp;
  const int v = s.parallelism.virtual_stages;
  const int n = forwards_in_flight(s, stage);
  double bytes = 0;
  for (int chunk = 0; chunk < v; ++chunk) {
    bytes += static_cast<double>(forwards_of_chunk(n, chunk, p, v)) * per.of(plan, stage, chunk);
  }
  return bytes;
}

double micro_batches_in_flight(const scenario::Scenario& s, const StepPlan& plan, int stage) {
  const int layers = plan.layers_by_stage[static_cast<std::size_t>(stage)];
  if (layers == 0) {
    return static_cast<double>(forwards_in_flight(s, stage)) / s.parallelism.virtual_stages;
  }
  return layers_in_flight(s, plan, stage) / layers;
}

namespace {

// ZeRO-3 holds, besides its shards, the units it has gathered whole: the one
// computing and the next one, whose all-gather runs beside it (PyTorch's FSDP
// notes, docs.pytorch.org/docs/stable/notes/fsdp.html: layer k+1's all-gather
// overlaps layer k's compute; its rate limiter, limit_all_gathers, on by default,
// keeps further layers from being gathered early), in 16 bits. ZeRO-2 and -3 also
// hold the gradients of the unit being reduce-scattered, whole, in the gradient
// buffer's precision (DeepSpeed's stage 2 fills a bucket of them before it
// reduces). A unit is a layer, or the embedding or the head where a stage holds
// a larger one.
void add_gathered(const scenario::Scenario& s, const StepPlan& plan, int stage,
                  MemoryBreakdown& b) {
  if (s.parallelism.zero < 2 || plan.dense_dp <= 1) return;
  double unit = std::max(plan.params_per_layer, plan.params_per_dense_layer);
  if (stage == 0) unit = std::max(unit, plan.embedding_params);
  if (stage == s.parallelism.pp - 1) unit = std::max(unit, plan.head_params);
  if (s.parallelism.zero >= 3) b.weights += 2 * unit * 2;
  b.gradients += unit * gradient_bytes(s);
}

// DualPipe: the most a rank holds of its two chunks' activations over its
// order (a chunk pass's from its forward to its backward's input gradients;
// an F&B pass trades one for another), with each direction's embedding output
// and MTP inputs on the chunk at its ends, and one micro-batch's logits on the
// end ranks, which hold a head.
double dualpipe_activations(const scenario::Scenario& s, const StepPlan& plan, int stage) {
  const int pp = s.parallelism.pp;
  const ChunkActivations per(s, plan);
  std::array<double, 2> pass{};
  for (int chunk = 0; chunk < 2; ++chunk) {
    const auto c = static_cast<std::size_t>(chunk);
    pass[c] = per.of(plan, stage, chunk);
    const int at = model_position(scenario::Schedule::dualpipe, pp, stage, chunk);
    if (at == 0) pass[c] += embedding_activation_bytes(s, plan);
    if (at == pp - 1) pass[c] += mtp_activation_bytes(s, plan);
  }
  std::array<int, 2> held{};
  double most = 0;
  for (const PipelineTask& t : dualpipe_order(pp, s.parallelism.micro_batches(), stage)) {
    const auto c = static_cast<std::size_t>(t.chunk);
    if (t.forward) ++held[c];
    if (!t.forward && t.part != PassPart::weight) --held[c];
    if (!t.paired) most = std::max(most, held[0] * pass[0] + held[1] * pass[1]);
  }
  const bool ends = stage == 0 || stage == pp - 1;
  return most + (ends ? logits_bytes(s, plan) : 0);
}

MemoryBreakdown stage_states_and_activations(const scenario::Scenario& s, const StepPlan& plan,
                                             int stage) {
  const auto& p = s.parallelism;
  if (p.schedule == scenario::Schedule::dualpipe) {
    const auto k = static_cast<std::size_t>(stage);
    const double params = stage == 0          ? plan.params_first_stage
                          : stage == p.pp - 1 ? plan.params_last_stage
                                              : plan.stage_layer_params(stage);
    MemoryBreakdown b = states(s, plan, params, plan.layers_by_stage[k] - plan.dense_by_stage[k]);
    b.activations = dualpipe_activations(s, plan, stage);
    return b;
  }
  const int in_flight = forwards_in_flight(s, stage);
  const auto k = static_cast<std::size_t>(stage);
  const int moe_layers = plan.layers_by_stage[k] - plan.dense_by_stage[k];
  if (stage == 0) {
    MemoryBreakdown first = states(s, plan, plan.params_first_stage, moe_layers);
    first.activations = activations_in_flight(s, plan, 0);
    if (p.offload_layers > 0) {  // a pipeline of one stage: one micro-batch in flight
      const OffloadedActivations off = offloaded_activations(s);
      first.activations -= off.all - off.on_gpu;
      first.offloaded = off.on_host;
    }
    // The embedding's output, once a forward pass of the first chunk.
    first.activations += forwards_of_chunk(in_flight, 0, p.pp, p.virtual_stages) *
                         embedding_activation_bytes(s, plan);
    if (p.pp == 1) {
      first.activations +=
          logits_bytes(s, plan) +
          forwards_of_chunk(in_flight, p.virtual_stages - 1, p.pp, p.virtual_stages) *
              mtp_activation_bytes(s, plan);
    }
    return first;
  }
  if (stage == p.pp - 1) {
    // The last chunk's forward runs its backward at once: one micro-batch's fp32
    // logits; the MTP modules' inputs, once a forward pass of the last chunk.
    MemoryBreakdown last = states(s, plan, plan.params_last_stage, moe_layers);
    last.activations = activations_in_flight(s, plan, stage) + logits_bytes(s, plan) +
                       forwards_of_chunk(in_flight, p.virtual_stages - 1, p.pp, p.virtual_stages) *
                           mtp_activation_bytes(s, plan);
    return last;
  }
  MemoryBreakdown b = states(s, plan, plan.stage_layer_params(stage), moe_layers);
  b.activations = activations_in_flight(s, plan, stage);
  return b;
}

}  // namespace

MemoryBreakdown stage_memory(const scenario::Scenario& s, const StepPlan& plan, int stage) {
  MemoryBreakdown b = stage_states_and_activations(s, plan, stage);
  if (!s.parallelism.offload_modules.empty()) {
    // Fine-grained offload: the host holds what the layers in flight sent it; the
    // GPU, besides what they keep, one layer's offloaded tensors on their way (a
    // copy leaves after its module's forward, and the next one's reload comes in
    // a module ahead of its backward; on the last stage the last layer's stay).
    scenario::Scenario kept = s;
    kept.parallelism.offload_modules.clear();
    b.offloaded = stage_states_and_activations(kept, plan, stage).activations - b.activations;
    b.activations += std::max(layer_offloaded_bytes(s, LayerKind::moe),
                              plan.mixed() ? layer_offloaded_bytes(s, LayerKind::dense) : 0.0);
  }
  add_gathered(s, plan, stage, b);
  return b;
}

MemoryBreakdown memory_per_gpu(const scenario::Scenario& s, const StepPlan& plan) {
  const int pp = s.parallelism.pp;
  if (pp == 1) return stage_memory(s, plan, 0);
  const MemoryBreakdown first = stage_memory(s, plan, 0);
  const MemoryBreakdown last = stage_memory(s, plan, pp - 1);
  MemoryBreakdown most = first.total() >= last.total() ? first : last;
  // The stages between: with even stages the second holds the most (the most
  // in flight); with uneven ones a later, larger stage may.
  for (int stage = 1; stage + 1 < pp; ++stage) {
    const MemoryBreakdown b = stage_memory(s, plan, stage);
    if (b.total() > most.total()) most = b;
  }
  return most;
}

PipelinePieces pipeline_pieces(const scenario::Scenario& s, const StepPlan& plan) {
  PipelinePieces pieces;
  pieces.layer = {states(s, plan, plan.params_per_layer, 1).total(), layer_activation_bytes(s)};
  if (plan.mixed()) {
    pieces.dense_layer = {states(s, plan, plan.params_per_dense_layer, 0).total(),
                          layer_activation_bytes(s, LayerKind::dense)};
  } else {
    pieces.dense_layer = pieces.layer;
  }
  const double embedding_params = plan.params_first_stage - plan.stage_layer_params(0);
  pieces.embedding = {states(s, plan, embedding_params, 0).total(),
                      embedding_activation_bytes(s, plan)};
  const double head_params = plan.params_last_stage - plan.stage_layer_params(s.parallelism.pp - 1);
  pieces.head = {states(s, plan, head_params, 0).total(),
                 logits_bytes(s, plan) + mtp_activation_bytes(s, plan)};
  return pieces;
}

}  // namespace myriad::models
