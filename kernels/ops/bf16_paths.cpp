// The bf16 storage paths of the CPU ops: inputs widened to fp32, the fp32
// kernel run, each output rounded to bf16 once. The CUDA backend does the same
// per element, so both round the same fp32 values.
#include "kernels/ops/activation.hpp"
#include "kernels/ops/attention.hpp"
#include "kernels/ops/bf16_convert.hpp"
#include "kernels/ops/norm.hpp"

namespace myriad::kernels::ops {

void layer_norm_forward_cpu(const NormShape& s, std::span<const Bf16> x,
                            std::span<const float> gamma, std::span<const float> beta,
                            std::span<Bf16> y, std::span<float> mean, std::span<float> rstd) {
  std::vector<float> y32(y.size());
  layer_norm_forward_cpu(s, widen(x), gamma, beta, y32, mean, rstd);
  narrow(y32, y);
}

void layer_norm_backward_cpu(const NormShape& s, std::span<const Bf16> dy, std::span<const Bf16> x,
                             std::span<const float> gamma, std::span<const float> mean,
                             std::span<const float> rstd, std::span<Bf16> dx,
                             std::span<float> dgamma, std::span<float> dbeta) {
  std::vector<float> dx32(dx.size());
  layer_norm_backward_cpu(s, widen(dy), widen(x), gamma, mean, rstd, dx32, dgamma, dbeta);
  narrow(dx32, dx);
}

void rms_norm_forward_cpu(const NormShape& s, std::span<const Bf16> x, std::span<const float> gamma,
                          std::span<Bf16> y, std::span<float> rstd) {
  std::vector<float> y32(y.size());
  rms_norm_forward_cpu(s, widen(x), gamma, y32, rstd);
  narrow(y32, y);
}

void rms_norm_backward_cpu(const NormShape& s, std::span<const Bf16> dy, std::span<const Bf16> x,
                           std::span<const float> gamma, std::span<const float> rstd,
                           std::span<Bf16> dx, std::span<float> dgamma) {
  std::vector<float> dx32(dx.size());
  rms_norm_backward_cpu(s, widen(dy), widen(x), gamma, rstd, dx32, dgamma);
  narrow(dx32, dx);
}

void gelu_forward_cpu(std::span<const Bf16> x, std::span<Bf16> y) {
  std::vector<float> y32(y.size());
  gelu_forward_cpu(widen(x), y32);
  narrow(y32, y);
}

void gelu_backward_cpu(std::span<const Bf16> dy, std::span<const Bf16> x, std::span<Bf16> dx) {
  std::vector<float> dx32(dx.size());
  gelu_backward_cpu(widen(dy), widen(x), dx32);
  narrow(dx32, dx);
}

void swiglu_forward_cpu(std::span<const Bf16> gate, std::span<const Bf16> up, std::span<Bf16> y) {
  std::vector<float> y32(y.size());
  swiglu_forward_cpu(widen(gate), widen(up), y32);
  narrow(y32, y);
}

void swiglu_backward_cpu(std::span<const Bf16> dy, std::span<const Bf16> gate,
                         std::span<const Bf16> up, std::span<Bf16> dgate, std::span<Bf16> dup) {
  std::vector<float> dgate32(dgate.size());
  std::vector<float> dup32(dup.size());
  swiglu_backward_cpu(widen(dy), widen(gate), widen(up), dgate32, dup32);
  narrow(dgate32, dgate);
  narrow(dup32, dup);
}

void bias_gelu_forward_cpu(std::int64_t rows, std::int64_t cols, std::span<const Bf16> x,
                           std::span<const float> bias, std::span<Bf16> y) {
  std::vector<float> y32(y.size());
  bias_gelu_forward_cpu(rows, cols, widen(x), bias, y32);
  narrow(y32, y);
}

void bias_gelu_backward_cpu(std::int64_t rows, std::int64_t cols, std::span<const Bf16> dy,
                            std::span<const Bf16> x, std::span<const float> bias,
                            std::span<Bf16> dx, std::span<float> dbias) {
  std::vector<float> dx32(dx.size());
  bias_gelu_backward_cpu(rows, cols, widen(dy), widen(x), bias, dx32, dbias);
  narrow(dx32, dx);
}

void attention_forward_cpu(const AttentionShape& s, std::span<const Bf16> q,
                           std::span<const Bf16> k, std::span<const Bf16> v, std::span<Bf16> o,
                           std::span<float> lse) {
  std::vector<float> o32(o.size());
  attention_forward_cpu(s, widen(q), widen(k), widen(v), o32, lse);
  narrow(o32, o);
}

void attention_backward_cpu(const AttentionShape& s, std::span<const Bf16> q,
                            std::span<const Bf16> k, std::span<const Bf16> v,
                            std::span<const Bf16> o, std::span<const float> lse,
                            std::span<const Bf16> do_, const AttentionGradsBf16& grads) {
  std::vector<float> dq(grads.dq.size());
  std::vector<float> dk(grads.dk.size());
  std::vector<float> dv(grads.dv.size());
  attention_backward_cpu(s, widen(q), widen(k), widen(v), widen(o), lse, widen(do_),
                         AttentionGrads{dq, dk, dv});
  narrow(dq, grads.dq);
  narrow(dk, grads.dk);
  narrow(dv, grads.dv);
}

}  // namespace myriad::kernels::ops
