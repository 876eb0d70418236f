// Memory per GPU: weights, gradients and optimizer states by ZeRO stage, and
// activations by recomputation mode and pipeline depth.
//
// Activations follow Korthikanti et al. 2022 (s4), generalized to GQA, SwiGLU
// and MoE: per token and layer, 10h bytes that tensor parallelism replicates
// unless sequence parallelism splits them (norm inputs, dropout masks, inputs
// of column-parallel GEMMs) plus (4h + 4 kv_heads d + 2 f_in + 2 f) / t split
// bytes, plus 5 a s / t for unfused attention's score matrices unless
// recomputed (FlashAttention keeps none). Full recomputation keeps each layer's
// 2h-byte input only. A pipeline stage holds its warm-up's forward passes in
// flight, as Megatron-LM's schedules run them (forwards_in_flight), each over the
// layers of the chunk it ran.
// Mixed precision as Megatron-LM: bf16 weights (2 B), fp32 gradients (4 B),
// fp32 master weights and moments (12 B for Adam/LAMB, 8 B for Lion/SGD);
// ZeRO 1 shards the optimizer states over dp, 2 also gradients, 3 also weights.
// Not counted: the CUDA context, allocator fragmentation, communication buffers.
#pragma once

#include <string>

#include "models/plan/step_plan.hpp"

namespace myriad::models {

struct MemoryBreakdown {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  // Activations offloaded to host memory (parallelism.offload_layers): not in total().
  double offloaded = 0;
  [[nodiscard]] double total() const { return weights + gradients + optimizer + activations; }
  // The largest part's name: "activations", "optimizer", ...
  [[nodiscard]] std::string dominant() const;
};

// Activation bytes of one layer for one micro-batch on one rank: the model's
// layer, or one of the given kind (an MoE model's dense layers). Under partial
// recomputation (parallelism.recompute_layers), a layer that is not recomputed.
double layer_activation_bytes(const scenario::Scenario& s);
double layer_activation_bytes(const scenario::Scenario& s, LayerKind kind);
// Of those, what fine-grained activation offload (parallelism.offload_modules)
// sends to host memory, which layer_activation_bytes leaves out: what the listed
// modules keep, each tensor once; 0 without it.
double layer_offloaded_bytes(const scenario::Scenario& s, LayerKind kind);
// A fully recomputed layer's: its input only.
double recomputed_layer_activation_bytes(const scenario::Scenario& s);

// Activation offload (parallelism.offload_layers, sim/analytic/activation_offload.hpp):
// the most bytes of the model's layers' activations on the GPU at once, the
// heaviest L - N consecutive layers (the GPU holds at most L - N layers', a run
// of them: the last ones at the end of a forward, the last not yet done with the
// first reloaded during backward), and what the host keeps, the first N layers'.
// Without offload: every layer's, and none. One micro-batch's (a pipeline of one stage).
struct OffloadedActivations {
  double all = 0;  // every layer's
  double on_gpu = 0;
  double on_host = 0;
};
OffloadedActivations offloaded_activations(const scenario::Scenario& s);

// The most loaded GPU: the fullest pipeline stage's (stage_memory).
MemoryBreakdown memory_per_gpu(const scenario::Scenario& s, const StepPlan& plan);

// A GPU of pipeline stage `stage` (0 <= stage < pp): its layers' parameter
// states, the embedding's on the first stage and the head's on the last, and the
// activations of the micro-batches it holds in flight.
MemoryBreakdown stage_memory(const scenario::Scenario& s, const StepPlan& plan, int stage);

// Forward passes (a micro-batch through one model chunk) stage `stage` has run
// and not yet run backward, at their most: its warm-up (warmup_forwards in
// pipeline_schedule.hpp, as Megatron-LM schedules it) and the first steady pass,
// at most m v; the k-th of them runs forward_chunk(k).
int forwards_in_flight(const scenario::Scenario& s, int stage);
// The layers those passes ran on the stage: each chunk's layers once a pass.
double layers_in_flight(const scenario::Scenario& s, const StepPlan& plan, int stage);
// What those passes keep, in bytes: each chunk's layers of either kind.
double activations_in_flight(const scenario::Scenario& s, const StepPlan& plan, int stage);
// The same in micro-batches through the whole stage: min(m, p - stage) for 1F1B;
// (p v + p - 1) / v on the first stage of an interleaved pipeline of even chunks.
double micro_batches_in_flight(const scenario::Scenario& s, const StepPlan& plan, int stage);

// A pipeline's pieces, per GPU of the stage holding them, as stage_memory adds
// them up: parameter states (weights, gradients, optimizer) and the activations
// one micro-batch leaves. A placer (sim/stage_split) charges each piece to the
// stage it goes on. The head's activations are its fp32 logits, which the last
// stage holds for one micro-batch only.
struct PieceMemory {
  double states = 0;
  double activations = 0;  // per micro-batch in flight
};
struct PipelinePieces {
  PieceMemory layer;        // one transformer layer (an MoE layer in an MoE model)
  PieceMemory dense_layer;  // one of an MoE model's dense layers (= layer in a dense model)
  PieceMemory embedding;    // token embedding (first stage)
  // Final norm, LM head and loss (last stage), and the MTP modules' work besides
  // their blocks (whose memory is a layer's).
  PieceMemory head;
};
PipelinePieces pipeline_pieces(const scenario::Scenario& s, const StepPlan& plan);

}  // namespace myriad::models
