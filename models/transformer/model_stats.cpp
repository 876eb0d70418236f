#include "models/transformer/model_stats.hpp"

#include <algorithm>

#include "models/plan/step_plan.hpp"
#include "models/transformer/moe_routing.hpp"

namespace myriad::models {
namespace {

using scenario::Activation;

double mlp_params(double h, double f, Activation act) {
  return (act == Activation::swiglu ? 3.0 : 2.0) * h * f;
}

// MoE blocks among the blocks a step runs (the layers and the MTP modules').
double stack_moe_layers(const scenario::ModelSpec& m) {
  return m.is_moe() ? m.moe_layers_in(0, m.stack_layers()) : 0;
}

// Forward FLOPs per token of the blocks' matrix multiplies (attention core aside):
// an MoE model's dense layers through their own MLP; the MTP modules' blocks with
// them (their projections are outside the blocks: mtp_projection_flops_per_token).
double layers_matmul_flops_per_token(const scenario::ModelSpec& m, const ParamCounts& p,
                                     double blocks, double moe_blocks) {
  const double moe = m.is_moe() ? moe_blocks : blocks;
  return 2 * (blocks * p.attention + moe * p.mlp_active + (blocks - moe) * p.dense_mlp);
}

double layers_matmul_flops_per_token(const scenario::ModelSpec& m, const ParamCounts& p) {
  return layers_matmul_flops_per_token(m, p, m.stack_layers(), stack_moe_layers(m));
}

double mtp_projection_flops_per_token(const scenario::ModelSpec& m) {
  return m.mtp_depth * 2 * (2.0 * m.hidden * m.hidden);
}

}  // namespace

ParamCounts param_counts(const scenario::ModelSpec& m) {
  const double h = m.hidden;
  const double q = m.query_width();
  ParamCounts p;
  // Q, K and V from the hidden state, the output projection back to it.
  p.attention = h * (q + 2.0 * m.kv_heads * m.head_width()) + q * h;
  if (m.is_mla()) {
    // Down to the latents (with the shared RoPE key), their norms, up to every
    // head's query, key and value, and the output projection from the values.
    const auto& mla = m.mla;
    const double heads = m.heads;
    const double rank_q = mla.q_lora_rank;
    const double rank_kv = mla.kv_lora_rank;
    const double qk = m.head_width();
    p.attention_unsplit = h * (rank_q + rank_kv + mla.qk_rope_head_dim) + rank_q + rank_kv;
    const double queries = rank_q > 0 ? rank_q * heads * qk : h * heads * qk;
    p.attention = p.attention_unsplit + queries +
                  rank_kv * heads * (mla.qk_nope_head_dim + mla.v_head_dim) +
                  heads * mla.v_head_dim * h;
  }
  if (m.is_moe()) {
    const double expert = mlp_params(h, m.moe.expert_ffn_hidden, m.activation);
    const double shared =
        m.moe.shared_experts * mlp_params(h, m.moe.shared_expert_ffn_hidden, m.activation);
    const double experts = m.moe.active_experts();
    p.mlp = experts * expert + shared + h * experts;
    p.mlp_active = m.moe.top_k * expert + shared + h * experts;
    p.dense_mlp = mlp_params(h, m.ffn_hidden, m.activation);
  } else {
    p.mlp = mlp_params(h, m.ffn_hidden, m.activation);
    p.mlp_active = p.mlp;
    p.dense_mlp = p.mlp;
  }
  p.norms = (m.norm == scenario::Norm::layernorm ? 4 : 2) * h;
  p.embedding = static_cast<double>(m.vocab) * h * (m.tied_embeddings ? 1 : 2);
  const double layers = m.layers;
  const double moe = m.is_moe() ? m.moe_layers() : layers;
  p.total =
      layers * (p.attention + p.norms) + moe * p.mlp + (layers - moe) * p.dense_mlp + p.embedding;
  p.active = layers * (p.attention + p.norms) + moe * p.mlp_active + (layers - moe) * p.dense_mlp +
             p.embedding;
  const double mtp_moe = stack_moe_layers(m) - (m.is_moe() ? moe : 0);
  p.mtp = m.mtp_depth * (p.attention + p.norms + 2 * h * h + 3 * h) + mtp_moe * p.mlp +
          (m.mtp_depth - mtp_moe) * p.dense_mlp;
  return p;
}

namespace {

// Model FLOPs with every routed token-expert slot computed, dropped ones included.
double routed_flops_per_step(const scenario::Scenario& s) {
  const auto& m = s.model;
  const ParamCounts p = param_counts(m);
  const double seq = m.seq_length;
  const double keys = m.keys_per_query();
  const double tokens = static_cast<double>(s.parallelism.global_batch) * seq;
  // Per token, forward: the layers' matrix multiplies, QK^T and PV over `keys`, the LM head.
  const double attention_core = 4 * keys * m.attention_core_width();
  const double forward = layers_matmul_flops_per_token(m, p) + mtp_projection_flops_per_token(m) +
                         m.stack_layers() * attention_core +
                         (1 + m.mtp_depth) * 2.0 * m.hidden * m.vocab;
  return 3 * forward * tokens;
}

}  // namespace

double model_flops_per_step(const scenario::Scenario& s) {
  const auto& m = s.model;
  if (!m.is_moe() || !(m.moe.capacity_factor > 0)) return routed_flops_per_step(s);
  // A token an expert's capacity drops skips that expert (the residual carries it
  // on): its FLOPs are not done, and counting them made a step that drops every
  // token report the MFU of one that drops none. The share dropped does not
  // depend on how the experts are spread over ranks (moe_load), so ep 1 gives it.
  const double dropped = moe_load(m.moe, 1).dropped;
  const double expert = 2 * mlp_params(m.hidden, m.moe.expert_ffn_hidden, m.activation);
  const double tokens = static_cast<double>(s.parallelism.global_batch) * m.seq_length;
  return routed_flops_per_step(s) -
         3 * stack_moe_layers(m) * expert * m.moe.top_k * dropped * tokens;
}

double hardware_flops_per_step(const scenario::Scenario& s) {
  const auto& m = s.model;
  const double seq = m.seq_length;
  const double keys = m.keys_per_query();
  const double tokens = static_cast<double>(s.parallelism.global_batch) * seq;
  const ParamCounts p = param_counts(m);
  // The forward of the layers full recomputation runs again: all of them, or the
  // first parallelism.recompute_layers of each chunk.
  const RecomputedLayers again = recomputed_layers(s);
  const double recomputed_forward = layers_matmul_flops_per_token(m, p, again.layers, again.moe) +
                                    again.layers * 4 * keys * m.attention_core_width();
  double extra = 0;
  switch (s.parallelism.recompute) {
    case scenario::Recompute::none:
      break;
    // As Korthikanti'22 counts it: s/(3h) in place of s/(6h), three times the
    // forward attention core (their HFU column reproduces with this). With fused
    // attention there is nothing to recompute (FlashAttention's backward
    // recomputes its scores anyway, as its own op, in MFU and HFU alike), and the
    // layer program prices none: HFU counts only what is priced.
    case scenario::Recompute::selective:
      if (!s.training.fused_kernels) {
        extra = m.stack_layers() * 12 * keys * m.attention_core_width();
      }
      break;
    case scenario::Recompute::full:
      extra = recomputed_forward;
      break;
  }
  // MLA's up-projections run again (DeepSeek-V3's recomputation; its norms are
  // not matrix multiplies).
  if (s.parallelism.recompute_norms_and_up && m.is_mla()) {
    const double up = p.attention - p.attention_unsplit - m.heads * m.value_width() * m.hidden;
    extra += m.stack_layers() * 2 * up;
  }
  // Experts padded to a capacity compute capacity_factor * top_k token copies each,
  // forward and backward, whatever the router sent (drops below it, padding above).
  double padding = 0;
  if (m.is_moe() && m.moe.capacity_factor > 0) {
    const double expert = 2 * mlp_params(m.hidden, m.moe.expert_ffn_hidden, m.activation);
    padding = 3 * stack_moe_layers(m) * expert * m.moe.top_k * (m.moe.capacity_factor - 1);
    // Recomputed MoE layers run their experts' forward (a third of it) again.
    if (again.moe > 0) padding *= 1 + again.moe / (3 * stack_moe_layers(m));
  }
  // Relative to every routed slot computed: capacity_factor * top_k slots an expert
  // computes in all, whatever the router dropped.
  return routed_flops_per_step(s) + (extra + padding) * tokens;
}

}  // namespace myriad::models
