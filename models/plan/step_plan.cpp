#include "models/plan/step_plan.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "models/plan/rank_layout.hpp"
#include "models/transformer/model_stats.hpp"

namespace myriad::models {

RecomputedLayers recomputed_layers(const scenario::Scenario& s) {
  const auto& p = s.parallelism;
  const auto& m = s.model;
  const auto moe_in = [&](int from, int to) { return m.is_moe() ? m.moe_layers_in(from, to) : 0; };
  if (p.recompute != scenario::Recompute::full) return {};
  if (p.recompute_layers == 0) return {m.stack_layers(), moe_in(0, m.stack_layers())};
  RecomputedLayers r;
  int first = 0;
  for (int chunk = 0; chunk < p.virtual_stages; ++chunk) {
    for (int stage = 0; stage < p.pp; ++stage) {
      int n = chunk_layers(s, stage, chunk);
      // The MTP modules' blocks follow the model's last layer, in its last chunk.
      if (chunk == p.virtual_stages - 1 && stage == p.pp - 1) n += m.mtp_depth;
      const int recomputed = std::min(n, p.recompute_layers);
      r.layers += recomputed;
      r.moe += moe_in(first, first + recomputed);
      first += n;
    }
  }
  return r;
}

double optimizer_bytes_per_param(const scenario::TrainingSpec& t) {
  const double moment = t.optimizer_moments == scenario::WirePrecision::bf16 ? 2 : 4;
  switch (t.optimizer) {
    case scenario::Optimizer::adam:
    case scenario::Optimizer::adamw:
    case scenario::Optimizer::lamb:
      return 4 + 2 * moment;  // fp32 master weights, first and second moments
    case scenario::Optimizer::lion:
    case scenario::Optimizer::sgd:
      return 4 + moment;  // fp32 master weights, one moment
  }
  return 4 + 2 * moment;
}

double gradient_bytes(const scenario::Scenario& s) {
  return s.training.gradient_precision == scenario::WirePrecision::fp32 ? 4 : 2;
}

namespace {

// Parameters of one layer held by one rank: attention, the router and shared
// experts split over TP (shared experts over the experts' TP); routed experts
// split over EP, and each over the experts' TP.
double expert_params_per_rank(const scenario::ModelSpec& m, int ep, int etp) {
  if (!m.is_moe()) return 0;
  const double expert = (m.activation == scenario::Activation::swiglu ? 3.0 : 2.0) * m.hidden *
                        m.moe.expert_ffn_hidden;
  return expert * m.moe.active_experts() / (static_cast<double>(ep) * etp);
}

double layer_params_per_rank(const scenario::ModelSpec& m, int tp, int ep, int etp) {
  const ParamCounts p = param_counts(m);
  // MLA's down-projections are held whole on every tp rank.
  const double attention = (p.attention - p.attention_unsplit) / tp + p.attention_unsplit;
  if (!m.is_moe()) return attention + p.mlp / tp + p.norms;
  const double routed = expert_params_per_rank(m, ep, etp);
  const double router = static_cast<double>(m.hidden) * m.moe.active_experts();
  const double shared = p.mlp - router - routed * ep * etp;  // shared experts
  return attention + router + shared / etp + routed + p.norms;
}

// A ring over n ranks moves 2 (n - 1) / n of the data per rank (all-reduce), or
// (n - 1) / n (reduce-scatter, all-gather): relative to one over dp ranks.
double ring_share(double n, double dp) { return dp > 1 ? ((n - 1) / n) / ((dp - 1) / dp) : 0; }

// What one rank's share of the data-parallel rings is, per parameter it holds:
// dense parameters are held by the dp x cp ranks (Megatron-LM reduces their
// gradients over its data-parallel group with context parallelism: a cp rank
// computed its gradients from its part of the sequence, so the cp ranks' copies
// are summed like the replicas'). The cp ranks of a replica that share a node
// reduce-scatter among themselves over NVLink (that step is not priced: under
// 0.2 % of the step in the MoE suite) and send a 1/(those in a node) shard
// across; cp ranks on different nodes (tp x cp past a node) each send all of
// theirs. Experts reduce over the expert data-parallel ranks, scaled to the dp
// ring's share.
struct DpShares {
  double dense = 1;
  double expert = 0;
};

DpShares dp_shares(const scenario::Scenario& s, const StepPlan& plan) {
  DpShares d;
  d.dense = 1.0 / group_span(GroupKind::cp, s).per_node;
  d.expert = plan.expert_trained * ring_share(plan.expert_dp, plan.dp);
  return d;
}

// ZeRO-2 and ZeRO-3 (FSDP) hold the gradients as 1/(dp x cp) shards, so they
// cannot be summed over the micro-batches in place: each micro-batch's backward
// reduce-scatters the layer's gradients into the shards as they are made
// (Rajbhandari et al., ZeRO, SC'20 s5.2: "as each gradient of each layer becomes
// available during the backward propagation, we only reduce them on the data
// parallel process responsible for updating the corresponding parameters";
// DeepSpeed's stage 2 reduces at every micro-step, stage 1 only at the
// accumulation boundary, DeepSpeed PR 7366). ZeRO-3 also holds a shard of each
// layer's parameters and gathers the layer whole before each use: in every
// micro-batch's forward, and again in its backward (with recomputation, that
// gather serves both) (ZeRO s5.3; Zhao et al., PyTorch FSDP, VLDB'23 s3:
// all-gather before forward and backward, reduce-scatter after backward). They
// are the layer program's collectives, on the dp group; ZeRO-2 gathers the
// updated parameters once a step (plan_dp).
void plan_sharded_gradients(const scenario::Scenario& s, StepPlan& plan) {
  const bool gathers = s.parallelism.zero >= 3;
  const DpShares share = dp_shares(s, plan);
  const double expert = plan.expert_params_per_layer;
  const double dense = plan.params_per_layer - expert;
  const double ring_expert = plan.expert_trained > 0 ? share.expert / plan.expert_trained : 0;
  const double layer_params =
      dense * 2 * share.dense + expert * ring_expert * plan.expert_weight_bytes;
  const double layer_grads = (dense * share.dense + expert * share.expert) * gradient_bytes(s);
  // Named apart, so that a report's per-step counts are the layer's alone.
  const auto add = [&](LayerProgram& lp, double params, double grads,
                       std::array<std::string_view, 3> names) {
    if (params <= 0) return;
    if (gathers) {
      lp.forward.comms.push_back({names[0], CollectiveKind::all_gather, GroupKind::dp, params});
      lp.backward.comms.push_back({names[1], CollectiveKind::all_gather, GroupKind::dp, params});
    }
    lp.backward.comms.push_back({names[2], CollectiveKind::reduce_scatter, GroupKind::dp, grads});
  };
  add(plan.layer, layer_params, layer_grads, {"dp.params", "dp.params.bwd", "dp.grads"});
  if (plan.mixed()) {
    const double d = plan.params_per_dense_layer * share.dense;
    add(plan.dense_layer, d * 2, d * gradient_bytes(s),
        {"dp.params.dense", "dp.params.dense.bwd", "dp.grads.dense"});
  }
  const double grad_bytes = gradient_bytes(s);
  const double embedding = plan.embedding_params * share.dense;
  const double head = plan.head_params * share.dense;
  add(plan.embedding, embedding * 2, embedding * grad_bytes,
      {"dp.params.embedding", "dp.params.embedding.bwd", "dp.grads.embedding"});
  add(plan.head, head * 2, head * grad_bytes,
      {"dp.params.head", "dp.params.head.bwd", "dp.grads.head"});
}

void plan_dp(const scenario::Scenario& s, StepPlan& plan) {
  if (plan.dp == 1) return;
  if (s.parallelism.zero >= 2) plan_sharded_gradients(s, plan);
  if (s.parallelism.zero == 3) return;
  const double expert = plan.expert_params_at_max;
  const double dense = plan.params_max - expert;
  const DpShares share = dp_shares(s, plan);
  const double equivalent = dense * share.dense + expert * share.expert;
  // Megatron-LM accumulates and reduces the gradients of bf16 models in fp32, those
  // of fp16 and fp8 models in 16 bits (training.gradient_precision); parameters are
  // gathered in 16 bits.
  const double grads = equivalent * gradient_bytes(s);
  const double params = equivalent * 2;
  if (s.parallelism.zero == 0) {
    plan.dp_comms.push_back({"dp.grads", CollectiveKind::all_reduce, GroupKind::dp, grads});
    return;
  }
  if (s.parallelism.zero == 1) {
    plan.dp_comms.push_back({"dp.grads", CollectiveKind::reduce_scatter, GroupKind::dp, grads});
  }
  plan.dp_comms.push_back({"dp.params", CollectiveKind::all_gather, GroupKind::dp, params});
}

}  // namespace

int chunk_layers(const scenario::Scenario& s, int stage, int chunk) {
  const auto& p = s.parallelism;
  if (!p.layout_layers.empty()) {
    return p.layout_layers[static_cast<std::size_t>(chunk) * static_cast<std::size_t>(p.pp) +
                           static_cast<std::size_t>(stage)];
  }
  if (p.embedding_as_layer || p.loss_as_layer) {
    const int chunks = p.pp * p.virtual_stages;
    int n = (s.model.layers + p.embedding_as_layer + p.loss_as_layer) / chunks;
    if (p.embedding_as_layer && stage == 0 && chunk == 0) --n;
    if (p.loss_as_layer && stage == p.pp - 1 && chunk == p.virtual_stages - 1) --n;
    return n;
  }
  return stage_layers(s, stage) / p.virtual_stages;
}

int chunk_first_layer(const scenario::Scenario& s, int stage, int chunk) {
  const auto& p = s.parallelism;
  int first = 0;
  for (int c = 0; c <= chunk; ++c) {
    for (int k = 0; k < p.pp; ++k) {
      if (c == chunk && k == stage) return first;
      first += chunk_layers(s, k, c);
    }
  }
  return first;
}

int stage_layers(const scenario::Scenario& s, int stage) {
  const auto& p = s.parallelism;
  const int layers = s.model.layers;
  if (!p.uneven_stages()) return layers / p.pp;
  if (p.embedding_as_layer || p.loss_as_layer || !p.layout_layers.empty()) {
    int n = 0;
    for (int chunk = 0; chunk < p.virtual_stages; ++chunk) n += chunk_layers(s, stage, chunk);
    return n;
  }
  if (!p.stage_layers.empty()) return p.stage_layers[static_cast<std::size_t>(stage)];
  if (stage == 0 && p.first_stage_layers > 0) return p.first_stage_layers;
  if (stage == p.pp - 1 && p.last_stage_layers > 0) return p.last_stage_layers;
  const int fixed = (p.first_stage_layers > 0) + (p.last_stage_layers > 0);
  return (layers - p.first_stage_layers - p.last_stage_layers) / (p.pp - fixed);
}

namespace {

// Every stage's and chunk's layers, the MTP modules' blocks in the last chunk,
// and how many of them are dense.
void count_layers(const scenario::Scenario& s, StepPlan& plan) {
  const auto& p = s.parallelism;
  const auto& m = s.model;
  const auto stages = static_cast<std::size_t>(p.pp);
  const auto chunks = static_cast<std::size_t>(p.virtual_stages);
  plan.layers_by_stage.reserve(stages);
  plan.layers_by_chunk = ChunkGrid(stages, chunks);
  for (int stage = 0; stage < p.pp; ++stage) {
    plan.layers_by_stage.push_back(stage_layers(s, stage));
    for (int chunk = 0; chunk < p.virtual_stages; ++chunk) {
      plan.layers_by_chunk[static_cast<std::size_t>(stage)][static_cast<std::size_t>(chunk)] =
          chunk_layers(s, stage, chunk);
    }
  }
  // The MTP modules' blocks follow the model's last layer, in its last chunk.
  plan.layers_by_chunk[stages - 1][chunks - 1] += m.mtp_depth;
  plan.layers_by_stage.back() += m.mtp_depth;
  // Which of them are dense, chunk by chunk in the model's order.
  plan.dense_by_stage.assign(stages, 0);
  const auto grid = [&] { return ChunkGrid(stages, chunks); };
  plan.dense_by_chunk = grid();
  plan.recomputed_by_stage.assign(static_cast<std::size_t>(p.pp), 0);
  plan.recomputed_dense_by_stage.assign(static_cast<std::size_t>(p.pp), 0);
  plan.recomputed_by_chunk = grid();
  plan.recomputed_dense_by_chunk = grid();
  const bool partial = p.recompute == scenario::Recompute::full && p.recompute_layers > 0;
  const auto dense_in = [&](int from, int to) {
    return m.mixed() ? (to - from) - m.moe_layers_in(from, to) : 0;
  };
  int first = 0;
  for (int chunk = 0; chunk < p.virtual_stages; ++chunk) {
    for (int stage = 0; stage < p.pp; ++stage) {
      const auto k = static_cast<std::size_t>(stage);
      const auto c = static_cast<std::size_t>(chunk);
      const int n = plan.layers_by_chunk[k][c];
      plan.dense_by_chunk[k][c] = dense_in(first, first + n);
      plan.dense_by_stage[k] += plan.dense_by_chunk[k][c];
      if (partial) {  // the chunk's first layers
        const int r = std::min(n, p.recompute_layers);
        plan.recomputed_by_chunk[k][c] = r;
        plan.recomputed_dense_by_chunk[k][c] = dense_in(first, first + r);
        plan.recomputed_by_stage[k] += r;
        plan.recomputed_dense_by_stage[k] += plan.recomputed_dense_by_chunk[k][c];
      }
      first += n;
    }
  }
}

// DualPipe: rank r holds stage r of one direction's pipeline and stage
// pp - 1 - r of the other's (the v = 1 split of the layers), two chunks.
void fold_dualpipe(StepPlan& plan) {
  const auto pp = plan.layers_by_chunk.size();
  const auto fold = [pp](ChunkGrid& by_chunk, std::vector<int>& by_stage) {
    ChunkGrid folded(pp, 2);
    for (std::size_t r = 0; r < pp; ++r) {
      folded[r][0] = by_chunk[r][0];
      folded[r][1] = by_chunk[pp - 1 - r][0];
      by_stage[r] = folded[r][0] + folded[r][1];
    }
    by_chunk = std::move(folded);
  };
  fold(plan.layers_by_chunk, plan.layers_by_stage);
  fold(plan.dense_by_chunk, plan.dense_by_stage);
  fold(plan.recomputed_by_chunk, plan.recomputed_by_stage);
  fold(plan.recomputed_dense_by_chunk, plan.recomputed_dense_by_stage);
  plan.virtual_stages = 2;
}

// Partial recomputation: the layers keep their activations, and what a
// recomputed one runs again becomes a program of its own.
void split_recomputed(const scenario::ModelSpec& m, StepPlan& plan) {
  ShardShape kept = plan.shard;
  kept.recompute = scenario::Recompute::none;
  plan.recompute_layer.recompute = std::move(plan.layer.recompute);
  plan.layer = transformer_layer(m, kept);
  if (m.mixed()) {
    plan.recompute_dense_layer.recompute = std::move(plan.dense_layer.recompute);
    plan.dense_layer = transformer_layer(m, kept, LayerKind::dense);
  }
}

}  // namespace

StepPlan plan_step(const scenario::Scenario& s) {
  const auto& p = s.parallelism;
  const auto& m = s.model;
  StepPlan plan;
  plan.shard = shard_shape(s);
  plan.pp = p.pp;
  plan.virtual_stages = p.virtual_stages;
  plan.schedule = p.schedule;
  plan.delay_wgrad = p.delay_wgrad_compute;
  plan.micro_batches = p.micro_batches();
  plan.dp = p.dp;
  count_layers(s, plan);
  if (p.schedule == scenario::Schedule::dualpipe) fold_dualpipe(plan);
  plan.first_stage_layers = plan.layers_by_stage.front();
  plan.last_stage_layers = plan.layers_by_stage.back();
  plan.layers_per_stage =
      p.pp > 2 ? *std::max_element(plan.layers_by_stage.begin() + 1, plan.layers_by_stage.end() - 1)
               : plan.first_stage_layers;
  plan.layer = transformer_layer(m, plan.shard);
  if (m.mixed()) plan.dense_layer = transformer_layer(m, plan.shard, LayerKind::dense);
  if (p.recompute == scenario::Recompute::full && p.recompute_layers > 0) split_recomputed(m, plan);
  plan.embedding = embedding(m, plan.shard);
  plan.head = lm_head_and_loss(m, plan.shard);
  // Megatron-LM sends activations scattered over TP ranks (gathered on arrival).
  const double activation = plan.shard.tokens() * m.hidden * 2 / p.tp;
  plan.pp_transfer = {"pp.activations", CollectiveKind::send_recv, GroupKind::pp, activation};

  const int etp = p.etp > 0 ? p.etp : p.tp;
  const double per_layer = layer_params_per_rank(m, p.tp, p.ep, etp);
  plan.params_per_layer = per_layer;
  if (m.mixed()) {
    const ParamCounts counts = param_counts(m);
    plan.params_per_dense_layer =
        (counts.attention - counts.attention_unsplit + counts.dense_mlp) / p.tp +
        counts.attention_unsplit + counts.norms;
  }
  plan.expert_params_per_layer = expert_params_per_rank(m, p.ep, etp);
  plan.dense_dp = p.dp * p.cp;
  plan.expert_dp = std::max(1, p.tp * p.cp * p.dp / (p.ep * etp));
  const auto& prune = m.moe.prune;
  const bool stored_sparse =
      prune.pattern == scenario::Sparsity::two_four ||
      (prune.pattern == scenario::Sparsity::unstructured && prune.sparse_kernel);
  if (stored_sparse) {
    // 2:4: two bf16 values and two 2-bit indices per four weights; unstructured:
    // a bf16 value and a 16-bit index per weight kept. Zeroed weights are frozen:
    // no gradients or optimizer states.
    plan.expert_weight_bytes = prune.pattern == scenario::Sparsity::two_four
                                   ? 2 * 0.5 + 0.125
                                   : std::min(2.0, 4 * (1 - prune.sparsity));
    plan.expert_trained = 1 - prune.sparsity;
  }
  const double vocab_rows = static_cast<double>(m.vocab) * m.hidden / p.tp;
  plan.params_first_stage = plan.stage_layer_params(0) + vocab_rows;
  const bool own_head = !m.tied_embeddings || p.pp > 1;
  // Each MTP module's projection (split like a column-parallel linear layer) and
  // its three norms (the embedding's, the hidden state's and its head's), and,
  // with pipelining, a copy of an untied embedding on the last stage for the
  // shifted tokens (Megatron-Core builds it where MTP runs).
  const double mtp = m.mtp_depth * (2.0 * m.hidden * m.hidden / p.tp + 3.0 * m.hidden) +
                     (m.mtp_depth > 0 && p.pp > 1 && !m.tied_embeddings ? vocab_rows : 0);
  plan.params_last_stage =
      plan.stage_layer_params(p.pp - 1) + m.hidden + (own_head ? vocab_rows : 0) + mtp;
  if (p.pp == 1)  // the final norm too, as the last stage holds it with pipelining
    plan.params_first_stage = plan.params_last_stage =
        plan.stage_layer_params(0) + vocab_rows * (m.tied_embeddings ? 1 : 2) + m.hidden + mtp;
  if (p.schedule == scenario::Schedule::dualpipe) {
    // Both end ranks hold an embedding (one direction's first stage) and a head
    // (the other's last): DualPipe's two copies of the parameters.
    const double ends = vocab_rows + m.hidden + vocab_rows + mtp;
    plan.params_first_stage = plan.stage_layer_params(0) + ends;
    plan.params_last_stage = plan.stage_layer_params(p.pp - 1) + ends;
  }
  int middle = 0;  // the stage between the first and the last with the most parameters
  for (int k = 1; k + 1 < p.pp; ++k) {
    const double params = plan.stage_layer_params(k);
    if (params > plan.params_middle_stage) {
      plan.params_middle_stage = params;
      middle = k;
    }
  }
  plan.params_max =
      std::max({plan.params_first_stage, plan.params_last_stage, plan.params_middle_stage});
  const int max_stage = plan.params_max == plan.params_first_stage  ? 0
                        : plan.params_max == plan.params_last_stage ? p.pp - 1
                                                                    : middle;
  const auto at = static_cast<std::size_t>(max_stage);
  plan.expert_params_at_max =
      (plan.layers_by_stage[at] - plan.dense_by_stage[at]) * plan.expert_params_per_layer;
  plan.embedding_params = vocab_rows;
  plan.head_params = m.hidden + (own_head ? vocab_rows : 0) + mtp;
  plan_dp(s, plan);
  return plan;
}

}  // namespace myriad::models
