// Parameter counts and the FLOP accounting behind MFU.
//
// Model FLOPs per step follow Korthikanti et al. 2022, Appendix A: forward plus
// backward (3x forward) of every matrix multiply, attention counted over all s
// keys of each query (no causal savings) and the LM head included; embedding
// lookups, norms and biases left out. For GPT (4h MLP, multi-head attention):
//   72 * B * L * s * h^2 * (1 + s/(6h) + V/(12hL)).
// Generalized here to grouped-query attention, SwiGLU, MoE (the top-k experts'
// MLPs count, plus the router, less the token-expert pairs a capacity factor
// drops; dense layers among MoE ones count their own MLP) and sliding windows
// (w keys per query, not s). Multi-token prediction modules (model.mtp_depth)
// count their blocks as layers, their projection from 2 hidden to hidden and
// their pass through the LM head: training computes them for every token.
// Hardware FLOPs add what recomputation runs again, as the papers count it:
// selective recomputation replaces s/(6h) by s/(3h); full recomputation runs
// the layers' forward pass again (96 in place of 72, the LM head excepted);
// experts padded to a capacity compute capacity_factor * top_k slots a token.
#pragma once

#include "models/scenario/scenario.hpp"

namespace myriad::models {

struct ParamCounts {
  double attention = 0;  // per layer: QKV and projection (MLA: its projections and latent norms)
  // Of those, what every tensor-parallel rank holds whole: MLA's down-projections
  // and latent norms (0 otherwise).
  double attention_unsplit = 0;
  double mlp = 0;         // per layer: the dense MLP, or an MoE layer's experts and router
  double mlp_active = 0;  // per layer and token: the MLP weights a token goes through
  double dense_mlp = 0;   // an MoE model's dense layers' MLP (model.ffn_hidden); mlp otherwise
  double norms = 0;       // per layer
  double embedding = 0;   // vocabulary x hidden (once more for an untied LM head)
  double total = 0;       // the model's, its MTP modules aside (as DeepSeek-V3 counts its 671B)
  double active = 0;      // per token, likewise
  // The MTP modules': their blocks, projections and norms (the embedding and the
  // LM head are the model's, shared).
  double mtp = 0;
};

ParamCounts param_counts(const scenario::ModelSpec& m);

// FLOPs of one optimizer step over the global batch.
double model_flops_per_step(const scenario::Scenario& s);
double hardware_flops_per_step(const scenario::Scenario& s);

}  // namespace myriad::models
