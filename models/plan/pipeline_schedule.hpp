// The order in which one pipeline stage runs its forward and backward passes
// over micro-batches and model chunks, as Megatron-LM's 1F1B and interleaved
// 1F1B schedules do. The step engine plays it; tests check it.
//
// Interleaved (v chunks per stage, m micro-batches, m a multiple of p): forward
// k (0-based) runs chunk (k / p) % v on micro-batch (k / (p v)) p + k % p;
// backward k runs chunk v - 1 - (k / p) % v on the same micro-batch formula.
// A stage first runs (p - stage - 1) * 2 + (v - 1) * p forwards (warm-up), then
// alternates one forward and one backward, then runs the remaining backwards.
// With v = 1 this is 1F1B: p - stage - 1 warm-up forwards.
//
// Zero-bubble ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024,
// s3.1; one chunk a stage): each backward split into its input gradients (B, the
// part the previous stage waits for) and its weight gradients (W, which nothing
// waits for). Stage s warms up as 1F1B does, then runs F, B and lets up to s
// W's wait (each W once more than s are pending, oldest first), the rest after
// its last B. The in-flight forwards, and so the activations, are 1F1B's; with
// passes of F, B (input gradients only) and W, the bubble is (p - 1)(F + B - W)
// where 1F1B's is (p - 1)(F + B + W): the paper's, and its DualPipe table's
// (p - 1)(F + B - 2W) with B the whole backward (tests/models/pipeline_schedule_test.cpp).
//
// DualPipe (DeepSeek-V3 technical report, s3.2.1; deepseek-ai/DualPipe): the
// model in pp stages, fed from both ends. Rank r holds two chunks: chunk 0 is
// stage r of the pipeline that starts on rank 0 (direction 0), chunk 1 stage
// pp - 1 - r of the one that starts on the last rank (direction 1); each
// direction takes half of the m micro-batches (m even, at least 2 pp; pp even).
// A task's chunk is its direction, its micro-batch the index within it. The
// order is DualPipe.step's eight phases; in the main phase a forward of one
// direction runs overlapped with a whole backward of the other (`paired`: one
// F&B pass, one's all-to-all behind the other's compute); some backwards are
// split as ZB-H1's. With F, B (whole), W and F&B passes the bubble is
// (pp/2 - 1)(F&B + B - 3W) where the report's assumptions hold, activations
// pp + 1 chunk passes on the middle ranks, parameters two chunks a rank
// (DualPipe's README table).
//
// Combined 1F1B (Megatron-Core's --overlap-moe-expert-parallel-comm; its
// "Combined 1F1B: Expert-Parallel All-to-All Overlap" guide): 1F1B, or with pp
// > 1 the interleaved schedule, with one more warm-up forward, which makes every
// steady-state forward independent of the backward after it; the two run as one
// F&B pass (`paired`), the forward's expert all-to-alls behind the backward's
// compute and the other way round. The first forwards and the last backwards
// run alone, their all-to-alls exposed (fill and drain).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "models/scenario/parallel_spec.hpp"

namespace myriad::models {

// What part of a backward pass a task runs: all of it, or, split by a
// zero-bubble schedule, its input gradients or its weight gradients.
enum class PassPart : std::uint8_t { whole, input, weight };

struct PipelineTask {
  bool forward = true;
  int chunk = 0;        // model chunk (virtual stage) of this stage, 0 .. v-1
  int micro_batch = 0;  // 0 .. m-1
  PassPart part = PassPart::whole;
  // DualPipe: a forward that runs overlapped with the backward after it in the
  // order, the two one F&B pass.
  bool paired = false;

  // Whether it takes an input from a neighbouring stage and sends it an output:
  // all passes but the weight gradients, which stay on the stage.
  [[nodiscard]] constexpr bool moves() const { return part != PassPart::weight; }
  // Whether it makes its chunk's weight gradients (a whole backward, or its W).
  [[nodiscard]] constexpr bool weight_gradients() const {
    return !forward && part != PassPart::input;
  }

