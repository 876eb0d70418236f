#include "models/plan/step_plan.hpp"

#include <algorithm>

#include "models/transformer/model_stats.hpp"

namespace myriad::models {

double optimizer_bytes_per_param(scenario::Optimizer o) {
  switch (o) {
    case scenario::Optimizer::adam:
    case scenario::Optimizer::adamw:
    case scenario::Optimizer::lamb:
      return 12;  // master weights, first and second moments
    case scenario::Optimizer::lion:
    case scenario::Optimizer::sgd:
      return 8;  // master weights, one moment
  }
  return 12;
}

namespace {

// Parameters of one layer held by one rank: attention and dense MLP split over
// TP; experts split over EP, and each over TP.
double layer_params_per_rank(const scenario::ModelSpec& m, int tp, int ep) {
  const ParamCounts p = param_counts(m);
  double mlp = p.mlp / tp;
  if (m.is_moe()) mlp = (p.mlp - m.hidden * m.moe.experts) / (ep * tp) + m.hidden * m.moe.experts;
  return p.attention / tp + mlp + p.norms;
}

void plan_dp(const scenario::Scenario& s, StepPlan& plan) {
  if (plan.dp == 1) return;
  // Megatron-LM accumulates and reduces the gradients of bf16 models in fp32, those
  // of fp16 and fp8 models in 16 bits; parameters are gathered in 16 bits.
  const double grad_bytes = s.training.precision == scenario::Precision::bf16 ? 4 : 2;
  const double grads = plan.params_max * grad_bytes;
  const double params = plan.params_max * 2;
  if (s.parallelism.zero == 0) {
    plan.dp_comms.push_back({"dp.grads", CollectiveKind::all_reduce, GroupKind::dp, grads});
    return;
  }
  plan.dp_comms.push_back({"dp.grads", CollectiveKind::reduce_scatter, GroupKind::dp, grads});
  plan.dp_comms.push_back({"dp.params", CollectiveKind::all_gather, GroupKind::dp, params});
  if (s.parallelism.zero == 3) {
    // Parameters gathered again for the backward pass.
    plan.dp_comms.push_back({"dp.params.bwd", CollectiveKind::all_gather, GroupKind::dp, params});
  }
}

}  // namespace

int stage_layers(const scenario::Scenario& s, int stage) {
  const auto& p = s.parallelism;
  const int layers = s.model.layers;
  if (!p.uneven_stages()) return layers / p.pp;
  if (stage == 0 && p.first_stage_layers > 0) return p.first_stage_layers;
  if (stage == p.pp - 1 && p.last_stage_layers > 0) return p.last_stage_layers;
  const int fixed = (p.first_stage_layers > 0) + (p.last_stage_layers > 0);
  return (layers - p.first_stage_layers - p.last_stage_layers) / (p.pp - fixed);
}

StepPlan plan_step(const scenario::Scenario& s) {
  const auto& p = s.parallelism;
  const auto& m = s.model;
  StepPlan plan;
  plan.shard = shard_shape(s);
  plan.pp = p.pp;
  plan.virtual_stages = p.virtual_stages;
  plan.micro_batches = p.micro_batches();
  plan.dp = p.dp;
  plan.first_stage_layers = stage_layers(s, 0);
  plan.last_stage_layers = stage_layers(s, p.pp - 1);
  plan.layers_per_stage = p.pp > 2 ? stage_layers(s, 1) : plan.first_stage_layers;
  plan.layer = transformer_layer(m, plan.shard);
  plan.embedding = embedding(m, plan.shard);
  plan.head = lm_head_and_loss(m, plan.shard);
  // Megatron-LM sends activations scattered over TP ranks (gathered on arrival).
  const double activation = plan.shard.tokens() * m.hidden * 2 / p.tp;
  plan.pp_transfer = {"pp.activations", CollectiveKind::send_recv, GroupKind::pp, activation};

  const double per_layer = layer_params_per_rank(m, p.tp, p.ep);
  const double vocab_rows = static_cast<double>(m.vocab) * m.hidden / p.tp;
  plan.params_first_stage = plan.first_stage_layers * per_layer + vocab_rows;
  const bool own_head = !m.tied_embeddings || p.pp > 1;
  plan.params_last_stage =
      plan.last_stage_layers * per_layer + m.hidden + (own_head ? vocab_rows : 0);
  if (p.pp == 1)
    plan.params_first_stage = plan.params_last_stage =
        m.layers * per_layer + vocab_rows * (m.tied_embeddings ? 1 : 2);
  if (p.pp > 2) plan.params_middle_stage = plan.layers_per_stage * per_layer;
  plan.params_max =
      std::max({plan.params_first_stage, plan.params_last_stage, plan.params_middle_stage});
  plan_dp(s, plan);
  return plan;
}

}  // namespace myriad::models
