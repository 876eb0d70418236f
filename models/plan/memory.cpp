#include "models/plan/memory.hpp"

#include <algorithm>

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
  const auto& m = s.model;
  const auto& p = s.parallelism;
  const double t = p.tp;
  const bool sp = p.sp && p.tp > 1;
  const double tokens = static_cast<double>(p.micro_batch) * m.seq_length / p.cp;
  const double h = m.hidden;
  if (p.recompute == scenario::Recompute::full) return tokens * 2 * h / (sp ? t : 1);
  const double kv = static_cast<double>(m.kv_heads) * h / m.heads;
  const bool swiglu = m.activation == scenario::Activation::swiglu;
  double f = m.ffn_hidden;
  double routed = 1;
  double shared = 0;  // shared experts' activations per token
  if (m.is_moe()) {
    f = m.moe.expert_ffn_hidden;
    // Token copies the busiest expert-parallel rank holds per token routed: top_k
    // evenly, more under skew, capacity_factor * top_k padded.
    routed = moe_load(m.moe, p.ep).busiest_slots;
    const double fs = static_cast<double>(m.moe.shared_experts) * m.moe.shared_expert_ffn_hidden;
    shared = 2 * (swiglu ? 2 * fs : fs) + 2 * fs;
  }
  const double f_in = swiglu ? 2 * f : f;
  const double replicated = 10 * h;
  const double split =
      4 * h + 4 * kv + shared + routed * (2 * f_in + 2 * f + (m.is_moe() ? 2 * h : 0));
  double per_token = (sp ? replicated / t : replicated) + split / t;
  if (!s.training.fused_kernels && p.recompute == scenario::Recompute::none) {
    per_token += 5.0 * m.heads * m.seq_length / t;
  }
  return tokens * per_token;
}

MemoryBreakdown memory_per_gpu(const scenario::Scenario& s, const StepPlan& plan) {
  const auto& p = s.parallelism;
  // ZeRO shards dense parameters over the dp * cp ranks holding copies of them and
  // experts over the expert data-parallel ranks (Megatron-LM's distributed optimizer).
  const auto states = [&](double params, double layers) {
    const double expert = layers * plan.expert_params_per_layer;
    const double dense = params - expert;
    const double trained = expert * plan.expert_trained;
    const auto shard = [&](int stage, double group) { return p.zero >= stage ? group : 1.0; };
    const double ddp = plan.dense_dp;
    const double edp = plan.expert_dp;
    MemoryBreakdown b;
    b.weights = dense * 2 / shard(3, ddp) + expert * plan.expert_weight_bytes / shard(3, edp);
    b.gradients = dense * 4 / shard(2, ddp) + trained * 4 / shard(2, edp);
    const double opt = optimizer_bytes_per_param(s.training.optimizer);
    b.optimizer = dense * opt / shard(1, ddp) + trained * opt / shard(1, edp);
    return b;
  };
  MemoryBreakdown first = states(plan.params_first_stage, plan.first_stage_layers);
  MemoryBreakdown last = states(plan.params_last_stage, plan.last_stage_layers);
  const double per_layer = layer_activation_bytes(s);
  const double m = plan.micro_batches;
  const double pp = p.pp;
  const double v = p.virtual_stages;
  // Stage k holds min(m, p - k) micro-batches in flight (1F1B's warm-up).
  const auto in_flight = [&](double stage) {
    double n = std::min(m, pp - stage);
    if (v > 1) n *= 1 + (pp - 1) / (pp * v);
    return n;
  };
  first.activations = plan.first_stage_layers * per_layer * in_flight(0);
  // Embedding output and its dropout mask, for each micro-batch in flight.
  const double tokens = plan.shard.tokens();
  first.activations += in_flight(0) * tokens * s.model.hidden * 3 / (plan.shard.sp ? p.tp : 1);
  // The last stage holds one micro-batch in flight, and its fp32 logits.
  last.activations =
      plan.last_stage_layers * per_layer + tokens * static_cast<double>(s.model.vocab) / p.tp * 4;
  if (p.pp == 1) {
    first.activations += tokens * static_cast<double>(s.model.vocab) / p.tp * 4;
    return first;
  }
  MemoryBreakdown most = first.total() >= last.total() ? first : last;
  // The stages between: with even stages the second holds the most (the most
  // in flight); with uneven ones a later, larger stage may.
  const double per_layer_params =
      plan.layers_per_stage > 0 ? plan.params_middle_stage / plan.layers_per_stage : 0;
  for (int stage = 1; stage + 1 < p.pp; ++stage) {
    const int layers = plan.layers_by_stage[static_cast<std::size_t>(stage)];
    MemoryBreakdown b = states(layers * per_layer_params, layers);
    b.activations = layers * per_layer * in_flight(stage);
    if (b.total() > most.total()) most = b;
  }
  return most;
}

}  // namespace myriad::models