  friend bool operator==(const PipelineTask&, const PipelineTask&) = default;
};

// Whether the schedule runs a forward and a backward as one F&B pass.
[[nodiscard]] constexpr bool pairs_passes(scenario::Schedule s) {
  return s == scenario::Schedule::dualpipe || s == scenario::Schedule::combined_1f1b;
}
// Whether combined 1F1B runs on a layout, as Megatron-Core requires it: expert
// parallelism, and virtual stages exactly when there is more than one stage.
[[nodiscard]] constexpr bool combined_1f1b_runs(int ep, int pp, int virtual_stages) {
  return ep >= 2 && (pp > 1) == (virtual_stages > 1);
}
// Whether a layout's schedule is its own choice, not 1F1B or interleaved as its
// virtual stages make it.
[[nodiscard]] constexpr bool named_schedule(scenario::Schedule s) {
  return s != scenario::Schedule::one_f_one_b && s != scenario::Schedule::interleaved;
}
// Whether the schedule splits backward passes into input and weight gradients.
[[nodiscard]] constexpr bool splits_backward(scenario::Schedule s) {
  return s == scenario::Schedule::zb_h1 || s == scenario::Schedule::dualpipe;
}
// The model chunks each stage holds: v, or DualPipe's two.
[[nodiscard]] constexpr int chunks_per_stage(scenario::Schedule s, int virtual_stages) {
  return s == scenario::Schedule::dualpipe ? 2 : virtual_stages;
}
// How many positions the model is cut into along a pipeline: pp v, or
// DualPipe's pp (each held twice, once per direction).
[[nodiscard]] constexpr int model_chunks(scenario::Schedule s, int pp, int virtual_stages) {
  return s == scenario::Schedule::dualpipe ? pp : pp * virtual_stages;
}
// Where chunk `chunk` of stage `stage` sits along the pipeline, 0 (with the
// embedding) to model_chunks - 1 (with the head): chunk pp + stage
// interleaved (Megatron-LM's), stage or pp - 1 - stage under DualPipe.
[[nodiscard]] constexpr int model_position(scenario::Schedule s, int pp, int stage, int chunk) {
  if (s == scenario::Schedule::dualpipe) return chunk == 0 ? stage : pp - 1 - stage;
  return chunk * pp + stage;
}
// The stage and chunk holding a position (of direction `chunk` under DualPipe).
struct ChunkPlace {
  int stage = -1;  // -1: none
  int chunk = 0;
};
[[nodiscard]] constexpr ChunkPlace place_of(scenario::Schedule s, int pp, int position, int chunk) {
  if (s == scenario::Schedule::dualpipe) return {chunk == 0 ? position : pp - 1 - position, chunk};
  return {position % pp, position / pp};
}
// Where a pass's input comes from, the same micro-batch's pass one position
// before (forward) or after (backward); none for the first position's forward,
// the last one's backward (after its own forward, on its stage) and weight
// gradients. Its output goes the other way.
[[nodiscard]] constexpr ChunkPlace input_of(scenario::Schedule s, int pp, int v, int stage,
                                            const PipelineTask& t) {
  if (!t.moves()) return {};
  const int at = model_position(s, pp, stage, t.chunk);
  const int from = t.forward ? at - 1 : at + 1;
  if (from < 0 || from >= model_chunks(s, pp, v)) return {};
  return place_of(s, pp, from, t.chunk);
}
[[nodiscard]] constexpr ChunkPlace output_of(scenario::Schedule s, int pp, int v, int stage,
                                             const PipelineTask& t) {
  if (!t.moves()) return {};
  const int at = model_position(s, pp, stage, t.chunk);
  const int to = t.forward ? at + 1 : at - 1;
  if (to < 0 || to >= model_chunks(s, pp, v)) return {};
  return place_of(s, pp, to, t.chunk);
}

// Throws std::invalid_argument unless 0 <= stage < pp, v >= 1, m >= 1, and for
// v > 1, m is a multiple of pp.
std::vector<PipelineTask> pipeline_order(int pp, int virtual_stages, int micro_batches, int stage);
// The order of `schedule` (1f1b and interleaved: the above; zb-h1: v = 1 only,
// dualpipe: v = 1 or its own 2 chunks a stage; else std::invalid_argument).
std::vector<PipelineTask> pipeline_order(scenario::Schedule schedule, int pp, int virtual_stages,
                                         int micro_batches, int stage);
// DualPipe's (m micro-batches in all); std::invalid_argument unless pp is even
// and m even and at least 2 pp.
std::vector<PipelineTask> dualpipe_order(int pp, int micro_batches, int stage);

// The forward passes stage `stage` runs before its first backward (Megatron-LM's
// num_warmup_microbatches): min(m v, (pp - stage - 1) k + (v - 1) pp), k = 2 with
// v > 1 virtual stages, else 1; one more under combined 1F1B (Megatron-Core adds
// it when overlap_moe_expert_parallel_comm is set).
int warmup_forwards(int pp, int virtual_stages, int micro_batches, int stage);
int warmup_forwards(scenario::Schedule schedule, int pp, int virtual_stages, int micro_batches,
                    int stage);
// The model chunk a stage's k-th forward pass runs: (k mod pp v) / pp (Megatron-LM's
// get_model_chunk_id).
int forward_chunk(int k, int pp, int virtual_stages);

}  // namespace myriad::models

