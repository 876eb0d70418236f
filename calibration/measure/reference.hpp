// Reference checks for the CPU calibration cases (cpu_cases.cpp). Each check
// recomputes a fixed sample of a kernel's outputs in double precision, straight
// from the mathematical definition in kernels/ops/*.hpp. The formulas are
// written out again here: nothing in kernels/ops is called. Each check then
// requires every output to be finite, because outputs are NaN-poisoned and one
// the kernel never wrote stays NaN.
//
// Each check returns "pass", or names the output, the index, the value found
// and the value expected. A value passes when |got - want| <= 1e-4 * scale +
// 1e-6 (1e-5 * scale + 1e-6 for the GEMM). `scale` is the size of the terms the
// value is made of (the sum of their absolute values), so fp32 rounding passes
// and a wrong formula or a wrong element does not.
//
// Samples are deterministic: first, middle and last rows, columns or elements,
// plus evenly spaced elements for element-wise kernels. Where a gradient sums
// over rows (dgamma, dbeta, attention's dk and dv), the sampled columns are
// summed over every row. Each check costs less than one run of its kernel.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/ops/attention_shape.hpp"
#include "kernels/ops/fp8_e4m3.hpp"
#include "kernels/ops/gemm_arguments.hpp"
#include "kernels/ops/moe_router.hpp"
#include "kernels/ops/norm_shape.hpp"
#include "kernels/ops/optimizer_arguments.hpp"
#include "kernels/ops/quant_shape.hpp"
#include "kernels/ops/softmax_shape.hpp"

namespace myriad::calibration::reference {

using Span = std::span<const float>;

// The indices of [0, n) that checks sample: 0, n / 2 and n - 1. With spread > 2,
// also about `spread` evenly spaced indices. Sorted, without repeats.
std::vector<std::int64_t> sample(std::int64_t n, std::int64_t spread = 2);

// Whether |got - want| <= rel * scale + 1e-6 (rel at least the tolerance in scope).
bool within(double got, double want, double scale, double rel = 1e-4);

// Loosens every check to a relative tolerance of at least `rel` while it lives,
// on this thread: bf16 storage rounds each stored value by up to 2^-8 (the CUDA
// cases' bf16 rows check at 1e-2, kBf16Tolerance).
class Tolerance {
 public:
  explicit Tolerance(double rel);
  ~Tolerance();
  Tolerance(const Tolerance&) = delete;
  Tolerance& operator=(const Tolerance&) = delete;

