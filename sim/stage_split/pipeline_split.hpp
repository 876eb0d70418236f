// Placing a scenario's pipeline: which layers each pipeline stage holds, by
// Baechi's placers (models/place) or by a split that balances the stages' time.
//
// The graph Baechi places. A pipeline's pieces are units in order: the token
// embedding, the transformer layers, the head (final norm, LM head and loss).
// Baechi minimises one pass's makespan, and on one pass of a chain the earliest
// start keeps every unit on one device; a pipeline is about throughput, so the
// graph is the pass unrolled over micro-batches: for each micro-batch j, the
// forward of every unit in order, then their backward in reverse order. A
// forward hands the next unit its activations (an edge of the bytes one
// micro-batch sends across a stage boundary), a backward hands the previous unit
// their gradient (as many bytes). Every copy of a unit is in one colocation group,
// so a unit's weights sit on one stage. The devices are the pipeline stages:
// each op's time is the analytic engine's for the unit on a stage's GPUs
// (tensor-, context- and expert-parallel collectives included), a transfer costs
// the pipeline send's latency + bytes / bandwidth as the analytic engine prices
// it, and a stage's memory is a GPU's usable memory.
//
// Memory. A unit carries its parameter states and activations: the embedding
// those of the first stage's micro-batches in flight, the head one micro-batch's
// logits, a layer the mean over the stages of their micro-batches in flight (a
// layer may land anywhere), so that the graph holds the job's memory and m-TOPO's
// budget is a stage's share of it. Stages early in the pipeline hold more than
// that mean, so the placers' feasibility is approximate; the report checks each
// stage with the memory model proper (models::stage_memory), and the balanced
// split is held to it.
//
// From a placement to stages. Devices become stages in the order of the first
// unit each holds. A placement is contiguous when the units' stages never go
// back; one that is not keeps each stage's layer count, the layers are laid out
// in order, and the report counts the layers that moved. The embedding goes on
// the first stage and the head on the last, as the engines run them. A pipeline
// of p stages needs every stage to hold layers, and m-ETF and m-SCT, which keep
// an op beside its input whenever that stage is free, often use fewer stages
// when memory allows: the placement is then completed by splitting its slowest
// stage (the most time, ends included) in two until there are p, and the report
// says how many it added. With virtual stages, counts are rounded to multiples of
// them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "models/place/op_graph.hpp"
#include "models/place/placer.hpp"
#include "models/plan/memory.hpp"
#include "models/scenario/scenario.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

enum class StageSplit { uniform, m_topo, m_etf, m_sct, balanced };
// "uniform", "m-TOPO", "m-ETF", "m-SCT", "balanced"
const char* stage_split_name(StageSplit a);
// From a command line: uniform, m-topo, m-etf, m-sct, balanced (any case).
std::optional<StageSplit> parse_stage_algorithm(std::string_view text);
inline constexpr StageSplit kStageAlgorithms[] = {StageSplit::uniform, StageSplit::m_topo,
                                                  StageSplit::m_etf, StageSplit::m_sct,
                                                  StageSplit::balanced};

// Above this many ops the graph unrolls fewer micro-batches (at least one).
inline constexpr int kPipelineGraphMaxOps = 20000;
// The most ops a placement graph may have with one micro-batch unrolled, its
// least: `myriad place` refuses a scenario past it before building the graph.
// 400,000 ops took 3.8 s and 190 MB at layer grain (Llama 3 8B at 200,000
// layers) and 4.9 s and 240 MB at op grain (20,000 layers), 2-core development
// machine, 2026-12; a million layers took 17 s and 800 MB at layer grain.
inline constexpr std::size_t kPlaceMostOps = 400000;
// The layer grain's: a forward and a backward node for the embedding, each layer
// and the head.
std::size_t pipeline_graph_least_ops(const models::scenario::Scenario& s);

