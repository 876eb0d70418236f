#include "models/plan/memory.hpp"

#include <algorithm>

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
  if (m.is_moe()) {
    f = m.moe.expert_ffn_hidden;
    routed = m.moe.top_k * std::max(1.0, m.moe.capacity_factor);
  }
  const double f_in = swiglu ? 2 * f : f;
  const double replicated = 10 * h;
  const double split = 4 * h + 4 * kv + routed * (2 * f_in + 2 * f + (m.is_moe() ? 2 * h : 0));
  double per_token = (sp ? replicated / t : replicated) + split / t;
  if (!s.training.fused_kernels && p.recompute == scenario::Recompute::none) {
    per_token += 5.0 * m.heads * m.seq_length / t;
  }
  return tokens * per_token;
}

MemoryBreakdown memory_per_gpu(const scenario::Scenario& s, const StepPlan& plan) {
  const auto& p = s.parallelism;
  const double dp = p.dp;
  MemoryBreakdown first;
  MemoryBreakdown last;
  for (auto* part : {&first, &last}) {
    const double params = part == &first ? plan.params_first_stage : plan.params_last_stage;
    part->weights = params * 2 / (p.zero >= 3 ? dp : 1);
    part->gradients = params * 4 / (p.zero >= 2 ? dp : 1);
    part->optimizer =
        params * optimizer_bytes_per_param(s.training.optimizer) / (p.zero >= 1 ? dp : 1);
  }
  const double per_layer = layer_activation_bytes(s);
  const double m = plan.micro_batches;
  const double pp = p.pp;
  const double v = p.virtual_stages;
  double in_flight = std::min(m, pp);
  if (v > 1) in_flight *= 1 + (pp - 1) / (pp * v);
  first.activations = plan.layers_per_stage * per_layer * in_flight;
  // Embedding output and its dropout mask, for each micro-batch in flight.
  const double tokens = plan.shard.tokens();
  first.activations += in_flight * tokens * s.model.hidden * 3 / (plan.shard.sp ? p.tp : 1);
  // The last stage holds one micro-batch in flight, and its fp32 logits.
  last.activations =
      plan.layers_per_stage * per_layer + tokens * static_cast<double>(s.model.vocab) / p.tp * 4;
  if (p.pp == 1) {
    first.activations += tokens * static_cast<double>(s.model.vocab) / p.tp * 4;
    return first;
  }
  return first.total() >= last.total() ? first : last;
}

}  // namespace myriad::models