 private:
  double outer_;
};
inline constexpr double kBf16Tolerance = 1e-2;
// "WHERE = GOT, expected WANT".
std::string mismatch(std::string_view where, double got, double want);

struct Output {
  std::string_view name;
  Span values;
};
// "pass" when every element of every output is finite.
std::string all_finite(std::initializer_list<Output> outputs);

// c = op(a) op(b) (GemmArguments' layout), at the corners and the middle.
std::string gemm(const kernels::ops::GemmArguments& args, Span a, Span b, Span c);

// LayerNorm: y = (x - mean) * rstd * gamma + beta, with rstd = 1 / sqrt(var + eps).
std::string layer_norm_forward(const kernels::ops::NormShape& s, Span x, Span gamma, Span beta,
                               Span y, Span mean, Span rstd);
// Its gradients for upstream dy. The statistics are recomputed from x.
std::string layer_norm_backward(const kernels::ops::NormShape& s, Span dy, Span x, Span gamma,
                                Span dx, Span dgamma, Span dbeta);
// RMSNorm: y = x * rstd * gamma, with rstd = 1 / sqrt(mean(x^2) + eps).
std::string rms_norm_forward(const kernels::ops::NormShape& s, Span x, Span gamma, Span y,
                             Span rstd);
std::string rms_norm_backward(const kernels::ops::NormShape& s, Span dy, Span x, Span gamma,
                              Span dx, Span dgamma);

// GeLU, tanh approximation: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
std::string gelu_forward(Span x, Span y);
std::string gelu_backward(Span dy, Span x, Span dx);
// SwiGLU: y = silu(gate) * up, with silu(g) = g * sigmoid(g).
std::string swiglu_forward(Span gate, Span up, Span y);
std::string swiglu_backward(Span dy, Span gate, Span up, Span dgate, Span dup);

// Causal softmax per [seq, seq] matrix: y[i, j] = softmax over j <= i of
// scale * x[i, j], and 0 above the diagonal. Sampled: the first and last
// matrices, their first, middle and last rows, every column.
std::string causal_softmax_forward(const kernels::ops::SoftmaxShape& s, Span x, Span y);
// dx = scale * y * (dy - sum_j dy * y) (y is the forward's output, an input here).
std::string causal_softmax_backward(const kernels::ops::SoftmaxShape& s, Span dy, Span y, Span dx);

// Attention o = softmax(scale * q k^T, masked) v and lse (natural log-sum-exp of
// the scaled scores). The mask allows key j for query i when (not causal or j <= i)
// and (no window or |i - j| < window). The scale is 1 / sqrt(head_dim) unless the
// shape gives one. Query head h reads kv head h / (q_heads / kv_heads).
// Sampled: the first, middle and last batch, query head and query, the whole
// head_dim.
std::string attention_forward(const kernels::ops::AttentionShape& s, Span q, Span k, Span v, Span o,
                              Span lse);
// The gradients for upstream do_, from q, k, v and do_ alone (softmax
// statistics and o recomputed). dq is sampled like o. dk and dv are sampled at
// the first, middle and last key of the first, middle and last batch and kv head,
// each summed over every query of the query heads that read that kv head.
std::string attention_backward(const kernels::ops::AttentionShape& s, Span q, Span k, Span v,
                               Span do_, Span dq, Span dk, Span dv);

// One AdamW step from `before` (param, m, v) with gradient g, as found `after`:
// m' = b1 m + (1 - b1) g, v' = b2 v + (1 - b2) g^2,
// u = (m' / (1 - b1^t)) / (sqrt(v' / (1 - b2^t)) + eps),
// p' = p - lr (u + wd p), where cautious decay drops wd p unless u p > 0.
struct AdamWState {
  Span param, m, v;
};
std::string adamw_step(const kernels::ops::AdamWArguments& a, const AdamWState& before, Span grad,
                       const AdamWState& after);
// One Lion step: u = sign(b1 m + (1 - b1) g), p' = p - lr (u + decay as above),
// m' = b2 m + (1 - b2) g.
struct LionState {
  Span param, m;
};
std::string lion_step(const kernels::ops::LionArguments& a, const LionState& before, Span grad,
                      const LionState& after);

// fp8 E4M3 with group scales. Each scale is amax(group) / 448 (1 for an all-zero
// group). Each code, decoded from its bits here, is within half an E4M3 step of
// x / scale. Sampled: first, middle and last rows, every column.
std::string quantize_fp8(const kernels::ops::QuantShape& s, Span x,
                         std::span<const kernels::ops::Fp8E4M3> q, Span scales);

// Top-k routing. Every weight lies in [0, 1]. For sampled tokens: the chosen
// experts are the k most probable under softmax(logits), best first, and their
// weights are those probabilities, renormalized over the k if the shape asks.
// For every token: the slots go choice by choice (all first choices, then all
// second), tokens in order, up to each expert's capacity. The loads count the
// kept slots.
std::string route_top_k(const kernels::ops::RouterShape& s, Span logits,
                        const kernels::ops::Routing& r);
// buffer[e, slot] holds the row of the token routed there, exactly; empty slots
// hold 0. Sampled: every expert's first, middle and last slot, its last filled
// slot and its first empty one.
std::string permute_tokens(const kernels::ops::RouterShape& s, const kernels::ops::Routing& r,
                           std::int64_t hidden, Span x, Span buffer);

}  // namespace myriad::calibration::reference
