// The primitives a layer's program is built of: the shapes its ops derive from
// on one rank, GEMMs and their fp8 casts, tensor-parallel entries and exits,
// norms and residual adds (layer_program.cpp composes them into blocks).
#pragma once

#include <algorithm>
#include <string_view>

#include "models/transformer/layer_program.hpp"

namespace myriad::models::layer_ops {

using scenario::Activation;
using scenario::ModelSpec;
using scenario::Norm;

inline constexpr double kAct = 2;  // bytes of a bf16 activation

// The shapes every op of a layer derives from, on this rank.
struct Dims {
  double tokens;       // T: tokens of the micro-batch this rank computes on (per CP rank)
  double norm_tokens;  // tokens of norms and residuals: T / tp with sequence parallelism
  double h, heads, head_dim, kv_local, q_local, f, f_in;
  double v_dim;  // a head's value width: head_dim but with MLA
  int tp;
};

inline Dims dims(const ModelSpec& m, const ShardShape& sh) {
  Dims d{};
  d.tokens = sh.tokens();
  d.tp = sh.tp;
  d.norm_tokens = sh.sp ? d.tokens / sh.tp : d.tokens;
  d.h = m.hidden;
  d.heads = m.heads;
  d.head_dim = m.head_width();
  d.q_local = static_cast<double>(m.heads) / sh.tp;
  // Key/value heads are split over TP, or replicated when fewer than TP ranks.
  d.kv_local = std::max(1.0, static_cast<double>(m.kv_heads) / sh.tp);
  d.v_dim = m.value_width();
  d.f = m.ffn_hidden;
  d.f_in = m.activation == Activation::swiglu ? 2.0 * m.ffn_hidden : m.ffn_hidden;
  return d;
}

// fp8 GEMMs (Transformer Engine) take their inputs in fp8: one cast-transpose
// kernel per GEMM reads the bf16 input and writes it in fp8 twice (as is, and
// transposed for the weight gradient): 4 bytes an element; backward does the same
// for the output gradient. With delayed scaling the scale is the amax history's and
// the cast takes the amax on the way; with current scaling the tensor's own amax
// comes first, a second read of its 2 bytes ("quantization ... requires reading
// the tensor twice", Transformer Engine's FP8 Current Scaling guide); blockwise
// scaling takes each block's amax in the one read and writes a 4-byte scale per
// 128 values for each of the two copies. Left out: weights, cast once per step
// rather than per micro-batch, and the per-step amax history and scale update (a
// few kernels over a few numbers per tensor).
constexpr std::string_view kFp8Cast = "fp8.cast";

inline double fp8_cast_bytes(scenario::Fp8Recipe recipe) {
  switch (recipe) {
    case scenario::Fp8Recipe::current:
      return 4 + kAct;
    case scenario::Fp8Recipe::blockwise:
      return 4 + 2 * 4.0 / 128;
    case scenario::Fp8Recipe::delayed:
      break;
  }
  return 4;
}

// Kernels one fp8 quantization of a tensor runs. Per-tensor current scaling:
// zero the amax, reduce it, turn it into a scale, cast (Transformer Engine's
// Float8CurrentScalingQuantizer::quantize_impl, transformer_engine/pytorch/csrc/
// quantizer.cpp, v2.8); delayed scaling casts with the scale kept from earlier
// steps and records the amax in the same kernel, and block scaling computes each
// block's scale inside its cast kernel: one.
inline double fp8_quantize_kernels(scenario::Fp8Recipe recipe) {
  return recipe == scenario::Fp8Recipe::current ? 4 : 1;
}

// An fp8 GEMM's input cast, before it: one tensor per GEMM kernel (a grouped
// GEMM's experts are quantized one by one: Transformer Engine's split_quantize).
inline Op fp8_cast(const Op& gemm, double bytes, scenario::Fp8Recipe recipe) {
  Op cast = make_elementwise(kFp8Cast, bytes);
  cast.launches = fp8_quantize_kernels(recipe) * gemm.launches;
  return cast;
}

// `quantized`: a GEMM whose input arrives in fp8 already (none when empty). The
// phase's collectives and host sync keep their places among the ops.
inline void add_fp8_casts(Phase& p, scenario::Fp8Recipe recipe, std::string_view quantized = {}) {
  const double cast_bytes = fp8_cast_bytes(recipe);
  std::vector<Op> ops;
  ops.reserve(2 * p.ops.size());
  std::vector<int> moved(p.ops.size() + 1);  // old op index -> new, for what sits before it
  for (std::size_t i = 0; i < p.ops.size(); ++i) {
    const Op& op = p.ops[i];
    moved[i] = static_cast<int>(ops.size());
    if (op.cls == OpClass::gemm && op.fp8 && (quantized.empty() || op.name != quantized)) {
      ops.push_back(fp8_cast(op, cast_bytes * op.gemm.m * op.gemm.k * op.gemm.batch, recipe));
    }
    ops.push_back(op);
  }
  moved[p.ops.size()] = static_cast<int>(ops.size());
  for (Collective& c : p.comms) {
    if (c.after_ops >= 0) c.after_ops = moved[static_cast<std::size_t>(c.after_ops)];
  }
  if (p.host_sync >= 0) p.host_sync = moved[static_cast<std::size_t>(p.host_sync)];
  p.ops = std::move(ops);
}

inline Op gemm(std::string_view name, double m, double n, double k, const ShardShape& sh,
               double batch = 1) {
  return make_gemm(name, m, n, k, batch, sh.fp8 ? 1.0 : kAct, sh.fp8);
}

// Under chunk-by-chunk tensor-parallel overlap, the GEMMs its collectives overlap run
// in pieces along the tokens, as Transformer Engine's userbuffers run them in
// NVIDIA's H100 recipes (sim/cost/overlap_share.hpp has the source): the GEMM after an
// all-gather (qkv, fc1) and the data gradient before the backward's all-gather (proj,
// fc2) by ring exchange, one piece per tp rank; the GEMM before a reduce-scatter
// (proj, fc2) pipelined in 4 splits. The other backward GEMMs overlap bulk, whole.
constexpr double kPipelinedSplits = 4;

inline void tp_pieces(Op& op, const ShardShape& sh, bool gathers_before) {
  if (!sh.tp_chunked) return;
  if (gathers_before) {
    op.pieces = sh.tp;
  } else {
    op.pieces = kPipelinedSplits;
    op.dgrad_pieces = sh.tp;
  }
}

// Tensor-parallel collective entering (`gather`) or leaving a parallel region.
inline void tp_enter(Phase& p, std::string_view name, const Dims& d, const ShardShape& sh) {
  if (sh.tp > 1 && sh.sp) {
    p.issue({name, CollectiveKind::all_gather, GroupKind::tp, d.tokens * d.h * kAct});
  }
}

inline void tp_leave(Phase& p, std::string_view name, const Dims& d, const ShardShape& sh) {
  if (sh.tp == 1) return;
  const auto kind = sh.sp ? CollectiveKind::reduce_scatter : CollectiveKind::all_reduce;
  p.issue({name, kind, GroupKind::tp, d.tokens * d.h * kAct});
}

// The kernel families calibration measures ("norm.rms.fwd", "activation.swiglu.bwd").
inline std::string_view norm_kernel(const ModelSpec& m) {
  return m.norm == Norm::rmsnorm ? "norm.rms" : "norm.layer";
}

inline std::string_view activation_kernel(const ModelSpec& m) {
  switch (m.activation) {
    case Activation::swiglu:
      return "activation.swiglu";
    case Activation::relu:
      return "activation.relu";
    case Activation::gelu:
      break;
  }
  return "activation.gelu";
}

inline Op norm(std::string_view name, const ModelSpec& m, const Dims& d) {
  // Read the input, write the output; statistics are negligible. RMSNorm skips
  // the mean (and has no bias): fewer FLOPs for the same traffic.
  const double flops_per_element = m.norm == Norm::rmsnorm ? 4 : 8;
  Op op = make_elementwise(name, 2 * d.norm_tokens * d.h * kAct,
                           flops_per_element * d.norm_tokens * d.h);
  op.kernel = norm_kernel(m);
  return op;
}

inline Op residual(std::string_view name, const ModelSpec& m, const Dims& d) {
  const double elements = d.norm_tokens * d.h;
  if (m.dropout > 0) {
    // Dropout (mask written) and residual add: read two, write one and the mask.
    return make_elementwise(name, 3.5 * elements * kAct, 3 * elements);
  }
  // The add alone: read two, write one; backward adds the branch's input gradient
  // to the residual stream's, the same traffic.
  Op op = make_elementwise(name, 3 * elements * kAct, elements);
  op.backward_bytes = 3 * elements * kAct;
  return op;
}

}  // namespace myriad::models::layer_ops
