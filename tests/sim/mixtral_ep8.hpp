// The MoE layout the F&B-pass tests share: Mixtral 8x7B at 4,096 tokens on 64 GPUs of
// the Llama-3-like cluster, tp 2 (sp), ep 8 over two nodes (its all-to-alls leave the
// node), pp 4, ZeRO-1, 64 sequences, dp, pp and tp overlapped.
#pragma once

#include <string>

#include "models/scenario/loader.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim::testing {

// With `schedule` on `v` virtual stages; `more` adds parallelism keys (", key: value").
inline models::scenario::Scenario mixtral_ep8(const std::string& schedule, int v = 2,
                                              const std::string& more = "") {
  return models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: mixtral-8x7b, seq_length: 4096}\n"
      "parallelism: {tp: 2, sp: true, ep: 8, pp: 4, virtual_stages: " +
          std::to_string(v) + ", zero: 1, global_batch: 64, schedule: " + schedule + more +
          "}\n"
          "overlap: {dp: true, pp: true, tp: true}\n",
      "mixtral.yaml", kShipped);
}

}  // namespace myriad::sim::testing
