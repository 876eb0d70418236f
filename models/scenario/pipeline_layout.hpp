// Megatron-Core's pipeline layout (--pipeline-model-parallel-layout): what each
// virtual pipeline stage holds, in the model's order. `E` is the embedding, `t` a
// transformer layer, `m` a multi-token-prediction block, `L` the output layer and
// the loss; `|` ends a stage; `X*N` and `(...)*N` repeat; commas and spaces are
// cosmetic. DeepSeek-V3 on 1,024 H100 (Megatron-Bridge): "Et|(tt|)*30mL", 32
// stages, the embedding and one layer first, the MTP block and the loss alone last.
// Stage i runs on pipeline rank i mod pp as its model chunk i / pp.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace myriad::models::scenario {

struct LayoutStage {
  int layers = 0;  // t
  int mtp = 0;     // m
  bool embedding = false;
  bool loss = false;
  std::string text;  // the stage as written out (`tt`, `mL`)
};

struct PipelineLayout {
  std::vector<LayoutStage> stages;
  std::string error;      // empty when the text parses
  std::size_t where = 0;  // the character (from 1) the error is at
  [[nodiscard]] bool ok() const { return error.empty(); }
};

// At most this many characters once repeats are written out.
inline constexpr std::size_t kMaxLayoutLength = 1 << 16;

PipelineLayout parse_pipeline_layout(std::string_view text);

struct ParallelSpec;
// ParallelSpec::layout_layers from its pipeline_layout: each chunk's transformer
// layers where the layout parses into pp * virtual_stages chunks, else none
// (check() then says what is wrong).
void derive_layout_layers(ParallelSpec& p);

}  // namespace myriad::models::scenario
