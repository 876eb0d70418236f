// The CPU calibration grid: every kernel of kernels/ops, and the collective
// schedules of kernels/collectives on the thread executor (cpu_collective_cases).
// Inputs are fresh random numbers (a fixed seed per case, so runs are
// repeatable), on cache-line boundaries (line_aligned.hpp); outputs are poisoned
// with NaN before the first run so that a kernel that stops writing fails its
// check. Each check compares a sample of the outputs with a double-precision
// reference (reference.hpp) and requires all of them finite.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <thread>

#include "calibration/measure/cases.hpp"
#include "calibration/measure/cpu_collective_cases.hpp"
#include "calibration/measure/line_aligned.hpp"
#include "calibration/measure/reference.hpp"
#include "kernels/ops/activation.hpp"
#include "kernels/ops/attention.hpp"
#include "kernels/ops/causal_softmax.hpp"
#include "kernels/ops/gemm.hpp"
#include "kernels/ops/moe_router.hpp"
#include "kernels/ops/norm.hpp"
#include "kernels/ops/optimizer.hpp"
#include "kernels/ops/quantize.hpp"
#include "kernels/ops/reduce.hpp"

namespace myriad::calibration {
namespace {

namespace ops = kernels::ops;
using Floats = LineAlignedFloats;  // line_aligned.hpp: why

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Floats random_floats(std::size_t n, std::uint32_t seed) {
  const std::vector<float> values = uniform_floats(n, seed);
  return {values.begin(), values.end()};
}

std::size_t count(std::int64_t a, std::int64_t b = 1, std::int64_t c = 1) {
  return static_cast<std::size_t>(a) * static_cast<std::size_t>(b) * static_cast<std::size_t>(c);
}

Case gemm_case(ops::GemmLayout layout, std::int64_t m, std::int64_t n, std::int64_t k,
               bool ceiling = false) {
  const ops::GemmArguments args{m, n, k, layout};
  Case c;
  c.row = kernel_row(
      fmt::format("{}gemm.{} m={} n={} k={}", ceiling ? "ceiling." : "", layout_name(layout), m, n,
                  k),
      "gemm", ops::gemm_op(args, 4), false,
      {{"m", m}, {"n", n}, {"k", k}, {"layout", layout_name(layout)}, {"dtype", "fp32"}});
  if (ceiling) c.row.kind = RowKind::ceiling;
  c.prepare = [args] {
    auto a = std::make_shared<Floats>(random_floats(count(args.m, args.k), 1));
    auto b = std::make_shared<Floats>(random_floats(count(args.k, args.n), 2));
    auto out = std::make_shared<Floats>(count(args.m, args.n), kNaN);
    Instance inst;
    inst.run = [=] { ops::gemm_cpu(args, *a, *b, *out); };
    inst.check = [=] {
      ops::gemm_cpu(args, *a, *b, *out);
      // Corners and the middle against a double-precision dot product.
      return reference::gemm(args, *a, *b, *out);
    };
    return inst;
  };
  return c;
}

// A GEMM of the grid on `threads` threads at once, each on its own buffers: how
// much ranks that share this host slow each other. A shared virtual machine can
// give two threads much less than twice one thread's rate (measured here,
// 2026-11-29: 1.05-1.33x slower each, varying by the hour), and the check's
// data-parallel step runs its ranks as threads, so its prediction needs this.
// The shape is the ceiling GEMM's (a 256x1024x256 GEMM, nearer the layers',
// slowed 1.3-1.8x where the layers slowed 1.0-1.3x, over-predicting the step
// by 9-22%; the ceiling's 1.05-1.3x came within 3-15%). Timed by the host
// clock per run of all threads; its flops are one thread's.
Case concurrent_gemm_case(int threads, std::int64_t m, std::int64_t n, std::int64_t k) {
  const ops::GemmArguments args{m, n, k, ops::GemmLayout::nn};
  Case c;
  c.row = kernel_row(
      fmt::format("gemm.nn.concurrent threads={} m={} n={} k={}", threads, m, n, k),
      "gemm.concurrent", ops::gemm_op(args, 4), false,
      {{"m", m}, {"n", n}, {"k", k}, {"layout", "nn"}, {"dtype", "fp32"}, {"threads", threads}});
  c.row.kind = RowKind::ceiling;
  c.prepare = [args, threads] {
    struct Buffers {
      Floats a, b, out;
    };
    auto per_thread = std::make_shared<std::vector<Buffers>>();
    for (int t = 0; t < threads; ++t) {
      const auto seed = static_cast<std::uint32_t>(2 * t + 1);
      per_thread->push_back({random_floats(count(args.m, args.k), seed),
                             random_floats(count(args.k, args.n), seed + 1),
                             Floats(count(args.m, args.n), kNaN)});
    }
    Instance inst;
    inst.run = [args, per_thread] {
      std::vector<std::thread> running;
      running.reserve(per_thread->size());
      for (Buffers& b : *per_thread) {
        running.emplace_back([&args, &b] { ops::gemm_cpu(args, b.a, b.b, b.out); });
      }
      for (auto& t : running) t.join();
    };
    // Timed by the host clock around whole runs, like a device's events.
    inst.timed = [run = inst.run](int iterations) {
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < iterations; ++i) run();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    inst.check = [args, per_thread] {
      // Every thread computed the same product of its own inputs as one thread
      // would, and that product is right.
      for (const Buffers& b : *per_thread) {
        Floats alone(b.out.size(), kNaN);
        ops::gemm_cpu(args, b.a, b.b, alone);
        if (alone != b.out)
          return std::string("a concurrent GEMM differs from the same GEMM alone");
        std::string why = reference::gemm(args, b.a, b.b, b.out);
        if (why != "pass") return why;
      }
      return std::string("pass");
    };
    return inst;
  };
  return c;
}

Case copy_case(std::int64_t floats, bool ceiling = false) {
  Case c;
  const models::Op op = models::make_elementwise("copy", 2.0 * 4.0 * static_cast<double>(floats));
  c.row = kernel_row(fmt::format("{}copy bytes={}", ceiling ? "ceiling." : "", 4 * floats), "copy",
                     op, false, {{"bytes", 4 * floats}});
  if (ceiling) c.row.kind = RowKind::ceiling;
  c.prepare = [floats] {
    auto src = std::make_shared<Floats>(random_floats(count(floats), 3));
    auto dst = std::make_shared<Floats>(count(floats), kNaN);
    Instance inst;
    inst.run = [=] { std::memcpy(dst->data(), src->data(), src->size() * sizeof(float)); };
    inst.check = [=] {
      inst.run();
      return *dst == *src ? std::string("pass") : std::string("copy differs from its source");
    };
    return inst;
  };
  return c;
}

Case norm_case(bool rms, bool backward, std::int64_t rows, std::int64_t hidden) {
  const ops::NormShape s{rows, hidden};
  Case c;
  const models::Op op = rms ? ops::rms_norm_op(s, 4) : ops::layer_norm_op(s, 4);
  c.row = kernel_row(fmt::format("{}.{} rows={} hidden={}", rms ? "rms_norm" : "layer_norm",
                                 backward ? "bwd" : "fwd", rows, hidden),
                     fmt::format("norm.{}.{}", rms ? "rms" : "layer", backward ? "bwd" : "fwd"), op,
                     backward, {{"rows", rows}, {"hidden", hidden}, {"dtype", "fp32"}});
  c.prepare = [s, rms, backward] {
    auto x = std::make_shared<Floats>(random_floats(count(s.rows, s.hidden), 4));
    auto gamma = std::make_shared<Floats>(random_floats(count(s.hidden), 5));
    auto beta = std::make_shared<Floats>(random_floats(count(s.hidden), 6));
    auto y = std::make_shared<Floats>(x->size(), kNaN);
    auto mean = std::make_shared<Floats>(count(s.rows), kNaN);
    auto rstd = std::make_shared<Floats>(count(s.rows), kNaN);
    auto dy = std::make_shared<Floats>(random_floats(x->size(), 7));
    auto dx = std::make_shared<Floats>(x->size(), kNaN);
    auto dgamma = std::make_shared<Floats>(count(s.hidden), kNaN);
    auto dbeta = std::make_shared<Floats>(count(s.hidden), kNaN);
    auto forward = [=] {
      if (rms) {
        ops::rms_norm_forward_cpu(s, *x, *gamma, *y, *rstd);
      } else {
        ops::layer_norm_forward_cpu(s, *x, *gamma, *beta, *y, *mean, *rstd);
      }
    };
    forward();  // the backward reads the saved statistics
    Instance inst;
    if (!backward) {
      inst.run = forward;
      inst.check = [=] {
        forward();
        return rms ? reference::rms_norm_forward(s, *x, *gamma, *y, *rstd)
                   : reference::layer_norm_forward(s, *x, *gamma, *beta, *y, *mean, *rstd);
      };
      return inst;
    }
    inst.run = [=] {
      if (rms) {
        ops::rms_norm_backward_cpu(s, *dy, *x, *gamma, *rstd, *dx, *dgamma);
      } else {
        ops::layer_norm_backward_cpu(s, *dy, *x, *gamma, *mean, *rstd, *dx, *dgamma, *dbeta);
      }
    };
    inst.check = [=] {
      inst.run();
      return rms ? reference::rms_norm_backward(s, *dy, *x, *gamma, *dx, *dgamma)
                 : reference::layer_norm_backward(s, *dy, *x, *gamma, *dx, *dgamma, *dbeta);
    };
    return inst;
  };
  return c;
}

Case activation_case(bool swiglu, bool backward, std::int64_t n) {
  Case c;
  const models::Op op = swiglu ? ops::swiglu_op(n, 4) : ops::gelu_op(n, 4);
  c.row = kernel_row(
      fmt::format("{}.{} n={}", swiglu ? "swiglu" : "gelu", backward ? "bwd" : "fwd", n),
      fmt::format("activation.{}.{}", swiglu ? "swiglu" : "gelu", backward ? "bwd" : "fwd"), op,
      backward, {{"n", n}, {"dtype", "fp32"}});
  c.prepare = [swiglu, backward, n] {
    auto x = std::make_shared<Floats>(random_floats(count(n), 8));
    auto up = std::make_shared<Floats>(random_floats(count(n), 9));
    auto dy = std::make_shared<Floats>(random_floats(count(n), 10));
    auto y = std::make_shared<Floats>(count(n), kNaN);
    auto dup = std::make_shared<Floats>(count(n), kNaN);
    Instance inst;
    if (swiglu) {
      inst.run =
          backward
              ? std::function<void()>([=] { ops::swiglu_backward_cpu(*dy, *x, *up, *y, *dup); })
              : std::function<void()>([=] { ops::swiglu_forward_cpu(*x, *up, *y); });
    } else {
      inst.run = backward ? std::function<void()>([=] { ops::gelu_backward_cpu(*dy, *x, *y); })
                          : std::function<void()>([=] { ops::gelu_forward_cpu(*x, *y); });
    }
    inst.check = [=, run = inst.run] {
      run();
      if (swiglu) {  // the backward writes dgate into y
        return backward ? reference::swiglu_backward(*dy, *x, *up, *y, *dup)
                        : reference::swiglu_forward(*x, *up, *y);
      }
      return backward ? reference::gelu_backward(*dy, *x, *y) : reference::gelu_forward(*x, *y);
    };
    return inst;
  };
  return c;
}

Case softmax_case(bool backward, std::int64_t matrices, std::int64_t seq) {
  const ops::SoftmaxShape s{matrices, seq, 0.125F};
  Case c;
  c.row = kernel_row(
      fmt::format("causal_softmax.{} matrices={} seq={}", backward ? "bwd" : "fwd", matrices, seq),
      backward ? "softmax.causal.bwd" : "softmax.causal.fwd", ops::causal_softmax_op(s, 4),
      backward, {{"matrices", matrices}, {"seq", seq}, {"dtype", "fp32"}});
  c.prepare = [s, backward] {
    const std::size_t n = count(s.matrices, s.seq, s.seq);
    auto x = std::make_shared<Floats>(random_floats(n, 11));
    auto y = std::make_shared<Floats>(n, kNaN);
    auto dy = std::make_shared<Floats>(random_floats(n, 12));
    auto dx = std::make_shared<Floats>(n, kNaN);
    ops::causal_softmax_forward_cpu(s, *x, *y);
    Instance inst;
    if (backward) {
      inst.run = [=] { ops::causal_softmax_backward_cpu(s, *dy, *y, *dx); };
      inst.check = [=] {
        ops::causal_softmax_backward_cpu(s, *dy, *y, *dx);
        return reference::causal_softmax_backward(s, *dy, *y, *dx);
      };
    } else {
      inst.run = [=] { ops::causal_softmax_forward_cpu(s, *x, *y); };
      inst.check = [=] {
        ops::causal_softmax_forward_cpu(s, *x, *y);
        return reference::causal_softmax_forward(s, *x, *y);
      };
    }
    return inst;
  };
  return c;
}

Case attention_case(bool backward, std::int64_t heads, std::int64_t seq, std::int64_t head_dim) {
  const ops::AttentionShape s = grid_attention_shape(heads, seq, head_dim);
  models::Op op = ops::attention_op(s, 4);
  if (backward) op = models::attention_backward_of(op);
  Case c;
  c.row = kernel_row(fmt::format("attention.{} heads={} seq={} head_dim={} causal",
                                 backward ? "bwd" : "fwd", heads, seq, head_dim),
                     "attention", op, backward, grid_attention_arguments(s, "fp32"));
  c.prepare = [s, backward] {
    const std::size_t n = count(s.q_heads, s.seq, s.head_dim);
    auto q = std::make_shared<Floats>(random_floats(n, 13));
    auto k = std::make_shared<Floats>(random_floats(n, 14));
    auto v = std::make_shared<Floats>(random_floats(n, 15));
    auto o = std::make_shared<Floats>(n, kNaN);
    auto lse = std::make_shared<Floats>(count(s.q_heads, s.seq), kNaN);
    auto d_o = std::make_shared<Floats>(random_floats(n, 16));
    auto dq = std::make_shared<Floats>(n, kNaN);
    auto dk = std::make_shared<Floats>(n, kNaN);
    auto dv = std::make_shared<Floats>(n, kNaN);
    ops::attention_forward_cpu(s, *q, *k, *v, *o, *lse);
    Instance inst;
    if (backward) {
      inst.run = [=] {
        ops::attention_backward_cpu(s, *q, *k, *v, *o, *lse, *d_o, {*dq, *dk, *dv});
      };
      inst.check = [=, run = inst.run] {
        run();
        return reference::attention_backward(s, *q, *k, *v, *d_o, *dq, *dk, *dv);
      };
    } else {
      inst.run = [=] { ops::attention_forward_cpu(s, *q, *k, *v, *o, *lse); };
      inst.check = [=, run = inst.run] {
        run();
        return reference::attention_forward(s, *q, *k, *v, *o, *lse);
      };
    }
    return inst;
  };
  return c;
}

Case optimizer_case(bool lion, std::int64_t n) {
  Case c;
  c.row = kernel_row(fmt::format("{} n={}", lion ? "lion" : "adamw", n),
                     lion ? "optimizer.lion" : "optimizer.adamw",
                     lion ? ops::lion_op(n) : ops::adamw_op(n), false,
                     {{"n", n}, {"dtype", "fp32"}, {"cautious_decay", true}});
  c.prepare = [lion, n] {
    auto p = std::make_shared<Floats>(random_floats(count(n), 17));
    auto g = std::make_shared<Floats>(random_floats(count(n), 18));
    auto m = std::make_shared<Floats>(random_floats(count(n), 19));
    auto v = std::make_shared<Floats>(count(n), 0.5F);
    Instance inst;
    // The check steps once more from a copy of the state, against one step of the reference.
    if (lion) {
      ops::LionArguments a;
      a.weight_decay = 0.1F;
      a.cautious_decay = true;
      inst.run = [=] { ops::lion_step_cpu(a, *p, *g, *m); };
      inst.check = [=, run = inst.run] {
        const Floats p0 = *p;
        const Floats m0 = *m;
        run();
        return reference::lion_step(a, {p0, m0}, *g, {*p, *m});
      };
    } else {
      ops::AdamWArguments a;
      a.weight_decay = 0.1F;
      a.cautious_decay = true;
      inst.run = [=] { ops::adamw_step_cpu(a, *p, *g, *m, *v); };
      inst.check = [=, run = inst.run] {
        const Floats p0 = *p;
        const Floats m0 = *m;
        const Floats v0 = *v;
        run();
        return reference::adamw_step(a, {p0, m0, v0}, *g, {*p, *m, *v});
      };
    }
    return inst;
  };
  return c;
}

Case quantize_case(std::int64_t rows, std::int64_t cols) {
  const ops::QuantShape s{rows, cols};
  Case c;
  c.row = kernel_row(fmt::format("quantize.fp8 rows={} cols={} per_token", rows, cols),
                     "quantize.fp8", ops::quantize_fp8_op(s), false,
                     {{"rows", rows}, {"cols", cols}, {"scaling", "per_token"}, {"group", 128}});
  c.prepare = [s] {
    auto x = std::make_shared<Floats>(random_floats(count(s.rows, s.cols), 20));
    auto q = std::make_shared<std::vector<ops::Fp8E4M3>>(x->size());
    auto scales =
        std::make_shared<Floats>(static_cast<std::size_t>(ops::quant_scale_count(s)), kNaN);
    auto back = std::make_shared<Floats>(x->size(), kNaN);
    Instance inst;
    inst.run = [=] { ops::quantize_fp8_cpu(s, *x, *q, *scales); };
    inst.check = [=] {
      ops::quantize_fp8_cpu(s, *x, *q, *scales);
      // Scales and codes of sampled rows against the definition, then every element
      // through the library's dequantize.
      std::string why = reference::quantize_fp8(s, *x, *q, *scales);
      if (why != "pass") return why;
      ops::dequantize_fp8_cpu(s, *q, *scales, *back);
      for (std::size_t i = 0; i < x->size(); ++i) {
        // E4M3 keeps 3 mantissa bits: within 1/16 relative, plus the group's scale floor.
        if (!(std::abs((*back)[i] - (*x)[i]) <= 0.0625F * std::abs((*x)[i]) + 1e-2F)) {
          return fmt::format("element {}: {} round-trips to {}", i, (*x)[i], (*back)[i]);
        }
      }
      return std::string("pass");
    };
    return inst;
  };
  return c;
}

Case reduce_case(std::int64_t n) {
  Case c;
  c.row = kernel_row(fmt::format("reduce.sum n={}", n), "reduce.sum", ops::reduce_op(n, 4), false,
                     {{"n", n}, {"dtype", "fp32"}});
  c.prepare = [n] {
    auto dst = std::make_shared<Floats>(count(n), 0.0F);
    auto src = std::make_shared<Floats>(random_floats(count(n), 21));
    Instance inst;
    inst.run = [=] { ops::reduce_cpu(ops::ReduceOp::sum, *dst, *src); };
    inst.check = [=] {
      std::fill(dst->begin(), dst->end(), 1.0F);
      ops::reduce_cpu(ops::ReduceOp::sum, *dst, *src);
      for (std::size_t i = 0; i < dst->size(); ++i) {
        if ((*dst)[i] != 1.0F + (*src)[i]) return fmt::format("element {} is {}", i, (*dst)[i]);
      }
      return std::string("pass");
    };
    return inst;
  };
  return c;
}

Case moe_case(bool permute, std::int64_t tokens, std::int64_t experts, std::int64_t hidden) {
  ops::RouterShape s{tokens, experts, 2, ops::expert_capacity(tokens, experts, 2, 1.25)};
  Case c;
  const nlohmann::json args = {{"tokens", tokens},
                               {"experts", experts},
                               {"top_k", 2},
                               {"capacity_factor", 1.25},
                               {"hidden", hidden}};
  c.row = permute ? kernel_row(fmt::format("moe.permute tokens={} experts={} hidden={}", tokens,
                                           experts, hidden),
                               "permute.moe", ops::permute_op(s, hidden, 4), false, args)
                  : kernel_row(fmt::format("moe.router tokens={} experts={}", tokens, experts),
                               "router.top_k", ops::router_op(s), false, args);
  c.prepare = [s, permute, hidden] {
    auto logits = std::make_shared<Floats>(random_floats(count(s.tokens, s.experts), 22));
    auto routing = std::make_shared<ops::Routing>(ops::route_top_k_cpu(s, *logits));
    auto x = std::make_shared<Floats>(random_floats(count(s.tokens, hidden), 23));
    auto buffer = std::make_shared<Floats>(count(s.experts, s.capacity, hidden), kNaN);
    Instance inst;
    if (permute) {
      inst.run = [=] { ops::permute_tokens_cpu(s, *routing, hidden, *x, *buffer); };
      inst.check = [=] {
        ops::permute_tokens_cpu(s, *routing, hidden, *x, *buffer);
        return reference::permute_tokens(s, *routing, hidden, *x, *buffer);
      };
    } else {
      inst.run = [=] { *routing = ops::route_top_k_cpu(s, *logits); };
      inst.check = [=] {
        *routing = ops::route_top_k_cpu(s, *logits);
        return reference::route_top_k(s, *logits, *routing);
      };
    }
    return inst;
  };
  return c;
}

}  // namespace

std::vector<Case> cpu_cases(Grid grid) {
  const bool full = grid == Grid::full;
  std::vector<Case> cases;
  cases.push_back(copy_case(std::int64_t{16} << 20, true));  // 64 MiB
  cases.push_back(gemm_case(ops::GemmLayout::nn, 1024, 1024, 1024, true));
  cases.push_back(concurrent_gemm_case(2, 1024, 1024, 1024));  // against the ceiling GEMM

  struct Shape {
    std::int64_t m, n, k;
  };
  std::vector<Shape> gemms = {{64, 64, 64},   {128, 384, 128},  {96, 200, 300},   {256, 256, 1024},
                              {512, 512, 32}, {256, 1024, 256}, {1024, 256, 512}, {512, 768, 512}};
  if (full) {
    gemms.insert(gemms.end(), {{2048, 2048, 2048},
                               {4096, 1024, 1024},
                               {1024, 4096, 256},
                               {33, 4000, 700},
                               {768, 768, 16}});
  }
  for (const auto layout : {ops::GemmLayout::nt, ops::GemmLayout::nn, ops::GemmLayout::tn}) {
    for (const auto& g : gemms) cases.push_back(gemm_case(layout, g.m, g.n, g.k));
  }

  const std::vector<std::int64_t> copies =
      full ? std::vector<std::int64_t>{1 << 14, 1 << 18, 1 << 20, 1 << 22, 1 << 24}
           : std::vector<std::int64_t>{1 << 14, 1 << 18, 1 << 21};
  for (const auto n : copies) cases.push_back(copy_case(n));

  struct Rows {
    std::int64_t rows, hidden;
  };
  const std::vector<Rows> norms =
      full ? std::vector<Rows>{{64, 256}, {512, 1024}, {2048, 2048}, {4096, 4096}}
           : std::vector<Rows>{{64, 256}, {512, 1024}, {2048, 2048}};
  for (const bool rms : {false, true}) {
    for (const bool bwd : {false, true}) {
      for (const auto& s : norms) cases.push_back(norm_case(rms, bwd, s.rows, s.hidden));
    }
  }
  const std::vector<std::int64_t> elems =
      full ? std::vector<std::int64_t>{1 << 14, 1 << 18, 1 << 20, 1 << 23}
           : std::vector<std::int64_t>{1 << 14, 1 << 18, 1 << 21};
  for (const bool swiglu : {false, true}) {
    for (const bool bwd : {false, true}) {
      for (const auto n : elems) cases.push_back(activation_case(swiglu, bwd, n));
    }
  }
  for (const bool bwd : {false, true}) {
    cases.push_back(softmax_case(bwd, 4, 128));
    cases.push_back(softmax_case(bwd, 8, 512));
  }
  for (const bool bwd : {false, true}) {
    cases.push_back(attention_case(bwd, 2, 128, 64));
    cases.push_back(attention_case(bwd, 4, 256, 64));
    cases.push_back(attention_case(bwd, 2, 512, 128));
    if (full) cases.push_back(attention_case(bwd, 8, 1024, 128));
  }
  for (const bool lion : {false, true}) {
    for (const auto n : elems) cases.push_back(optimizer_case(lion, n));
  }
  cases.push_back(quantize_case(256, 512));
  cases.push_back(quantize_case(2048, 1024));
  for (const auto n : elems) cases.push_back(reduce_case(n));
  cases.push_back(moe_case(false, 2048, 16, 0));
  cases.push_back(moe_case(true, 1024, 16, 512));
  cases.push_back(moe_case(true, 4096, 16, 256));

  using Kind = models::CollectiveKind;
  using Algo = models::CollectiveAlgorithm;
  const CollectiveShape all_reduce{Kind::all_reduce, Algo::ring};
  const CollectiveShape tree{Kind::all_reduce, Algo::tree};
  const CollectiveShape reduce_scatter{Kind::reduce_scatter, Algo::ring};
  const CollectiveShape all_gather{Kind::all_gather, Algo::ring};
  const CollectiveShape all_to_all{Kind::all_to_all, Algo::pairwise};
  const std::vector<std::int64_t> sizes =
      full ? std::vector<std::int64_t>{1 << 12, 1 << 16, 1 << 20, 1 << 23, 1 << 26}
           : std::vector<std::int64_t>{1 << 12, 1 << 16, 1 << 20, 1 << 23};
  for (const int ranks : {2, 4}) {
    for (const auto bytes : sizes) cases.push_back(collective_case(all_reduce, ranks, bytes));
  }
  for (const auto bytes : {std::int64_t{1} << 16, std::int64_t{1} << 22}) {
    cases.push_back(collective_case(reduce_scatter, 2, bytes));
    cases.push_back(collective_case(all_gather, 2, bytes));
    cases.push_back(collective_case(all_to_all, 2, bytes));
    cases.push_back(collective_case(tree, 4, bytes));
  }
  return cases;
}

}  // namespace myriad::calibration
