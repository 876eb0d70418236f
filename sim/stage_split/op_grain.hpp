// Placing a pipeline's ops rather than its layers: the same question as
// pipeline_split.hpp at a finer grain, for small models, where a stage
// boundary inside a layer (after the attention block, say) may balance the
// stages better than whole layers can.
//
// Pieces. Every op of a unit's forward program (models/transformer/layer_program:
// the embedding lookup; a layer's norms, qkv, attention, proj, residual adds, MLP
// GEMMs and activation; the final norm, LM head and loss) is a piece. Its backward
// ops (a GEMM's input and weight gradients, attention's backward, a memory-bound
// op's backward, the fp8 casts before a backward GEMM) and its recomputation join
// it, so that a piece is one forward node and one backward node per micro-batch,
// one colocation group over the micro-batches: a weight and its gradient stay on
// one device, as Baechi colocates an op with its gradient ops.
//
// Times. A piece's share of its unit is its ops' share of the unit's compute as
// the cost model prices them (sim/cost/compute_cost), forward and backward apart;
// the unit's time is the analytic engine's (pipeline_units), collectives
// included. So the pieces of a unit add up to it, and a split at layer
// boundaries has the same times at either grain; what the op grain adds is the
// freedom to cut inside a layer.
//
// Memory. A unit's parameter states are shared among its GEMMs by weight size
// (the embedding's sit on its lookup), its activations by the tensor each piece
// hands on; the micro-batches in flight are the layer grain's.
//
// Edges. Inside a unit a piece hands the next its output: a GEMM's m x n (x batch)
// at its element size, fused attention's output as a quarter of its traffic (Q,
// K, V in, O out), a memory-bound op's half of its traffic (one tensor in, one
// out); the backward hands back as many bytes. Between units the edge is the
// pipeline's transfer, as at layer grain.
//
// The graph is only priced as a graph: the engines run whole layers per stage
// (parallelism.stage_layers), so a split inside a layer has no scenario keys.
#pragma once

#include <string>
#include <vector>

#include "models/place/op_graph.hpp"
#include "models/place/placer.hpp"
#include "sim/stage_split/pipeline_split.hpp"

namespace myriad::sim {

struct OpGrainGraph {
  models::place::OpGraph graph;
  models::place::Devices devices;        // the pipeline's stages, as at layer grain
  std::vector<std::string> piece_names;  // "layer 3 fc1"
  std::vector<int> piece_unit;           // 0 embedding, 1..layers the layers, layers + 1 head
  std::vector<double> forward_s;         // per piece, one micro-batch
  std::vector<double> backward_s;
  std::vector<double> piece_bytes;  // memory charged to the piece's group
  std::vector<double> out_bytes;    // what piece k hands piece k + 1
  int layers = 0;
  int micro_batches = 0;          // unrolled
  int micro_batches_in_step = 0;  // the step's, per pipeline replica
  [[nodiscard]] int pieces() const { return static_cast<int>(piece_unit.size()); }
  // Laid out as PipelineGraph::op, with pieces for units.
  [[nodiscard]] int op(int j, bool backward, int k) const {
    return j * 2 * pieces() + (backward ? 2 * pieces() - 1 - k : k);
  }
};

// The op-grain graph of the scenario's pipeline; `units` is pipeline_units (or
// pipeline_graph) of the same scenario and profile. Unrolls as many micro-batches
// as keep the graph within kPipelineGraphMaxOps (at least one).
OpGrainGraph op_grain_graph(const models::scenario::Scenario& s, const DeviceProfile& profile,
                            const PipelineGraph& units);

// The op-grain graph's least nodes (one micro-batch: a forward and a backward
// node per piece), from the units' programs alone, and the pieces of one layer.
struct OpGrainSize {
  std::size_t least_ops = 0;
  std::size_t pieces_a_layer = 0;
};
OpGrainSize op_grain_size(const models::scenario::Scenario& s);

struct OpGrainPlacement {
  StageSplit algorithm = StageSplit::uniform;
  models::place::Assignment graph;  // the op graph's schedule under this placement
  std::vector<int> piece_stage;     // per piece; stages numbered by their first piece
  int stages_used = 0;
  int layers_cut = 0;      // layers whose pieces sit on more than one stage
  bool contiguous = true;  // the pieces' stages never go back
  std::string note;
};

// Baechi's placer `a` (m-TOPO, m-ETF or m-SCT) on the op graph. Throws
// std::invalid_argument for uniform and balanced, which are layer splits.
OpGrainPlacement place_ops(const OpGrainGraph& g, StageSplit a);
// A layer split on the op graph: every piece on its unit's stage (embedding on the
// first, head on the last). `a` names where the split came from.
OpGrainPlacement split_on_ops(const OpGrainGraph& g, const std::vector<int>& stage_layers,
                              StageSplit a);

// Each stage's pieces as a range, "embedding .. layer 7 fc2", first stage first.
std::vector<std::string> stage_ranges(const OpGrainGraph& g, const OpGrainPlacement& p);

}  // namespace myriad::sim
