#include "models/transformer/layer_program.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include "models/transformer/layer_ops.hpp"
#include "models/transformer/moe_routing.hpp"

namespace myriad::models {
namespace {

using scenario::Activation;
using scenario::ModelSpec;
using scenario::Norm;
using scenario::Recompute;
using namespace layer_ops;  // NOLINT(google-build-using-namespace): the layer's own primitives

// Attention core: fused (flash) or as two batched GEMMs around a softmax. With
// context parallelism each rank first gathers the keys and values of the others
// (ring attention; its backward reduce-scatters their gradients).
void attention_core(Phase& p, const ModelSpec& m, const Dims& d, const ShardShape& sh) {
  const double seq_local = sh.seq / sh.cp;
  const bool mla = m.is_mla();
  if (sh.cp > 1) {
    // MLA's keys and values are up-projected per head before they are gathered.
    const double kv_bytes = mla ? d.tokens * d.kv_local * (d.head_dim + d.v_dim) * kAct
                                : d.tokens * 2 * d.kv_local * d.head_dim * kAct;
    p.issue({"cp.kv", CollectiveKind::all_gather, GroupKind::cp, kv_bytes * sh.cp});
  }
  if (sh.fused) {
    // Causal (and windowed) pairs only; each CP rank computes its share of them. A
    // stack whose layers attend in the window or over the whole sequence
    // (model.full_attention_every) averages them: each kind's kernel at its share.
    const double windowed = m.windowed_share();
    const auto core = [&](const char* name, double window, double share) {
      const double pairs = sh.micro_batch * attended_pairs(sh.seq, window) / sh.cp;
      Op op;
      op.name = name;
      op.cls = OpClass::attention;
      op.flops = 4 * pairs * d.head_dim * d.q_local;
      op.bytes = d.tokens * d.head_dim * (2 * d.q_local + 2 * d.kv_local) * kAct;
      if (mla) {  // QK^T at the query-key width, PV at the value width
        op.flops = 2 * pairs * (d.head_dim + d.v_dim) * d.q_local;
        op.bytes = d.tokens * (d.head_dim + d.v_dim) * (d.q_local + d.kv_local) * kAct;
      }
      op.flops *= share;
      op.bytes *= share;
      op.share = share;
      op.attention = {d.head_dim, sh.seq, window, static_cast<double>(sh.cp), true};
      p.ops.push_back(op);
    };
    if (windowed > 0 && windowed < 1) {
      core("attention", 0, 1 - windowed);
      core("attention.window", m.sliding_window, windowed);
    } else {
      core("attention", windowed > 0 ? m.sliding_window : 0, 1);
    }
    return;
  }
  // Unfused: full score matrices (masked), softmax, dropout, as Megatron-LM did before
  // FlashAttention.
  const double batch = sh.micro_batch * d.q_local;
  const double keys = sh.seq;
  p.ops.push_back(gemm("attention.scores", seq_local, keys, d.head_dim, sh, batch));
  const double scores = batch * seq_local * keys;
  // Scale+mask+softmax reads and writes the scores; dropout writes a mask and its output.
  // Its backward: softmax reads probabilities and gradients and writes gradients (6 B),
  // dropout reads gradients and mask and writes gradients (5 B). Without dropout,
  // the softmax alone.
  const bool dropout = m.dropout > 0;
  p.ops.push_back(make_elementwise("attention.softmax",
                                   scores * (dropout ? 4 * kAct + 1 : 2 * kAct),
                                   (dropout ? 6 : 5) * scores));
  p.ops.back().backward_bytes = scores * (dropout ? 5 * kAct + 1 : 3 * kAct);
  p.ops.push_back(gemm("attention.context", seq_local, d.v_dim, keys, sh, batch));
}

// Multi-head latent attention (DeepSeek-V2 s2.1, DeepSeek-V3 s2.1.1): the
// hidden state down-projected to the queries' latent and to the keys' and
// values' latent with the shared RoPE key, each normalized, then up-projected to
// every head's query, key and value. The down-projections are not split over the
// tp ranks (Megatron-Core's MLA keeps them whole on every rank, computed on the
// tokens the group gathered); the up-projections and the output projection are
// split by heads like qkv and proj.
void mla_projections(Phase& p, const ModelSpec& m, const Dims& d, const ShardShape& sh) {
  const auto& mla = m.mla;
  const double rank_q = mla.q_lora_rank;
  const double rank_kv = mla.kv_lora_rank;
  const auto latent_norm = [&](std::string_view name, double width) {
    const double flops_per_element = m.norm == Norm::rmsnorm ? 4 : 8;
    Op op =
        make_elementwise(name, 2 * d.tokens * width * kAct, flops_per_element * d.tokens * width);
    op.kernel = norm_kernel(m);
    return op;
  };
  if (rank_q > 0) {
    p.ops.push_back(gemm("q.down", d.tokens, rank_q, d.h, sh));
    tp_pieces(p.ops.back(), sh, true);
    p.ops.push_back(latent_norm("q.norm", rank_q));
    p.ops.push_back(gemm("q.up", d.tokens, d.q_local * d.head_dim, rank_q, sh));
  } else {
    p.ops.push_back(gemm("q", d.tokens, d.q_local * d.head_dim, d.h, sh));
    tp_pieces(p.ops.back(), sh, true);
  }
  p.ops.push_back(gemm("kv.down", d.tokens, rank_kv + mla.qk_rope_head_dim, d.h, sh));
  tp_pieces(p.ops.back(), sh, true);
  p.ops.push_back(latent_norm("kv.norm", rank_kv));
  p.ops.push_back(
      gemm("kv.up", d.tokens, d.kv_local * (mla.qk_nope_head_dim + d.v_dim), rank_kv, sh));
}

void attention_block(Phase& p, const ModelSpec& m, const Dims& d, const ShardShape& sh) {
  p.ops.push_back(norm("norm.attention", m, d));
  tp_enter(p, "tp.attention.in", d, sh);
  if (m.is_mla()) {
    mla_projections(p, m, d, sh);
  } else {
    p.ops.push_back(gemm("qkv", d.tokens, (d.q_local + 2 * d.kv_local) * d.head_dim, d.h, sh));
    tp_pieces(p.ops.back(), sh, true);
  }
  attention_core(p, m, d, sh);
  p.ops.push_back(gemm("proj", d.tokens, d.h, d.q_local * d.v_dim, sh));
  tp_pieces(p.ops.back(), sh, false);
  tp_leave(p, "tp.attention.out", d, sh);
  p.ops.push_back(residual("residual.attention", m, d));
}

void activation(Phase& p, const ModelSpec& m, double tokens, double f, double f_in,
                const char* name = "activation") {
  p.ops.push_back(make_elementwise(name, tokens * (f_in + f) * kAct, 8 * tokens * f));
  p.ops.back().kernel = activation_kernel(m);
}

void dense_mlp(Phase& p, const ModelSpec& m, const Dims& d, const ShardShape& sh) {
  p.ops.push_back(norm("norm.mlp", m, d));
  tp_enter(p, "tp.mlp.in", d, sh);
  p.ops.push_back(gemm("fc1", d.tokens, d.f_in / d.tp, d.h, sh));
  tp_pieces(p.ops.back(), sh, true);
  activation(p, m, d.tokens, d.f / d.tp, d.f_in / d.tp);
  p.ops.push_back(gemm("fc2", d.tokens, d.h, d.f / d.tp, sh));
  tp_pieces(p.ops.back(), sh, false);
  tp_leave(p, "tp.mlp.out", d, sh);
  p.ops.push_back(residual("residual.mlp", m, d));
}

// Bytes an element of an expert all-to-all takes on the wire: bf16, or fp8 with
// one fp32 scale per 128 elements.
double a2a_element_bytes(bool fp8) { return fp8 ? 1 + 4.0 / 128 : kAct; }

// An expert GEMM is one grouped GEMM over the rank's experts. On pruned weights it
// runs sparse: 2:4 on sparse tensor cores, or
// unstructured on a sparse kernel when one is given (else as dense).
void prune_gemm(Op& op, const scenario::PruneSpec& prune) {
  op.grouped = true;
  op.launches = op.gemm.batch;
  if (prune.pattern == scenario::Sparsity::two_four) {
    op.sparse = SparseKernel::two_four;
  } else if (prune.pattern == scenario::Sparsity::unstructured && prune.sparse_kernel) {
    op.sparse = SparseKernel::unstructured;
    op.kept = 1 - prune.sparsity;
  }
}

// Experts. With etp = tp each rank holds experts / ep of them, each split over the
// tp ranks as the dense MLP is, and routes the tokens the tp group gathered; with
// etp = 1 (tp > 1, sequence parallel) whole experts take the tokens each tp rank
// holds by sequence. Tokens reach the expert-parallel ranks by all-to-all (each to
// its top_k experts' ranks) or by all-gather of every token with a reduce-scatter
// of the outputs, whichever moves fewer bytes unless the scenario says. The most
// loaded rank (router skew, capacity padding) sets the experts' time and the
// all-to-all-v's size.
// Whether the experts' first GEMM reads the dispatched tokens as they arrive, in
// fp8 (fp8 GEMMs and an fp8 all-to-all dispatch: DeepSeek-V3 s3.3.3 quantizes
// "before MoE up-projections" and dispatches that, "compatible with FP8 Fprop in
// MoE up-projections"): no dequantize after the dispatch, no cast before the GEMM.
bool moe_mlp(Phase& p, const ModelSpec& m, const Dims& d, const ShardShape& sh) {
  const auto& moe = m.moe;
  const int etp = sh.expert_tp();
  const bool gathered = etp == sh.tp;  // experts split like the dense MLP
  p.ops.push_back(norm("norm.mlp", m, d));
  if (gathered) tp_enter(p, "tp.mlp.in", d, sh);
  const double tokens = gathered ? d.tokens : d.tokens / sh.tp;  // routed by this rank
  const int experts = moe.active_experts();
  p.ops.push_back(gemm("router", tokens, experts, d.h, sh));
  // Softmax and top-k over fp32 logits: read and write them, and the routing map.
  p.ops.push_back(make_elementwise("router.topk", 3 * tokens * experts * 4, 8 * tokens * experts));
  if (moe.shared_experts > 0) {
    const double fs = static_cast<double>(moe.shared_experts) * moe.shared_expert_ffn_hidden;
    const double fs_in = m.activation == Activation::swiglu ? 2 * fs : fs;
    p.ops.push_back(gemm("shared.fc1", tokens, fs_in / etp, d.h, sh));
    activation(p, m, tokens, fs / etp, fs_in / etp);
    p.ops.push_back(gemm("shared.fc2", tokens, d.h, fs / etp, sh));
  }
  const double slots = tokens * moe_load(moe, sh.ep).busiest_slots;  // the busiest rank's copies
  const double sent = tokens * moe.top_k;                            // token copies this rank sends
  p.ops.push_back(make_elementwise("permute", 2 * sent * d.h * kAct));
  // Dispatch and combine: all-to-all of the busiest rank's slots (what it receives;
  // what each sends is no more under an even spread of tokens over ranks), or
  // all-gather of every token of the group and reduce-scatter back.
  const double a2a_bytes = std::max(slots, sent) * d.h * a2a_element_bytes(sh.a2a_fp8);
  const double gather_bytes = tokens * sh.ep * d.h * a2a_element_bytes(sh.a2a_fp8);
  // The combine in its own precision (training.combine_precision).
  const double combine_a2a_bytes = std::max(slots, sent) * d.h * a2a_element_bytes(sh.combine_fp8);
  const double combine_gather_bytes = tokens * sh.ep * d.h * a2a_element_bytes(sh.combine_fp8);
  const bool by_gather =
      moe.dispatch == scenario::MoeDispatch::all_gather ||
      (moe.dispatch == scenario::MoeDispatch::automatic && gather_bytes < a2a_bytes);
  // Node-limited routing: a token's copies reach at most max_nodes_per_token nodes
  // (no more than its top_k), dispatched and combined in two hops.
  const double hop_nodes =
      moe.max_nodes_per_token > 0 ? std::min(moe.max_nodes_per_token, moe.top_k) : 0;
  const double hop_copies = hop_nodes > 0 ? moe.top_k : 0;
  bool fp8_tokens = false;
  if (sh.ep > 1) {
    if (by_gather) {  // compressed: each rank quantizes its tokens, dequantizes the group's
      if (sh.a2a_fp8) p.ops.push_back(make_elementwise("ep.quantize", tokens * d.h * (kAct + 1)));
      p.issue({"ep.dispatch", CollectiveKind::all_gather, GroupKind::ep, gather_bytes});
      if (sh.a2a_fp8) {
        p.ops.push_back(make_elementwise("ep.dequantize", tokens * sh.ep * d.h * (kAct + 1)));
      }
    } else {
      // Dropless, the all-to-all's splits are the token counts, which the host
      // copies and waits for first; padded to capacity they are known (Phase::host_sync).
      if (moe.capacity_factor <= 0) p.host_sync = static_cast<int>(p.ops.size());
      if (sh.a2a_fp8) {  // quantize: read bf16, write fp8 and scales
        p.ops.push_back(make_elementwise("ep.quantize", sent * d.h * (kAct + 1)));
      }
      p.issue({"ep.dispatch", CollectiveKind::all_to_all, GroupKind::ep, a2a_bytes, hop_nodes,
               hop_copies});
      fp8_tokens = sh.a2a_fp8 && sh.fp8;
      if (sh.a2a_fp8 && !fp8_tokens) {
        p.ops.push_back(make_elementwise("ep.dequantize", slots * d.h * (kAct + 1)));
      }
    }
  }
  const double local_experts = static_cast<double>(experts) / sh.ep;
  const double per_expert = slots / local_experts;
  const double fe = moe.expert_ffn_hidden;
  const double fe_in = m.activation == Activation::swiglu ? 2 * fe : fe;
  p.ops.push_back(gemm("expert.fc1", per_expert, fe_in / etp, d.h, sh, local_experts));
  prune_gemm(p.ops.back(), moe.prune);
  activation(p, m, slots, fe / etp, fe_in / etp, "expert.activation");
  p.ops.push_back(gemm("expert.fc2", per_expert, d.h, fe / etp, sh, local_experts));
  prune_gemm(p.ops.back(), moe.prune);
  if (sh.ep > 1) {
    if (by_gather) {
      // Compressed, the reduction cannot run in fp8 on the wire: each rank sends its
      // fp8 partial outputs of every other rank's tokens (the reduce-scatter's bytes,
      // as an all-to-all) and sums what it receives in bf16.
      if (sh.combine_fp8) {
        p.ops.push_back(make_elementwise("ep.quantize", tokens * sh.ep * d.h * (kAct + 1)));
      }
      p.issue({"ep.combine",
               sh.combine_fp8 ? CollectiveKind::all_to_all : CollectiveKind::reduce_scatter,
               GroupKind::ep, combine_gather_bytes});
      if (sh.combine_fp8) {
        p.ops.push_back(make_elementwise("ep.dequantize", tokens * sh.ep * d.h * (kAct + 1)));
      }
    } else {
      if (sh.combine_fp8) {
        p.ops.push_back(make_elementwise("ep.quantize", slots * d.h * (kAct + 1)));
      }
      p.issue({"ep.combine", CollectiveKind::all_to_all, GroupKind::ep, combine_a2a_bytes,
               hop_nodes, hop_copies});
      if (sh.combine_fp8) {
        p.ops.push_back(make_elementwise("ep.dequantize", sent * d.h * (kAct + 1)));
      }
    }
  }
  p.ops.push_back(make_elementwise("unpermute", 2 * sent * d.h * kAct));
  if (gathered) tp_leave(p, "tp.mlp.out", d, sh);
  p.ops.push_back(residual("residual.mlp", m, d));
  return fp8_tokens;
}

// Parallel block (GPT-J, PaLM, MegaScale): one norm and one gather feed attention
// and MLP, whose input GEMMs fuse into one, as do their output GEMMs.
void parallel_block(Phase& p, const ModelSpec& m, const Dims& d, const ShardShape& sh) {
  p.ops.push_back(norm("norm", m, d));
  tp_enter(p, "tp.block.in", d, sh);
  const double qkv_n = (d.q_local + 2 * d.kv_local) * d.head_dim;
  p.ops.push_back(gemm("qkv+fc1", d.tokens, qkv_n + d.f_in / d.tp, d.h, sh));
  attention_core(p, m, d, sh);
  activation(p, m, d.tokens, d.f / d.tp, d.f_in / d.tp);
  p.ops.push_back(gemm("proj+fc2", d.tokens, d.h, d.q_local * d.head_dim + d.f / d.tp, sh));
  tp_leave(p, "tp.block.out", d, sh);
  p.ops.push_back(residual("residual", m, d));
}

// Backward of a forward phase: two GEMMs per GEMM (input and weight gradients),
// attention backward as FlashAttention runs it (attention_backward_of),
// memory-bound ops moving twice their bytes, and mirrored collectives.
Phase backward_of(const Phase& fwd, scenario::Fp8Recipe recipe) {
  const double cast_bytes = fp8_cast_bytes(recipe);
  Phase b;
  b.ops.reserve(3 * fwd.ops.size());  // a GEMM's cast and two GEMMs at most
  b.comms.reserve(fwd.comms.size());
  // By forward position k: the backward's ops once the backward of forward ops
  // k.. has run, where the mirror of a collective issued before op k goes.
  std::vector<int> placed(fwd.ops.size() + 1, 0);
  for (std::size_t i = fwd.ops.size(); i-- > 0;) {  // backward runs in reverse
    const Op& op = fwd.ops[i];
    placed[i + 1] = static_cast<int>(b.ops.size());
    if (op.name == kFp8Cast) continue;  // its gradient passes through, as bf16
    switch (op.cls) {
      case OpClass::gemm: {
        const auto& g = op.gemm;
        const double elem = op.fp8 ? 1.0 : kAct;
        if (op.fp8) {  // the output gradient, cast to fp8 for both backward GEMMs
          b.ops.push_back(fp8_cast(op, cast_bytes * g.m * g.n * g.batch, recipe));
          b.ops.back().backward = true;
        }
        b.ops.push_back(make_gemm(op.name, g.m, g.k, g.n, g.batch, elem, op.fp8));  // dgrad
        b.ops.back().pieces = op.dgrad_pieces;
        b.ops.back().launches = op.launches;
        b.ops.back().sparse = op.sparse;  // through the pruned weights; wgrad is dense
        b.ops.back().kept = op.kept;
        b.ops.back().grouped = op.grouped;
        b.ops.push_back(make_gemm(op.name, g.k, g.n, g.m, g.batch, elem, op.fp8));  // wgrad
        b.ops.back().grouped = op.grouped;
        b.ops.back().launches = op.launches;
        b.ops.back().wgrad = true;
        break;
      }
      case OpClass::attention: {
        b.ops.push_back(attention_backward_of(op));
        break;
      }
      case OpClass::elementwise:
      case OpClass::optimizer:
        // Backward reads the saved input and the output gradient and writes the input
        // gradient: half as much traffic again as forward, unless the op says otherwise.
        b.ops.push_back(make_elementwise(
            op.name, op.backward_bytes > 0 ? op.backward_bytes : 1.5 * op.bytes, op.flops));
        b.ops.back().kernel = op.kernel;
        break;
    }
    b.ops.back().backward = true;
    if (op.cls == OpClass::gemm) b.ops[b.ops.size() - 2].backward = true;
  }
  placed[0] = static_cast<int>(b.ops.size());
  for (std::size_t i = fwd.comms.size(); i-- > 0;) {
    Collective c = fwd.comms[i];
    if (c.after_ops >= 0) c.after_ops = placed[static_cast<std::size_t>(c.after_ops)];
    if (c.kind == CollectiveKind::all_gather) {
      c.kind = CollectiveKind::reduce_scatter;
    } else if (c.kind == CollectiveKind::reduce_scatter) {
      c.kind = CollectiveKind::all_gather;
    }
    b.comms.push_back(c);
  }
  return b;
}

Phase recompute_of(const Phase& fwd, const ModelSpec& m, const Dims& d, const ShardShape& sh) {
  Phase p;
  switch (sh.recompute) {
    case Recompute::full:
      return fwd;
    case Recompute::selective:  // the attention core; FlashAttention's backward recomputes it
      if (!sh.fused) attention_core(p, m, d, sh);
      break;
    case Recompute::none:
      break;
  }
  // The norms and MLA's up-projections, and the routed experts' activation, again
  // from the inputs kept.
  for (const Op& op : fwd.ops) {
    const bool up = op.name == "norm.attention" || op.name == "norm.mlp" || op.name == "q.norm" ||
                    op.name == "kv.norm" || op.name == "q.up" || op.name == "kv.up";
    if ((sh.recompute_norms_and_up && up) ||
        (sh.recompute_moe_act && op.name == "expert.activation")) {
      p.ops.push_back(op);
    }
  }
  return p;
}

}  // namespace

LayerProgram transformer_layer(const ModelSpec& m, const ShardShape& sh) {
  return transformer_layer(m, sh, m.is_moe() ? LayerKind::moe : LayerKind::dense);
}

LayerProgram transformer_layer(const ModelSpec& m, const ShardShape& sh, LayerKind kind) {
  const Dims d = dims(m, sh);
  const bool moe = kind == LayerKind::moe && m.is_moe();
  LayerProgram lp;
  lp.forward.ops.reserve(48);  // an MLA and MoE layer's ops with their casts: 40
  bool fp8_tokens = false;     // the experts' fc1 reads the fp8 dispatch as it arrives
  if (m.parallel_block && !moe) {
    parallel_block(lp.forward, m, d, sh);
  } else {
    attention_block(lp.forward, m, d, sh);
    if (moe) {
      fp8_tokens = moe_mlp(lp.forward, m, d, sh);
    } else {
      dense_mlp(lp.forward, m, d, sh);
    }
  }
  if (sh.fp8) {
    add_fp8_casts(lp.forward, sh.fp8_recipe, fp8_tokens ? "expert.fc1" : "");
  }
  lp.backward = backward_of(lp.forward, sh.fp8_recipe);
  lp.recompute = recompute_of(lp.forward, m, d, sh);
  return lp;
}

LayerProgram embedding(const ModelSpec& m, const ShardShape& sh) {
  const Dims d = dims(m, sh);
  LayerProgram lp;
  // Vocabulary-parallel lookup: each TP rank fills its rows, then a reduction.
  lp.forward.ops.push_back(make_elementwise("embedding", 2 * d.tokens * d.h * kAct));
  tp_leave(lp.forward, "tp.embedding", d, sh);
  lp.backward = backward_of(lp.forward, sh.fp8_recipe);
  return lp;
}

namespace {

// The final norm, the LM head and the loss, of the model or of an MTP module
// (names are static labels: "mtp."-prefixed for the module's).
void head_and_loss(Phase& p, bool mtp, const ModelSpec& m, const Dims& d, const ShardShape& sh) {
  p.ops.push_back(norm(mtp ? "mtp.norm.final" : "norm.final", m, d));
  tp_enter(p, mtp ? "tp.mtp.head.in" : "tp.head.in", d, sh);
  const double vocab_local = static_cast<double>(m.vocab) / sh.tp;
  // In bf16 under an fp8 recipe: fp8 runs in Transformer Engine's layers, and
  // Megatron-Core's output layer is its own ColumnParallelLinear
  // (megatron/core/models/gpt/gpt_model.py), outside them; the FP8 formats paper
  // (Micikevicius et al., arXiv:2209.05433) keeps the last layer in higher precision too.
  p.ops.push_back(
      make_gemm(mtp ? "mtp.lm_head" : "lm_head", d.tokens, vocab_local, d.h, 1, kAct, false));
  // Vocabulary-parallel cross entropy in fp32: max, exp-sum and gradient passes over logits.
  p.ops.push_back(make_elementwise(mtp ? "mtp.loss" : "loss", 3 * d.tokens * vocab_local * 4,
                                   6 * d.tokens * vocab_local));
}

// One MTP module's work besides its transformer block (DeepSeek-V3 s2.2; as
// Megatron-Core's multi_token_prediction.py runs it): the shifted tokens'
// embedding (vocabulary-parallel, as the model's), the two norms, the projection
// of their concatenation from 2 hidden to hidden (column-parallel, its output
// gathered over the tensor-parallel ranks before the block), and, after the
// block, the shared LM head and a loss again.
void mtp_module(Phase& p, const ModelSpec& m, const Dims& d, const ShardShape& sh) {
  p.ops.push_back(make_elementwise("mtp.embedding", 2 * d.tokens * d.h * kAct));
  tp_leave(p, "tp.mtp.embedding", d, sh);
  p.ops.push_back(norm("mtp.norm.embedding", m, d));
  p.ops.push_back(norm("mtp.norm.hidden", m, d));
  if (sh.tp > 1 && sh.sp) {
    p.issue(
        {"tp.mtp.proj.in", CollectiveKind::all_gather, GroupKind::tp, 2 * d.tokens * d.h * kAct});
  }
  p.ops.push_back(gemm("mtp.proj", d.tokens, d.h / sh.tp, 2 * d.h, sh));
  if (sh.tp > 1) {
    p.issue({"tp.mtp.proj.out", CollectiveKind::all_gather, GroupKind::tp, d.tokens * d.h * kAct});
  }
  head_and_loss(p, true, m, d, sh);
}

}  // namespace

LayerProgram lm_head_and_loss(const ModelSpec& m, const ShardShape& sh) {
  const Dims d = dims(m, sh);
  LayerProgram lp;
  head_and_loss(lp.forward, false, m, d, sh);
  for (int k = 0; k < m.mtp_depth; ++k) mtp_module(lp.forward, m, d, sh);
  if (sh.fp8) add_fp8_casts(lp.forward, sh.fp8_recipe);  // the projections'
  Phase bwd = backward_of(lp.forward, sh.fp8_recipe);
  lp.backward = std::move(bwd);
  return lp;
}

double attended_pairs(double seq, double window) {
  if (window <= 0 || window >= seq) return seq * (seq + 1) / 2;
  return window * (window + 1) / 2 + (seq - window) * window;
}

ShardShape shard_shape(const scenario::Scenario& s) {
  ShardShape sh;
  sh.micro_batch = s.parallelism.micro_batch;
  sh.seq = s.model.seq_length;
  sh.tp = s.parallelism.tp;
  sh.sp = s.parallelism.sp && s.parallelism.tp > 1;
  sh.cp = s.parallelism.cp;
  sh.ep = s.parallelism.ep;
  sh.etp = s.parallelism.etp;
  sh.a2a_fp8 = s.training.all_to_all_precision == scenario::WirePrecision::fp8;
  sh.combine_fp8 = s.training.combine_precision == scenario::WirePrecision::fp8;
  sh.fused = s.training.fused_kernels;
  sh.fp8 = s.training.precision == scenario::Precision::fp8;
  sh.fp8_recipe = s.training.fp8_recipe;
  sh.recompute = s.parallelism.recompute;
  sh.recompute_norms_and_up = s.parallelism.recompute_norms_and_up;
  sh.recompute_moe_act = s.parallelism.recompute_moe_act;
  sh.tp_chunked = s.overlap.tp && !s.overlap.fused && sh.tp > 1 && sh.sp;
  return sh;
}

}  // namespace myriad::models
