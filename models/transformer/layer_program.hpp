// The work of one transformer layer (or the embedding, or the LM head and
// loss) for one micro-batch on one rank: its compute ops and collectives, for
// the forward pass, the backward pass and the recomputation before it.
#pragma once

#include <algorithm>
#include <vector>

#include "models/ops/op.hpp"
#include "models/plan/collective.hpp"
#include "models/scenario/scenario.hpp"

namespace myriad::models {

struct Phase {
  std::vector<Op> ops;
  std::vector<Collective> comms;  // on the critical path unless overlapped
  // Where the host waits for the GPU before issuing more (a blocking copy to the
  // host): before op `host_sync`, -1 for none. Megatron-Core's dropless
  // all-to-all dispatcher copies the tokens per expert to the host and waits for
  // them before the dispatch (token_dispatcher.py, cuda_sync_point
  // "before_ep_alltoall"; docs/notes/moe-host-overhead.md).
  int host_sync = -1;
  // Adds a collective issued after the ops so far.
  void issue(Collective c) {
    c.after_ops = static_cast<int>(ops.size());
    comms.push_back(c);
  }
  // Where its expert collectives split it: before op `first` the first ones are
  // issued (the forward's dispatch, the backward's mirror of the combine), before
  // op `last` the last ones, with compute between them; first is -1 when they do
  // not split it.
  struct ExpertSplit {
    int first = -1;
    int last = -1;
  };
  [[nodiscard]] ExpertSplit expert_split() const {
    ExpertSplit x;
    for (const auto& c : comms) {
      if (c.group != GroupKind::ep || c.after_ops < 0) continue;
      x.first = x.first < 0 ? c.after_ops : std::min(x.first, c.after_ops);
      x.last = std::max(x.last, c.after_ops);
    }
    if (x.last <= x.first) x = {};
    return x;
  }
};

struct LayerProgram {
  Phase forward;
  Phase backward;
  Phase recompute;  // re-run in backward (selective or full recomputation)
};

// What a rank holds of a micro-batch.
struct ShardShape {
  double micro_batch = 1;  // sequences
  double seq = 0;          // full sequence length
  int tp = 1;
  bool sp = false;
  int cp = 1;
  int ep = 1;
  int etp = 0;           // tensor parallel of the experts: 0 or tp (split like the dense MLP), or 1
  bool a2a_fp8 = false;  // expert dispatch carries fp8
  bool combine_fp8 = false;  // expert combine carries fp8
  bool fused = true;         // flash attention and fused norm/activation kernels
  bool fp8 = false;          // GEMMs on fp8 tensor cores
  scenario::Fp8Recipe fp8_recipe = scenario::Fp8Recipe::delayed;
  // Tensor-parallel collectives overlapped chunk by chunk (overlap.tp with sp, not
  // fused): the GEMMs beside them run in pieces (tp_pieces).
  bool tp_chunked = false;
  scenario::Recompute recompute = scenario::Recompute::none;
  bool recompute_norms_and_up = false;  // parallelism.recompute_norms_and_up
  bool recompute_moe_act = false;       // parallelism.recompute_moe_act

  [[nodiscard]] int expert_tp() const { return etp > 0 ? etp : tp; }
  [[nodiscard]] double tokens() const { return micro_batch * seq / cp; }  // per rank, before SP
};

ShardShape shard_shape(const scenario::Scenario& s);

// The model's layer: an MoE layer in an MoE model.
LayerProgram transformer_layer(const scenario::ModelSpec& m, const ShardShape& sh);
// A layer of the given kind: an MoE model's dense layers (model.moe.first_dense_layers,
// model.moe.every) run a dense MLP of model.ffn_hidden.
enum class LayerKind { dense, moe };
LayerProgram transformer_layer(const scenario::ModelSpec& m, const ShardShape& sh, LayerKind kind);
LayerProgram embedding(const scenario::ModelSpec& m, const ShardShape& sh);
LayerProgram lm_head_and_loss(const scenario::ModelSpec& m, const ShardShape& sh);

// Query-key pairs a sequence attends over: causal, with an optional window.
double attended_pairs(double seq, double window);

}  // namespace myriad::models