namespace myriad::models {

// Every stage's passes as one graph: a pass waits for the pass before it on its
// stage and for its input, the output of the same chunk and micro-batch one
// stage before it (forward) or after it (backward), across the interleaved
// schedule's wrap from the last stage's chunk c to the first stage's chunk c + 1
// (forward; back again for backward). The last chunk's backward waits for its
// own forward, which its stage runs before it, and a weight-gradient pass for
// its input-gradient pass: for nothing but their stage. Nodes are in an order where every node
// comes after what it waits for, grouped by depth so that neighbours in the order are mostly on
// different stages (independent: a sweep over them pipelines well).
struct ScheduleGraph {
  struct Node {
    std::int32_t input = -1;  // the node whose output it waits for, or -1
    std::uint16_t stage = 0;
    // The pass's kind: (stage * 2 + backward) * v + chunk; a split backward's
    // parts after those, 2 pp v + (stage * 2 + weight) * v + chunk.
    std::uint16_t slot = 0;
  };
  int pp = 1;
  int virtual_stages = 1;
  int micro_batches = 1;
  scenario::Schedule schedule = scenario::Schedule::one_f_one_b;
  std::vector<Node> nodes;
  // Per node, on every stage: whether it is its chunk's first forward there
  // (kFirstForward) or its last pass making weight gradients (kLastBackward),
  // where the data-parallel gathers and reductions of that chunk meet the passes.
  static constexpr std::uint8_t kFirstForward = 1;
  static constexpr std::uint8_t kLastBackward = 2;
  std::vector<std::uint8_t> role;
  // The nodes between these two have no role: one past the last first forward,
  // and the first last pass making weight gradients (a sweep runs the plain loop
  // there once the gathers are behind every stage).
  std::size_t roles_first_end = 0;
  std::size_t roles_last_begin = 0;
  // Per node, a DualPipe F&B pass's second input (its backward's), or -1; empty
  // for schedules without pairs.
  std::vector<std::int32_t> second_input;
  // By slot: the outputs a pass of that kind sends to other stages (0, 1, or 2
  // for an F&B pass).
  std::vector<std::uint8_t> outputs;
  // Where the graph repeats itself (a schedule's steady state): for every i in
  // [periodic_begin, periodic_end - period), node i + period runs node i's kind
  // of pass a round later (its stage, slot and role, each input `period` nodes
  // after node i's); period 0 where no round repeats. A round is the nodes from
  // one boundary, periodic_begin + k period, to the next; `live` holds how far
  // before its boundary the outputs a round reads were made (offsets >= 1).
  std::size_t period = 0;
  std::size_t periodic_begin = 0;
  std::size_t periodic_end = 0;
  std::vector<std::int32_t> live;
  // By node i, and one past the last: the earliest node whose output node i or
  // a later node reads (the node count where none does).
  std::vector<std::int32_t> earliest_input;
  [[nodiscard]] int slots() const { return slots(schedule, pp, virtual_stages); }
  [[nodiscard]] static constexpr int slots(scenario::Schedule s, int pp, int v) {
    return pairs_passes(s) ? 4 * pp * v + pp * v * v : splits_backward(s) ? 4 * pp * v : 2 * pp * v;
  }
  // (stage * 2 + backward) * v + chunk for whole passes; a split backward's
  // parts after those, 2 pp v + (stage * 2 + weight) * v + chunk (F&B passes:
  // pair_slot).
  [[nodiscard]] int slot(int stage, const PipelineTask& t) const {
    const int v = virtual_stages;
    if (t.part == PassPart::whole) return (stage * 2 + (t.forward ? 0 : 1)) * v + t.chunk;
    return 2 * pp * v + (stage * 2 + (t.part == PassPart::weight ? 1 : 0)) * v + t.chunk;
  }
  // An F&B pass of the forward of chunk `forward` and the backward of chunk
  // `backward`: after the others, 4 pp v + (stage * v + forward) * v + backward.
  [[nodiscard]] int pair_slot(int stage, int forward, int backward) const {
    const int v = virtual_stages;
    return 4 * pp * v + (stage * v + forward) * v + backward;
  }
  // The chunks of the forward and the backward an F&B slot runs.
  [[nodiscard]] std::pair<int, int> pair_chunks(int slot) const {
    const int v = virtual_stages;
    const int k = (slot - 4 * pp * v) % (v * v);
    return {k / v, k % v};
  }
  // Whether a pass of this kind sends its output to another stage (a pipeline
  // transfer): all but the head's forward, the embedding's backward and the
  // weight gradients.
  [[nodiscard]] bool sends(int slot) const { return outputs[static_cast<std::size_t>(slot)] > 0; }
};

// The same preconditions as pipeline_order.
ScheduleGraph schedule_graph(int pp, int virtual_stages, int micro_batches);
ScheduleGraph schedule_graph(scenario::Schedule schedule, int pp, int virtual_stages,
                             int micro_batches);
// Sets `g`'s period, periodic_begin, periodic_end, live and earliest_input from
// its nodes (schedule_graph does).
void find_period(ScheduleGraph& g);

}  // namespace myriad::models
