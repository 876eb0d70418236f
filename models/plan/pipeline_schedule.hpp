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
#pragma once

#include <cstdint>
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

  // Whether it takes an input from a neighbouring stage and sends it an output:
  // all passes but the weight gradients, which stay on the stage.
  [[nodiscard]] bool moves() const { return part != PassPart::weight; }
  // Whether it makes its chunk's weight gradients (a whole backward, or its W).
  [[nodiscard]] bool weight_gradients() const { return !forward && part != PassPart::input; }

  friend bool operator==(const PipelineTask&, const PipelineTask&) = default;
};

// Whether the schedule splits backward passes into input and weight gradients.
[[nodiscard]] constexpr bool splits_backward(scenario::Schedule s) {
  return s == scenario::Schedule::zb_h1;
}

// Throws std::invalid_argument unless 0 <= stage < pp, v >= 1, m >= 1, and for
// v > 1, m is a multiple of pp.
std::vector<PipelineTask> pipeline_order(int pp, int virtual_stages, int micro_batches, int stage);
// The order of `schedule` (1f1b and interleaved: the above; zb-h1: v = 1 only,
// else std::invalid_argument).
std::vector<PipelineTask> pipeline_order(scenario::Schedule schedule, int pp, int virtual_stages,
                                         int micro_batches, int stage);

// The forward passes stage `stage` runs before its first backward (Megatron-LM's
// num_warmup_microbatches): min(m v, (pp - stage - 1) k + (v - 1) pp), k = 2 with
// v > 1 virtual stages, else 1.
int warmup_forwards(int pp, int virtual_stages, int micro_batches, int stage);
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
// own forward on the same stage; a weight-gradient pass waits for nothing but
// its stage (its input-gradient pass runs before it there). Nodes are in an order where every node
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
  [[nodiscard]] int slots() const {
    return (splits_backward(schedule) ? 4 : 2) * pp * virtual_stages;
  }
  [[nodiscard]] int slot(int stage, const PipelineTask& t) const {
    const int v = virtual_stages;
    if (t.part == PassPart::whole) return (stage * 2 + (t.forward ? 0 : 1)) * v + t.chunk;
    return 2 * pp * v + (stage * 2 + (t.part == PassPart::weight ? 1 : 0)) * v + t.chunk;
  }
  // Whether a pass of this kind sends its output to another stage (a pipeline
  // transfer): all but the head's forward, the embedding's backward and the
  // weight gradients.
  [[nodiscard]] bool sends(int slot) const {
    if (slot >= 2 * pp * virtual_stages) {  // a split backward's part
      const int part = slot - 2 * pp * virtual_stages;
      if ((part / virtual_stages) % 2 == 1) return false;
      return part / (2 * virtual_stages) > 0 || part % virtual_stages > 0;
    }
    const int stage = slot / (2 * virtual_stages);
    const int chunk = slot % virtual_stages;
    const bool forward = (slot / virtual_stages) % 2 == 0;
    return forward ? (stage < pp - 1 || chunk < virtual_stages - 1) : (stage > 0 || chunk > 0);
  }
};

// The same preconditions as pipeline_order.
ScheduleGraph schedule_graph(int pp, int virtual_stages, int micro_batches);
ScheduleGraph schedule_graph(scenario::Schedule schedule, int pp, int virtual_stages,
                             int micro_batches);

}  // namespace myriad::models
