// What one training step asks of each rank, derived from the scenario: the
// programs of a layer, the embedding and the LM head for one micro-batch, how
// many of each a pipeline stage runs, the pipeline and data-parallel traffic,
// and the parameters a rank holds.
#pragma once

#include <vector>

#include "models/plan/chunk_grid.hpp"
#include "models/plan/collective.hpp"
#include "models/scenario/scenario.hpp"
#include "models/transformer/layer_program.hpp"

namespace myriad::models {

struct StepPlan {
  ShardShape shard;
  int pp = 1;
  int virtual_stages = 1;
  scenario::Schedule schedule = scenario::Schedule::one_f_one_b;  // the pipeline's
  // Combined 1F1B's weight gradients delayed (parallelism.delay_wgrad_compute):
  // its F&B passes split the experts' and the attention's (sim::pair_phases).
  bool delay_wgrad = false;
  int micro_batches = 1;  // per pipeline replica and step
  int dp = 1;
  int layers_per_stage = 1;  // of the largest stage between the first and the last
  // Every stage's, first to last, over its chunks; the last stage's last chunk
  // also holds the MTP modules' blocks (model.mtp_depth).
  std::vector<int> layers_by_stage;
  ChunkGrid layers_by_chunk;   // [stage][chunk]
  int first_stage_layers = 1;  // the first stage's (with the embedding)
  int last_stage_layers = 1;   // the last stage's (with the LM head and loss)
  LayerProgram layer;          // one transformer layer, one micro-batch
  LayerProgram embedding;      // first stage
  LayerProgram head;           // last stage: final norm, LM head, loss
  // An MoE model's dense layers (model.moe.first_dense_layers, model.moe.every):
  // their program, and how many of each stage's and chunk's layers they are; the
  // rest are `layer`. All 0, and dense_layer empty, where every layer is `layer`.
  LayerProgram dense_layer;
  std::vector<int> dense_by_stage;
  ChunkGrid dense_by_chunk;  // [stage][chunk]
  // Partial recomputation (parallelism.recompute_layers): `layer` and
  // `dense_layer` then keep their activations, and each recomputed layer adds
  // the forward it runs again in backward, `recompute_layer` (an MoE model's
  // dense layers `recompute_dense_layer`), whose only phase is `recompute`. How
  // many of each stage's and chunk's layers are recomputed (the first ones of
  // each chunk), and how many of those are dense layers. All 0, and the programs
  // empty, without parallelism.recompute_layers.
  LayerProgram recompute_layer;
  LayerProgram recompute_dense_layer;
  std::vector<int> recomputed_by_stage;
  std::vector<int> recomputed_dense_by_stage;
  ChunkGrid recomputed_by_chunk;        // [stage][chunk]
  ChunkGrid recomputed_dense_by_chunk;  // [stage][chunk]
  Collective pp_transfer;               // activations (or their gradients) across a stage boundary
  // Gradient reduction and parameter gathering, per step. ZeRO-3's are per layer
  // and micro-batch instead: in the layer, embedding and head programs.
  std::vector<Collective> dp_comms;

  double params_first_stage = 0;  // parameters a rank of the first stage holds
  double params_last_stage = 0;
  double params_middle_stage = 0;     // of a stage between them (0 with fewer than 3 stages)
  double params_per_layer = 0;        // of one transformer layer on one rank
  double params_per_dense_layer = 0;  // of one of an MoE model's dense layers (0 without)
  double params_max = 0;
  // Of those, the experts' (per layer, on one rank) and how the two kinds reduce
  // their gradients: dense parameters over the dp * cp ranks holding copies of
  // them, experts over the expert data-parallel ranks, tp * cp * dp / (etp * ep).
  double expert_params_per_layer = 0;
  double expert_weight_bytes = 2;  // per parameter: 2 dense, less stored 2:4 or sparse
  double expert_trained = 1;       // share of expert parameters with gradients and states
  int dense_dp = 1;                // dp * cp
  int expert_dp = 1;               // tp * cp * dp / (etp * ep)
  // Expert parameters on the stage holding params_max.
  double expert_params_at_max = 0;
  // Parameters of the embedding (first stage) and of the final norm and LM head
  // (last stage; tied to the embedding without pipelining) on one rank; the
  // head's include the MTP modules' projections, norms and embedding copy.
  double embedding_params = 0;
  double head_params = 0;

  [[nodiscard]] bool partial_recompute() const { return !recompute_layer.recompute.ops.empty(); }
  // Whether some layers are dense_layer.
  [[nodiscard]] bool mixed() const {
    for (const int d : dense_by_stage) {
      if (d > 0) return true;
    }
    return false;
  }
  // The parameters of stage `stage`'s layers on one rank.
  [[nodiscard]] double stage_layer_params(int stage) const {
    const auto k = static_cast<std::size_t>(stage);
    return (layers_by_stage[k] - dense_by_stage[k]) * params_per_layer +
           dense_by_stage[k] * params_per_dense_layer;
  }
};

StepPlan plan_step(const scenario::Scenario& s);

// Layers of pipeline stage `stage` (over all its virtual chunks): an even share,
// parallelism.stage_layers, or parallelism.first_stage_layers / last_stage_layers
// and the rest shared evenly.
int stage_layers(const scenario::Scenario& s, int stage);
// Layers of model chunk `chunk` of stage `stage` (its virtual stage): the stage's
// share over its chunks, or with parallelism.embedding_as_layer / loss_as_layer
// an even share of the layers with the embedding and the loss counted, the first
// chunk (the last) one layer short; or as parallelism.pipeline_layout places them.
int chunk_layers(const scenario::Scenario& s, int stage, int chunk);
// The first of the model's layers that chunk `chunk` of stage `stage` holds:
// model chunk chunk x pp + stage, in order (Megatron-LM's interleaving).
int chunk_first_layer(const scenario::Scenario& s, int stage, int chunk);

// The layers of the stack (the model's and the MTP modules') that full
// recomputation runs again, and how many of them are MoE layers: every one, or
// with parallelism.recompute_layers the first that many of each model chunk's;
// none without full recomputation.
struct RecomputedLayers {
  int layers = 0;
  int moe = 0;
};
RecomputedLayers recomputed_layers(const scenario::Scenario& s);

// Bytes per parameter the optimizer keeps (fp32 master weights and moments).
double optimizer_bytes_per_param(const scenario::TrainingSpec& t);

// Bytes per gradient, in the data-parallel reductions and in the buffer they
// reduce (training.gradient_precision): Megatron-LM's DDP keeps one gradient
// buffer per bucket in the dtype it reduces in (fp32 with grad_reduce_in_fp32,
// the parameters' 16 bits without).
double gradient_bytes(const scenario::Scenario& s);

}  // namespace myriad::models
