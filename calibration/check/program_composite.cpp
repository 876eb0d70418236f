// The layer the model describes, run op by op on the CPU kernels
// (composite.hpp, program_composite).
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "calibration/check/composite.hpp"
#include "kernels/ops/activation.hpp"
#include "kernels/ops/attention.hpp"
#include "kernels/ops/gemm.hpp"
#include "kernels/ops/norm.hpp"
#include "kernels/ops/reduce.hpp"

namespace myriad::calibration {
namespace {

namespace ops = kernels::ops;
using Floats = std::vector<float>;
using Buffer = std::shared_ptr<Floats>;

std::size_t count(double n) {
  if (n < 1 || n != std::floor(n)) {
    throw std::invalid_argument(
        fmt::format("a layer-program composite needs whole sizes, got {}", n));
  }
  return static_cast<std::size_t>(n);
}

// What the program's ops share as they run: buffers, and the tensors a backward
// op reads from its forward (a norm's statistics, the attention's output and
// log-sum-exp). Buffers are shared by size, as a layer's tensors are reused
// from one op to the next: the j-th input (or output) of n floats an op asks for
// is the same buffer for every op, so that one op's tensors never alias each
// other and the working set stays a layer's, not one fresh buffer per operand
// (which ran the GPT-like layer 19 % slower than its hand-written twin, whose
// ops pass their tensors along). Inputs are never written: values cannot grow
// from run to run through chains of GEMMs.
struct Program {
  std::mt19937 gen{7};
  std::vector<std::function<void()>> kernels;
  std::map<std::string, std::vector<Buffer>, std::less<>> saved;
  struct Pool {
    std::map<std::size_t, std::vector<Buffer>> buffers;  // by size
    std::map<std::size_t, std::size_t> taken;            // by the op being built, per size
  };
  Pool inputs;
  Pool outputs;

