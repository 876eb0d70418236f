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
#pragma once

#include <cstdint>
#include <vector>

namespace myriad::models {

struct PipelineTask {
  bool forward = true;
  int chunk = 0;        // model chunk (virtual stage) of this stage, 0 .. v-1
  int micro_batch = 0;  // 0 .. m-1

  friend bool operator==(const PipelineTask&, const PipelineTask&) = default;
};

// Throws std::invalid_argument unless 0 <= stage < pp, v >= 1, m >= 1, and for
// v > 1, m is a multiple of pp.
std::vector<PipelineTask> pipeline_order(int pp, int virtual_stages, int micro_batches, int stage);

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
// own forward on the same stage. Nodes are in an order where every node comes
// after what it waits for, grouped by depth so that neighbours in the order are
// mostly on different stages (independent: a sweep over them pipelines well).
struct ScheduleGraph {
  struct Node {
    std::int32_t input = -1;  // the node whose output it waits for, or -1
    std::uint16_t stage = 0;
    std::uint16_t slot = 0;  // the pass's kind: (stage * 2 + backward) * v + chunk
  };
  int pp = 1;
  int virtual_stages = 1;
  int micro_batches = 1;
  std::vector<Node> nodes;
  // Per node, on every stage: whether it is its chunk's first forward there
  // (kFirstForward) or its last backward (kLastBackward), where the data-parallel
  // gathers and reductions of that chunk meet the passes.
  static constexpr std::uint8_t kFirstForward = 1;
  static constexpr std::uint8_t kLastBackward = 2;
  std::vector<std::uint8_t> role;
  [[nodiscard]] int slots() const { return 2 * pp * virtual_stages; }
  // Whether a pass of this kind sends its output to another stage (a pipeline
  // transfer): all but the head's forward and the embedding's backward.
  [[nodiscard]] bool sends(int slot) const {
    const int stage = slot / (2 * virtual_stages);
    const int chunk = slot % virtual_stages;
    const bool forward = (slot / virtual_stages) % 2 == 0;
    return forward ? (stage < pp - 1 || chunk < virtual_stages - 1) : (stage > 0 || chunk > 0);
  }
};

// The same preconditions as pipeline_order.
ScheduleGraph schedule_graph(int pp, int virtual_stages, int micro_batches);

}  // namespace myriad::models