struct PipelineGraph {
  models::place::OpGraph graph;
  models::place::Devices devices;  // one per pipeline stage
  int layers = 0;                  // transformer layers; units are layers + 2
  int virtual_stages = 1;          // the scenario's chunks a stage
  int micro_batches = 0;           // unrolled in the graph
  int micro_batches_in_step = 0;   // the step's, per pipeline replica
  // Per unit (embedding, layers, head), one micro-batch on a stage's GPU.
  std::vector<double> forward_s;
  std::vector<double> backward_s;
  double transfer_bytes = 0;  // one activation (or gradient) across a stage boundary
  // Unit memory as the graph charges it (see above), and the GPU's usable bytes.
  std::vector<double> unit_bytes;
  // What the balanced split checks each stage against: the pieces' memory, each
  // stage's micro-batches in flight, the allocator's fragmentation (a share of
  // what is allocated) and a GPU's usable bytes (memory less the profile's reserve).
  models::PipelinePieces pieces;
  std::vector<double> in_flight;
  double fragmentation = 0;
  double usable_bytes = 0;
  // Sums over the layers in order (units 1..layers): [k] of the first k layers'
  // forward and backward, parameter states and activations per micro-batch
  // (they differ where an MoE model has dense layers).
  std::vector<double> pass_prefix;
  std::vector<double> states_prefix;
  std::vector<double> activations_prefix;
  bool uniform_layers = true;  // every layer alike (no dense layers among MoE ones)
  [[nodiscard]] int units() const { return layers + 2; }
  // One micro-batch's forward and backward on a stage of `stage_layers` layers
  // after the `before` layers of the stages before it, `v` chunks a stage
  // (Megatron-LM's interleaving: each chunk's share of every round of layers),
  // with the embedding on the first stage and the head on the last.
  [[nodiscard]] double stage_seconds(int before, int stage_layers, int v, bool first,
                                     bool last) const;
  // Such a stage's layers' sum of `prefix` (one of the above).
  [[nodiscard]] double over_layers(const std::vector<double>& prefix, int before, int stage_layers,
                                   int v) const;
  // The op index of unit k's forward (or backward) for micro-batch j: micro-batch
  // by micro-batch, each forward then backward, so that the list scheduler, which
  // breaks ties by index, takes a micro-batch through a stage before the next (as
  // a pipeline does). Numbered unit by unit instead, a stage runs every
  // micro-batch's first layer before any one's second, the next stage waits for
  // all of them, and the uniform split of the 8B test model takes 2.23 s where the
  // analytic engine's step is 0.77 s; numbered so, 0.74 s.
  [[nodiscard]] int op(int j, bool backward, int k) const {
    return j * 2 * units() + (backward ? 2 * units() - 1 - k : k);
  }
};

// Throws std::invalid_argument when the scenario has no pipeline (pp 1).
PipelineGraph pipeline_graph(const models::scenario::Scenario& s, const DeviceProfile& profile);
// The same without the op graph (`graph` empty): the units' times and memory,
// what the balanced split needs. As cheap as one estimate.
PipelineGraph pipeline_units(const models::scenario::Scenario& s, const DeviceProfile& profile);

struct StagePlacement {
  StageSplit algorithm = StageSplit::uniform;
  // Every stage's layers, first to last: what parallelism.stage_layers gets.
  // Empty when the placement cannot be a pipeline of the scenario's stages.
  std::vector<int> stage_layers;
  // The graph's schedule under this placement (Baechi's own, or the list
  // scheduler's for a given split): its makespan, memory and feasibility.
  models::place::Assignment graph;
  int stages_used = 0;     // devices holding at least one unit
  int stages_added = 0;    // empty stages filled by splitting the slowest (see above)
  bool contiguous = true;  // the units' stages never went back
  int layers_moved = 0;    // to lay a non-contiguous placement out in order
  bool rounded = false;    // counts rounded to multiples of virtual_stages
  std::string note;        // how it was made, in words
};

// Places the scenario's pipeline by `a`. uniform: the scenario's own split (even,
// or its uneven-stage keys); balanced: the split of contiguous layers that
// minimises the slowest stage's time (the analytic engine's critical stage),
// among those whose every stage fits the memory model (each its own
// micro-batches in flight), by dynamic programming.
StagePlacement place_stages(const models::scenario::Scenario& s, const PipelineGraph& g,
                            StageSplit a);

// The balanced split of place_stages, with every stage within `memory_fraction`
// of a GPU's usable memory (a plan's headroom); empty without a pipeline or when
// no split fits. For `plan --stages balanced`.
std::vector<int> balanced_stage_layers(const models::scenario::Scenario& s,
                                       const DeviceProfile& profile, double memory_fraction = 1);

// Each unit's stage (embedding, layers, head) under a split of `layers` layers:
// the embedding on the first stage, the layers in order, the head on the last.
std::vector<int> units_on_stages(int layers, const std::vector<int>& stage_layers);

// Each stage's layers as the scenario splits them.
std::vector<int> own_stage_layers(const models::scenario::Scenario& s);

// The scenario with its stages split as `stage_layers`: as it is where that is its
// own split, else with parallelism.stage_layers set and the other ways of giving
// uneven stages (first_stage_layers, last_stage_layers, embedding_as_layer,
// loss_as_layer, pipeline_layout) cleared, which would otherwise override it.
models::scenario::Scenario with_stage_layers(models::scenario::Scenario s,
                                             const std::vector<int>& stage_layers);

}  // namespace myriad::sim
