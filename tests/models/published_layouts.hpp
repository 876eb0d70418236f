// Layouts of published runs that several tests build on, written once.
#pragma once

namespace myriad::testing {

// Llama 3.1 405B as Megatron-Bridge ran it on 1,024 H100 (fp8, tp 8 with sp, pp 8 of
// 8 chunks with Meta's split, cp 2, the distributed optimizer, everything overlapped):
// scenarios/validation/megatron-bridge-h100.yaml.
inline constexpr const char* kLlama405bMegatronBridge = R"(
cluster: {preset: llama3-like, gpu: H100, gpus: 1024}
model: {preset: llama3-405b}
parallelism: {tp: 8, sp: true, pp: 8, virtual_stages: 8, cp: 2, embedding_as_layer: true,
              loss_as_layer: true, global_batch: 512, zero: 1}
overlap: {tp: true, pp: true, dp: true}
training: {precision: fp8}
)";

}  // namespace myriad::testing