  void next_op() {
    inputs.taken.clear();
    outputs.taken.clear();
  }
  Buffer take(Pool& pool, std::size_t n) {
    auto& buffers = pool.buffers[n];
    const std::size_t j = pool.taken[n]++;
    if (j == buffers.size()) {
      std::uniform_real_distribution<float> dist(-0.1F, 0.1F);
      auto b = std::make_shared<Floats>(n);
      for (auto& x : *b) x = dist(gen);
      buffers.push_back(b);
    }
    return buffers[j];
  }
  Buffer input(std::size_t n) { return take(inputs, n); }
  Buffer output(std::size_t n) { return take(outputs, n); }
};

// The shapes the ops derive from: one rank (tp, cp 1), as layer_program.cpp's.
struct Shape {
  std::int64_t tokens, hidden, ffn;
  ops::AttentionShape attention;
};

Shape shape_of(const models::scenario::ModelSpec& m, const models::ShardShape& sh) {
  Shape s{};
  s.tokens = static_cast<std::int64_t>(count(sh.tokens()));
  s.hidden = m.hidden;
  s.ffn = m.ffn_hidden;
  s.attention.batch = static_cast<std::int64_t>(count(sh.micro_batch));
  s.attention.q_heads = m.heads;
  s.attention.kv_heads = m.kv_heads;
  s.attention.seq = static_cast<std::int64_t>(count(sh.seq));
  s.attention.head_dim = static_cast<int>(m.head_width());
  s.attention.window = m.sliding_window;
  return s;
}

// A GEMM as a layer runs it: forward x W^T (nt), then per backward pair the
// input gradient (nn) and the weight gradient (tn).
void add_gemm(Program& p, const models::Op& op, ops::GemmLayout layout) {
  const ops::GemmArguments args{static_cast<std::int64_t>(count(op.gemm.m)),
                                static_cast<std::int64_t>(count(op.gemm.n)),
                                static_cast<std::int64_t>(count(op.gemm.k)), layout};
  const auto m = static_cast<std::size_t>(args.m);
  const auto n = static_cast<std::size_t>(args.n);
  const auto k = static_cast<std::size_t>(args.k);
  const std::size_t batch = count(op.gemm.batch);
  auto a = p.input(m * k);
  auto b = p.input(k * n);
  auto c = p.output(m * n);
  p.kernels.emplace_back([=] {
    for (std::size_t i = 0; i < batch; ++i) ops::gemm_cpu(args, *a, *b, *c);
  });
}

void add_norm(Program& p, const models::Op& op, const Shape& s) {
  const ops::NormShape norm{s.tokens, s.hidden};
  const std::size_t n = count(static_cast<double>(s.tokens * s.hidden));
  const std::size_t rows = count(static_cast<double>(s.tokens));
  const std::size_t h = count(static_cast<double>(s.hidden));
  const bool rms = op.kernel == "norm.rms";
  if (!op.backward) {
    auto x = p.input(n);
    auto gamma = p.input(h);
    auto beta = p.input(h);
    auto y = p.output(n);
    auto mean = p.output(rows);
    auto rstd = p.output(rows);
    p.saved[std::string(op.name)] = {x, gamma, beta, mean, rstd};
    p.kernels.emplace_back([=] {
      if (rms) {
        ops::rms_norm_forward_cpu(norm, *x, *gamma, *y, *rstd);
        std::fill(mean->begin(), mean->end(), 0.0F);
      } else {
        ops::layer_norm_forward_cpu(norm, *x, *gamma, *beta, *y, *mean, *rstd);
      }
    });
    return;
  }
  const auto it = p.saved.find(op.name);
  if (it == p.saved.end()) {
    throw std::invalid_argument(
        fmt::format("the layer program's '{}' backward has no forward", op.name));
  }
  const std::vector<Buffer> f = it->second;  // x, gamma, beta, mean, rstd
  auto dy = p.input(n);
  auto dx = p.output(n);
  auto dgamma = p.output(h);
  auto dbeta = p.output(h);
  p.kernels.emplace_back([=] {
    if (rms) {
      ops::rms_norm_backward_cpu(norm, *dy, *f[0], *f[1], *f[4], *dx, *dgamma);
      std::fill(dbeta->begin(), dbeta->end(), 0.0F);
    } else {
      ops::layer_norm_backward_cpu(norm, *dy, *f[0], *f[1], *f[3], *f[4], *dx, *dgamma, *dbeta);
    }
  });
}

void add_activation(Program& p, const models::Op& op, const Shape& s) {
  const std::size_t n = count(static_cast<double>(s.tokens * s.ffn));
  const bool swiglu = op.kernel == "activation.swiglu";
  if (!swiglu && op.kernel != "activation.gelu") {
    throw std::invalid_argument(
        fmt::format("a layer-program composite runs GeLU and SwiGLU, not {}", op.kernel));
  }
  auto gate = p.input(n);
  auto up = p.input(n);
  auto dy = p.input(n);
  auto out = p.output(n);
  auto out2 = p.output(n);
  if (!op.backward) {
    p.kernels.emplace_back([=] {
      if (swiglu) {
        ops::swiglu_forward_cpu(*gate, *up, *out);
        std::fill(out2->begin(), out2->end(), 0.0F);
      } else {
        ops::gelu_forward_cpu(*gate, *out);
        std::fill(out2->begin(), out2->end(), 0.0F);
      }
    });
  } else {
    p.kernels.emplace_back([=] {
      if (swiglu) {
        ops::swiglu_backward_cpu(*dy, *gate, *up, *out, *out2);
      } else {
        ops::gelu_backward_cpu(*dy, *gate, *out);
        std::fill(out2->begin(), out2->end(), 0.0F);
      }
    });
  }
}

void add_attention(Program& p, const models::Op& op, const Shape& s) {
  const ops::AttentionShape a = s.attention;
  const auto q_n = count(static_cast<double>(a.batch * a.q_heads * a.seq * a.head_dim));
  const auto kv_n = count(static_cast<double>(a.batch * a.kv_heads * a.seq * a.head_dim));
  const auto lse_n = count(static_cast<double>(a.batch * a.q_heads * a.seq));
  if (!op.backward) {
    auto q = p.input(q_n);
    auto k = p.input(kv_n);
    auto v = p.input(kv_n);
    auto o = p.output(q_n);
    auto lse = p.output(lse_n);
    p.saved["attention"] = {q, k, v, o, lse};
    p.kernels.emplace_back([=] { ops::attention_forward_cpu(a, *q, *k, *v, *o, *lse); });
    return;
  }
  const auto it = p.saved.find("attention");
  if (it == p.saved.end()) {
    throw std::invalid_argument("the layer program's attention backward has no forward");
  }
  const std::vector<Buffer> f = it->second;  // q, k, v, o, lse
  auto d_o = p.input(q_n);
  auto dq = p.output(q_n);
  auto dk = p.output(kv_n);
  auto dv = p.output(kv_n);
  p.kernels.emplace_back([=] {
    ops::attention_backward_cpu(a, *f[0], *f[1], *f[2], *f[3], *f[4], *d_o, {*dq, *dk, *dv});
  });
}

// The residual add (dropout off): one tensor added into another. (Run after
// run the sums grow by a tenth at most each time: they stay finite.)
void add_residual(Program& p, const Shape& s) {
  const std::size_t n = count(static_cast<double>(s.tokens * s.hidden));
  auto dst = p.output(n);
  auto src = p.input(n);
  p.kernels.emplace_back([=] { ops::reduce_cpu(ops::ReduceOp::sum, *dst, *src); });
}

std::shared_ptr<Program> build(const std::vector<models::Op>& program, const Shape& s) {
  auto p = std::make_shared<Program>();
  bool weight_gradient = false;  // a backward GEMM pair: input gradient, then weight gradient
  for (const models::Op& op : program) {
    p->next_op();
    switch (op.cls) {
      case models::OpClass::gemm:
        if (!op.backward) {
          add_gemm(*p, op, ops::GemmLayout::nt);
        } else {
          add_gemm(*p, op, weight_gradient ? ops::GemmLayout::tn : ops::GemmLayout::nn);
          weight_gradient = !weight_gradient;
        }
        continue;
      case models::OpClass::attention:
        add_attention(*p, op, s);
        continue;
      case models::OpClass::elementwise:
        if (op.kernel == "norm.layer" || op.kernel == "norm.rms") {
          add_norm(*p, op, s);
          continue;
        }
        if (op.name == "activation" || op.name == "expert.activation") {
          add_activation(*p, op, s);
          continue;
        }
        if (op.name.starts_with("residual")) {
          add_residual(*p, s);
          continue;
        }
        break;
      case models::OpClass::optimizer:
        break;
    }
    throw std::invalid_argument(fmt::format(
        "the layer program's op '{}' has no CPU kernel in the calibration composite", op.name));
  }
  return p;
}

}  // namespace

std::vector<models::Op> program_ops(const models::scenario::ModelSpec& m,
                                    const models::ShardShape& sh) {
  if (sh.tp != 1 || sh.cp != 1 || sh.ep != 1 || !sh.fused || sh.fp8 ||
      sh.recompute != models::scenario::Recompute::none) {
    throw std::invalid_argument(
        "a layer-program composite runs one rank's layer: tp, cp and ep 1, fused attention, "
        "bf16 GEMMs, no recomputation");
  }
  if (m.windowed_share() > 0 && m.windowed_share() < 1) {
    throw std::invalid_argument(
        "a layer-program composite runs one layer: a stack of windowed and full-attention "
        "layers (model.full_attention_every) is priced as their average, which no single "
        "layer runs");
  }
  const models::LayerProgram layer = models::transformer_layer(m, sh);
  std::vector<models::Op> ops = layer.forward.ops;
  ops.insert(ops.end(), layer.backward.ops.begin(), layer.backward.ops.end());
  // The CPU runs them in fp32: the model's bf16 traffic, twice over.
  for (models::Op& op : ops) {
    op.bytes *= 2;
    op.backward_bytes *= 2;
  }
  return ops;
}

Composite program_composite(const models::scenario::ModelSpec& m, const models::ShardShape& sh) {
  const std::vector<models::Op> predicted = program_ops(m, sh);
  const Shape s = shape_of(m, sh);
  (void)build(predicted, s);  // refuses an op it cannot run now, not at measurement
  Composite c;
  c.row.name =
      fmt::format("layer program {} {} seq={} hidden={} heads={} kv_heads={} ffn={} batch={}",
                  m.norm == models::scenario::Norm::rmsnorm ? "rmsnorm" : "layernorm",
                  m.activation == models::scenario::Activation::swiglu ? "swiglu" : "gelu", sh.seq,
                  m.hidden, m.heads, m.kv_heads, m.ffn_hidden, sh.micro_batch);
  c.row.kind = RowKind::composite;
  c.row.family = "composite";
  c.row.arguments = {{"from", "models/transformer/layer_program"},
                     {"batch", sh.micro_batch},
                     {"seq", sh.seq},
                     {"hidden", m.hidden},
                     {"heads", m.heads},
                     {"kv_heads", m.kv_heads},
                     {"ffn", m.ffn_hidden},
                     {"dtype", "fp32"}};
  c.build = [predicted, s] {
    auto program = build(predicted, s);
    CompositeWork w;
    w.ops = predicted;
    w.instance.run = [program] {
      for (const auto& k : program->kernels) k();
    };
    w.instance.check = [program] {
      for (const auto& k : program->kernels) k();
      for (const auto& [size, buffers] : program->outputs.buffers) {
        for (const auto& b : buffers) {
          for (const float x : *b) {
            if (!std::isfinite(x)) return std::string("a tensor of the layer is not finite");
          }
        }
      }
      return std::string("pass");
    };
    return w;
  };
  c.describe = [predicted] {
    CompositeWork w;
    w.ops = predicted;
    return w;
  };
  return c;
}

}  // namespace myriad::calibration
