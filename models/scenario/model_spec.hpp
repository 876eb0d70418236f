// A transformer as the training job sees it: dense or mixture-of-experts,
// with the attention and block variants that change its FLOPs and memory.
#pragma once

#include <string>
#include <vector>

namespace myriad::models::scenario {

enum class Activation { gelu, swiglu, relu };
enum class Norm { layernorm, rmsnorm };

// How the router spreads tokens over the experts.
enum class RouterSkew {
  uniform,    // every expert gets an even share
  zipf,       // expert e (from 0) gets a share proportional to 1 / (e + 1)^zipf_exponent
  histogram,  // shares as measured, one per expert
};
// How routed tokens reach the expert-parallel ranks.
enum class MoeDispatch {
  automatic,   // whichever moves fewer bytes
  all_to_all,  // each token sent to the ranks of its top-k experts (all-to-all-v)
  all_gather,  // every rank gathers every token, outputs reduce-scattered back
};
enum class Sparsity {
  none,
  unstructured,  // any weights zeroed (MoE-Pruner): dense kernels unless a sparse one is given
  two_four,      // 2 of every 4 weights zeroed: Ampere/Hopper sparse tensor cores
};

// A pruning what-if on the experts: whole experts removed, or their weights sparsified.
struct PruneSpec {
  int experts = 0;      // experts removed from every MoE layer
  double sparsity = 0;  // fraction of each remaining expert's weights zeroed
  Sparsity pattern = Sparsity::none;
  bool sparse_kernel = false;  // unstructured: a sparse GEMM kernel runs it (else dense)

  [[nodiscard]] bool any() const { return experts > 0 || pattern != Sparsity::none; }
};

struct MoeSpec {
  int experts = 0;            // 0: a dense model
  int top_k = 1;              // experts per token
  int expert_ffn_hidden = 0;  // FFN size of one expert
  int shared_experts = 0;     // experts every token goes through (DeepSeek-style)
  int shared_expert_ffn_hidden = 0;
  // Tokens an expert accepts relative to an even share, the rest dropped, and every
  // expert's input padded to it; 0: dropless (every routed token computed).
  double capacity_factor = 0;
  RouterSkew skew = RouterSkew::uniform;
  double zipf_exponent = 1;
  std::vector<double> histogram;  // skew: histogram; one share per expert
  MoeDispatch dispatch = MoeDispatch::automatic;
  PruneSpec prune;

  // Experts left in each layer after pruning.
  [[nodiscard]] int active_experts() const { return experts - prune.experts; }
};

struct ModelSpec {
  std::string preset;
  std::string name;
  std::string source;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;  // grouped-query attention when < heads
  int head_dim = 0;  // each head's width: hidden / heads unless given (Qwen3-4B: 128, not 80)
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
  // Each head's width: head_dim, or hidden / heads where it is not set (a spec
  // built in code rather than loaded).
  [[nodiscard]] double head_width() const {
    return head_dim > 0 ? head_dim : static_cast<double>(hidden) / heads;
  }
  // The queries' width (and the attention output's): heads x head_dim, which
  // need not be the hidden size.
  [[nodiscard]] double query_width() const { return heads * head_width(); }
};

}  // namespace myriad::models::scenario
