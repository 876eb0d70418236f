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

}  // namespace myriad::models
