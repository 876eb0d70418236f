// A transformer as the training job sees it: dense or mixture-of-experts,
// with the attention and block variants that change its FLOPs and memory.
#pragma once

#include <string>

namespace myriad::scenario {

enum class Activation { gelu, swiglu, relu };
enum class Norm { layernorm, rmsnorm };

struct MoeSpec {
  int experts = 0;               // 0: a dense model
  int top_k = 1;                 // experts per token
  int expert_ffn_hidden = 0;     // FFN size of one expert
  double capacity_factor = 1.0;  // tokens an expert accepts, relative to an even share
};

struct ModelSpec {
  std::string preset;
  std::string name;
  std::string source;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // grouped-query attention when < heads
  int ffn_hidden = 0;
  Activation activation = Activation::gelu;
  Norm norm = Norm::layernorm;
  int vocab = 0;
  int seq_length = 0;
  int sliding_window = 0;       // attention window in tokens; 0: full causal attention
  bool parallel_block = false;  // attention and MLP from the same input (GPT-J, PaLM, MegaScale)
  bool tied_embeddings = false;
  MoeSpec moe;

  [[nodiscard]] bool is_moe() const { return moe.experts > 0; }
};

}  // namespace myriad::scenario
