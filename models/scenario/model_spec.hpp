// A transformer as the training job sees it: dense or mixture-of-experts,
// with the attention and block variants that change its FLOPs and memory.
#pragma once

#include <algorithm>
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
  // Which layers are MoE layers: none of the first `first_dense_layers` (DeepSeek-V3:
  // 3), then every `every`-th (Llama 4 Maverick: 2, layers 1, 3, 5, ...); the others
  // are dense layers of model.ffn_hidden.
  int first_dense_layers = 0;
  int every = 1;
  // Node-limited routing (DeepSeek-V3 s2.1.2, s3.2.2): each token goes to experts
  // on at most this many nodes of its expert-parallel group, and is dispatched in
  // two hops: one copy a node over the network, then NVLink inside the node to
  // its experts' GPUs (the combine back likewise). 0: routing over every node,
  // each copy sent on its own.
  int max_nodes_per_token = 0;

  // Experts left in each layer after pruning.
  [[nodiscard]] int active_experts() const { return experts - prune.experts; }
};

// Multi-head latent attention (DeepSeek-V2/V3, arXiv:2405.04434 s2.1): keys and
// values from one compressed latent of kv_lora_rank, queries from one of
// q_lora_rank (0: projected from the hidden state directly), each head's query
// and key qk_nope_head_dim wide plus qk_rope_head_dim of decoupled RoPE, its value
// v_head_dim wide.
struct MlaSpec {
  int q_lora_rank = 0;
  int kv_lora_rank = 0;  // 0: no MLA
  int qk_nope_head_dim = 0;
  int qk_rope_head_dim = 0;
  int v_head_dim = 0;
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
  int sliding_window = 0;  // attention window in tokens; 0: full causal attention
  // With a window: every this-many-th layer (layer i, from 0, with (i + 1) % n == 0)
  // attends over the whole sequence, the others in the window (Hugging Face's
  // sliding_window_pattern; GPT-OSS 2, Gemma 3 6). 0: every layer in the window.
  int full_attention_every = 0;
  bool parallel_block = false;  // attention and MLP from the same input (GPT-J, PaLM, MegaScale)
  bool tied_embeddings = false;
  // Hidden and attention dropout probability. Above 0 every dropout keeps a mask
  // (1 byte an element) for its backward and runs as a kernel; at 0 PyTorch's
  // dropout returns its input (ATen's dropout, p == 0), so nothing is stored.
  double dropout = 0.1;
  // Multi-token prediction (DeepSeek-V3 s2.2, arXiv:2412.19437): D sequential
  // modules after the model, each predicting one token further from the previous
  // depth's hidden state and the shifted token's embedding: two norms, a projection
  // from 2 hidden to hidden, one transformer block, and the shared LM head again.
  // Their blocks are layers layers .. layers + D - 1 of the stack (an MoE model's
  // kind by is_moe_layer); they run on the last pipeline stage, after its layers.
  int mtp_depth = 0;
  MoeSpec moe;
  MlaSpec mla;

  [[nodiscard]] bool is_moe() const { return moe.experts > 0; }
  [[nodiscard]] bool is_mla() const { return mla.kv_lora_rank > 0; }
  // A head's value width: v_head_dim with MLA, else the head's width.
  [[nodiscard]] double value_width() const { return is_mla() ? mla.v_head_dim : head_width(); }
  // The attention core's forward FLOPs per query-key pair are 2 heads (qk + v)
  // (QK^T, then PV): 4 x this width, heads x (qk + v) / 2 (query_width() without MLA).
  [[nodiscard]] double attention_core_width() const {
    return is_mla() ? heads * (head_width() + value_width()) / 2 : query_width();
  }
  // Layer i (from 0) routes its tokens to experts: past the first dense layers,
  // the last of every `every` (Hugging Face's Llama 4: (i + 1) % step == 0;
  // DeepSeek-V3: i >= first_k_dense_replace).
  [[nodiscard]] bool is_moe_layer(int i) const {
    return is_moe() && i >= moe.first_dense_layers &&
           (i - moe.first_dense_layers + 1) % moe.every == 0;
  }
  // MoE layers among layers [from, to).
  [[nodiscard]] int moe_layers_in(int from, int to) const {
    if (!is_moe()) return 0;
    const int start = std::max(from, moe.first_dense_layers);
    if (to <= start) return 0;
    // Layers first_dense_layers + k every - 1 for k >= 1, counted below `to` and below `start`.
    const auto below = [&](int end) { return (end - moe.first_dense_layers) / moe.every; };
    return below(to) - below(start);
  }
  // The blocks a step runs: the model's layers and the MTP modules' blocks.
  [[nodiscard]] int stack_layers() const { return layers + mtp_depth; }
  // A model's MoE layers; the other layers() - moe_layers() are dense.
  [[nodiscard]] int moe_layers() const { return moe_layers_in(0, layers); }
  // Whether the model mixes dense and MoE layers (its MTP blocks among them).
  [[nodiscard]] bool mixed() const {
    return is_moe() && moe_layers_in(0, stack_layers()) < stack_layers();
  }
  // Each head's width: head_dim, or hidden / heads where it is not set (a spec
  // built in code rather than loaded).
  [[nodiscard]] double head_width() const {
    return head_dim > 0 ? head_dim : static_cast<double>(hidden) / heads;
  }
  // The queries' width (and the attention output's): heads x head_dim, which
  // need not be the hidden size.
  [[nodiscard]] double query_width() const { return heads * head_width(); }
  // Layer i (from 0, MTP blocks after the model's layers) attends in the window.
  [[nodiscard]] bool is_windowed_layer(int i) const {
    return sliding_window > 0 && (full_attention_every <= 0 || (i + 1) % full_attention_every != 0);
  }
  // The share of the stack's blocks that attend in the window: 1 with a window on
  // every layer, 0 without one.
  [[nodiscard]] double windowed_share() const {
    if (sliding_window <= 0 || stack_layers() <= 0) return 0;
    if (full_attention_every <= 0) return 1;
    const int full = stack_layers() / full_attention_every;
    return static_cast<double>(stack_layers() - full) / stack_layers();
  }
  // Keys a token's query meets in a layer, over the stack's layers on average, as
  // model FLOPs count them (every key of the window or sequence, not causal half).
  [[nodiscard]] double keys_per_query() const {
    const double window = sliding_window > 0 ? std::min(sliding_window, seq_length) : seq_length;
    const double w = windowed_share();
    return w * window + (1 - w) * seq_length;
  }
};

}  // namespace myriad::models::scenario
