// The CUDA calibration grid: the kernels of kernels/ops' CUDA backend on the
// first GPU, timed by CUDA events on one stream. Inputs are random (fixed seeds),
// outputs NaN-poisoned before the first run and checked once afterwards: GEMM
// entries against a double-precision dot product on the host; norms,
// activations and attention, forward and backward, against the CPU cases'
// references (measure/reference.hpp: sampled, in double precision, at a relative
// tolerance of 1e-2 for bf16 storage); one optimizer step from the state found
// and the fp8 quantization against them too; the reduction for values left
// exactly as drawn; the token permutation for finite values only.
#include "calibration/check/composite.hpp"
#include "calibration/measure/cases.hpp"
#include "calibration/measure/cuda_support.hpp"
#include "calibration/measure/reference.hpp"

#ifdef MYRIAD_HAVE_CUDA

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <type_traits>

#include "kernels/collectives/byte_accounting.hpp"
#include "kernels/collectives/nccl_executor.hpp"
#include "kernels/collectives/ring.hpp"
#include "kernels/collectives/thread_executor.hpp"
#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/activation.hpp"
#include "kernels/ops/activation_cuda.hpp"
#include "kernels/ops/gemm.hpp"
#include "kernels/ops/gemm_cuda.hpp"
#include "kernels/ops/moe_router.hpp"
#include "kernels/ops/moe_router_cuda.hpp"
#include "kernels/ops/norm.hpp"
#include "kernels/ops/norm_cuda.hpp"
#include "kernels/ops/optimizer.hpp"
#include "kernels/ops/optimizer_cuda.hpp"
#include "kernels/ops/quantize.hpp"
#include "kernels/ops/quantize_cuda.hpp"
#include "kernels/ops/reduce.hpp"
#include "kernels/ops/reduce_cuda.hpp"

namespace myriad::calibration::cuda_detail {
namespace {

std::string finite(const std::vector<float>& host) {
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (!std::isfinite(host[i]))
      return fmt::format("element {} of {} is not finite", i, host.size());
  }
  return "pass";
}

}  // namespace

Instance device_instance(const Ctx& ctx, const std::function<void()>& run,
                         const std::function<std::string()>& verify) {
  Instance inst;
  inst.run = run;
  inst.timed = [ctx, run](int iterations) { return ctx->time(iterations, run); };
  inst.check = [ctx, run, verify] {
    run();
    ctx->sync();
    return verify();
  };
  return inst;
}

Case gemm_case(const Ctx& ctx, ops::GemmLayout layout, std::int64_t m, std::int64_t n,
               std::int64_t k, bool ceiling) {
  const ops::GemmArguments args{m, n, k, layout};
  Case c;
  c.row = kernel_row(
      fmt::format("{}gemm.{} m={} n={} k={} bf16", ceiling ? "ceiling." : "", layout_name(layout),
                  m, n, k),
      "gemm", ops::gemm_op(args, 2), false,
      {{"m", m}, {"n", n}, {"k", k}, {"layout", layout_name(layout)}, {"dtype", "bf16"}});
  if (ceiling) c.row.kind = RowKind::ceiling;
  c.prepare = [ctx, args] {
    auto make = [](std::size_t elems, std::uint32_t seed) {
      std::vector<ops::Bf16> host = uniform_values<ops::Bf16>(elems, seed);
      auto d = std::make_shared<DeviceBuffer<ops::Bf16>>(elems);
      d->upload(host);
      return std::make_pair(d, std::move(host));
    };
    const auto made_a = make(count(args.m, args.k), 1);
    const auto made_b = make(count(args.k, args.n), 2);
    const auto a = made_a.first;
    const auto b = made_b.first;
    const auto& ha = made_a.second;
    const auto& hb = made_b.second;
    auto out = std::make_shared<DeviceBuffer<ops::Bf16>>(count(args.m, args.n));
    const auto run = [ctx, args, a, b, out] {
      ctx->gemm.run(args, a->get(), b->get(), out->get(), ctx->stream);
    };
    return device_instance(ctx, run, [args, ha, hb, out] {
      const std::vector<ops::Bf16> got = out->download();
      const std::int64_t is[] = {0, args.m / 2, args.m - 1};
      const std::int64_t js[] = {0, args.n / 2, args.n - 1};
      for (const auto i : is) {
        for (const auto j : js) {
          double want = 0;
          double scale = 0;
          for (std::int64_t p = 0; p < args.k; ++p) {
            const float av = args.layout == ops::GemmLayout::tn
                                 ? ha[count(p, args.m) + count(i)].to_float()
                                 : ha[count(i, args.k) + count(p)].to_float();
            const float bv = args.layout == ops::GemmLayout::nt
                                 ? hb[count(j, args.k) + count(p)].to_float()
                                 : hb[count(p, args.n) + count(j)].to_float();
            want += static_cast<double>(av) * bv;
            scale += std::abs(static_cast<double>(av) * bv);
          }
          const double g = got[count(i, args.n) + count(j)].to_float();
          if (!(std::abs(g - want) <= 1e-2 * scale + 1e-3)) {
            return fmt::format("C[{}, {}] = {}, expected {}", i, j, g, want);
          }
        }
      }
      return std::string("pass");
    });
  };
  return c;
}

Case copy_case(const Ctx& ctx, std::int64_t bytes, bool ceiling) {
  Case c;
  const models::Op op = models::make_elementwise("copy", 2.0 * static_cast<double>(bytes));
  c.row =
      kernel_row(fmt::format("{}copy bytes={} device-to-device", ceiling ? "ceiling." : "", bytes),
                 "copy", op, false, {{"bytes", bytes}});
  if (ceiling) c.row.kind = RowKind::ceiling;
  c.prepare = [ctx, bytes] {
    auto src = random_floats(count(bytes / 4), 3);
    auto dst = poisoned(count(bytes / 4));
    const auto run = [ctx, src, dst] {
      MYRIAD_CUDA_CHECK(cudaMemcpyAsync(dst->get(), src->get(), src->size() * sizeof(float),
                                        cudaMemcpyDeviceToDevice, ctx->stream));
    };
    return device_instance(ctx, run, [src, dst] {
      return src->download() == dst->download() ? std::string("pass")
                                                : std::string("copy differs from its source");
    });
  };
  return c;
}

template <typename T>
Case norm_case(const Ctx& ctx, bool rms, bool backward, std::int64_t rows, std::int64_t hidden) {
  const ops::NormShape s{rows, hidden};
  const double elem = sizeof(T);
  Case c;
  c.row = kernel_row(
      fmt::format("{}.{} rows={} hidden={} {}", rms ? "rms_norm" : "layer_norm",
                  backward ? "bwd" : "fwd", rows, hidden, dtype_name<T>()),
      typed<T>(fmt::format("norm.{}.{}", rms ? "rms" : "layer", backward ? "bwd" : "fwd")),
      rms ? ops::rms_norm_op(s, elem) : ops::layer_norm_op(s, elem), backward,
      {{"rows", rows}, {"hidden", hidden}, {"dtype", dtype_name<T>()}});
  c.prepare = [ctx, s, rms, backward] {
    const std::size_t n = count(s.rows, s.hidden);
    auto x = random_values<T>(n, 4);
    auto gamma = random_floats(count(s.hidden), 5);
    auto beta = random_floats(count(s.hidden), 6);
    auto dy = random_values<T>(n, 7);
    auto y = poisoned_values<T>(n);
    auto mean = poisoned(count(s.rows));
    auto rstd = poisoned(count(s.rows));
    auto dx = poisoned_values<T>(n);
    auto dgamma = poisoned(count(s.hidden));
    auto dbeta = poisoned(count(s.hidden));
    const auto forward = [ctx, s, rms, x, gamma, beta, y, mean, rstd] {
      if (rms) {
        ops::rms_norm_forward_cuda(s, x->get(), gamma->get(), y->get(), rstd->get(), ctx->stream);
      } else {
        ops::layer_norm_forward_cuda(s, x->get(), gamma->get(), beta->get(), y->get(), mean->get(),
                                     rstd->get(), ctx->stream);
      }
    };
    forward();
    const std::vector<float> hx = uniform_as_floats<T>(n, 4);
    const std::vector<float> hgamma = uniform_floats(count(s.hidden), 5);
    if (!backward) {
      return device_instance(ctx, forward, [s, rms, hx, hgamma, y, mean, rstd] {
        const reference::Tolerance storage(storage_tolerance<T>());
        const std::vector<float> hy = host_floats(y);
        const std::vector<float> hrstd = host_floats(rstd);
        if (rms) return reference::rms_norm_forward(s, hx, hgamma, hy, hrstd);
        return reference::layer_norm_forward(s, hx, hgamma, uniform_floats(count(s.hidden), 6), hy,
                                             host_floats(mean), hrstd);
      });
    }
    const auto run = [ctx, s, rms, x, gamma, dy, mean, rstd, dx, dgamma, dbeta] {
      if (rms) {
        ops::rms_norm_backward_cuda(s, dy->get(), x->get(), gamma->get(), rstd->get(), dx->get(),
                                    dgamma->get(), ctx->stream);
      } else {
        ops::layer_norm_backward_cuda(s, dy->get(), x->get(), gamma->get(), mean->get(),
                                      rstd->get(), dx->get(), dgamma->get(), dbeta->get(),
                                      ctx->stream);
      }
    };
    return device_instance(ctx, run, [s, rms, hx, hgamma, dx, dgamma, dbeta] {
      const reference::Tolerance storage(storage_tolerance<T>());
      const std::vector<float> hdy = uniform_as_floats<T>(count(s.rows, s.hidden), 7);
      if (rms) {
        return reference::rms_norm_backward(s, hdy, hx, hgamma, host_floats(dx),
                                            host_floats(dgamma));
      }
      return reference::layer_norm_backward(s, hdy, hx, hgamma, host_floats(dx),
                                            host_floats(dgamma), host_floats(dbeta));
    });
  };
  return c;
}

template <typename T>
Case activation_case(const Ctx& ctx, bool swiglu, bool backward, std::int64_t n) {
  const double elem = sizeof(T);
  Case c;
  c.row = kernel_row(fmt::format("{}.{} n={} {}", swiglu ? "swiglu" : "gelu",
                                 backward ? "bwd" : "fwd", n, dtype_name<T>()),
                     typed<T>(fmt::format("activation.{}.{}", swiglu ? "swiglu" : "gelu",
                                          backward ? "bwd" : "fwd")),
                     swiglu ? ops::swiglu_op(n, elem) : ops::gelu_op(n, elem), backward,
                     {{"n", n}, {"dtype", dtype_name<T>()}});
  c.prepare = [ctx, swiglu, backward, n] {
    auto x = random_values<T>(count(n), 8);
    auto up = random_values<T>(count(n), 9);
    auto dy = random_values<T>(count(n), 10);
    auto y = poisoned_values<T>(count(n));
    auto dup = poisoned_values<T>(count(n));
    std::function<void()> run;
    if (swiglu && backward) {
      run = [=] {
        ops::swiglu_backward_cuda(dy->get(), x->get(), up->get(), y->get(), dup->get(), n,
                                  ctx->stream);
      };
    } else if (swiglu) {
      run = [=] { ops::swiglu_forward_cuda(x->get(), up->get(), y->get(), n, ctx->stream); };
    } else if (backward) {
      run = [=] { ops::gelu_backward_cuda(dy->get(), x->get(), y->get(), n, ctx->stream); };
    } else {
      run = [=] { ops::gelu_forward_cuda(x->get(), y->get(), n, ctx->stream); };
    }
    return device_instance(ctx, run, [swiglu, backward, n, y, dup] {
      const reference::Tolerance storage(storage_tolerance<T>());
      const std::vector<float> hx = uniform_as_floats<T>(count(n), 8);
      const std::vector<float> hup = uniform_as_floats<T>(count(n), 9);
      const std::vector<float> hdy = uniform_as_floats<T>(count(n), 10);
      const std::vector<float> hy = host_floats(y);
      if (swiglu && backward) return reference::swiglu_backward(hdy, hx, hup, hy, host_floats(dup));
      if (swiglu) return reference::swiglu_forward(hx, hup, hy);
      if (backward) return reference::gelu_backward(hdy, hx, hy);
      return reference::gelu_forward(hx, hy);
    });
  };
  return c;
}

Case optimizer_case(const Ctx& ctx, bool lion, std::int64_t n) {
  Case c;
  c.row = kernel_row(fmt::format("{} n={}", lion ? "lion" : "adamw", n),
                     lion ? "optimizer.lion" : "optimizer.adamw",
                     lion ? ops::lion_op(n) : ops::adamw_op(n), false,
                     {{"n", n}, {"dtype", "fp32"}, {"cautious_decay", true}});
  c.prepare = [ctx, lion, n] {
    auto p = random_floats(count(n), 17);
    auto g = random_floats(count(n), 18);
    auto m = random_floats(count(n), 19);
    auto v = std::make_shared<DeviceBuffer<float>>(count(n));
    v->upload(std::vector<float>(count(n), 0.5F));
    std::function<void()> run;
    std::function<std::string()> check;  // one step from the state found, against the reference
    const std::vector<float> hg = uniform_floats(count(n), 18);
    if (lion) {
      ops::LionArguments a;
      a.weight_decay = 0.1F;
      a.cautious_decay = true;
      run = [=] { ops::lion_step_cuda(a, p->get(), g->get(), m->get(), n, ctx->stream); };
      check = [=] {
        const std::vector<float> p0 = p->download();
        const std::vector<float> m0 = m->download();
        run();
        ctx->sync();
        return reference::lion_step(a, {p0, m0}, hg, {p->download(), m->download()});
      };
    } else {
      ops::AdamWArguments a;
      a.weight_decay = 0.1F;
      a.cautious_decay = true;
      run = [=] {
        ops::adamw_step_cuda(a, p->get(), g->get(), m->get(), v->get(), n, ctx->stream);
      };
      check = [=] {
        const std::vector<float> p0 = p->download();
        const std::vector<float> m0 = m->download();
        const std::vector<float> v0 = v->download();
        run();
        ctx->sync();
        return reference::adamw_step(a, {p0, m0, v0}, hg,
                                     {p->download(), m->download(), v->download()});
      };
    }
    Instance inst = device_instance(ctx, run, [] { return std::string("pass"); });
    inst.check = check;
    return inst;
  };
  return c;
}

Case quantize_case(const Ctx& ctx, std::int64_t rows, std::int64_t cols) {
  const ops::QuantShape s{rows, cols};
  Case c;
  c.row = kernel_row(fmt::format("quantize.fp8 rows={} cols={} per_token", rows, cols),
                     "quantize.fp8", ops::quantize_fp8_op(s), false,
                     {{"rows", rows}, {"cols", cols}, {"scaling", "per_token"}, {"group", 128}});
  c.prepare = [ctx, s] {
    auto x = random_floats(count(s.rows, s.cols), 20);
    auto q = std::make_shared<DeviceBuffer<ops::Fp8E4M3>>(count(s.rows, s.cols));
    auto scales = poisoned(static_cast<std::size_t>(ops::quant_scale_count(s)));
    const auto run = [=] {
      ops::quantize_fp8_cuda(s, x->get(), q->get(), scales->get(), ctx->stream);
    };
    return device_instance(ctx, run, [s, q, scales] {
      const std::vector<float> hx = uniform_floats(count(s.rows, s.cols), 20);
      return reference::quantize_fp8(s, hx, q->download(), scales->download());
    });
  };
  return c;
}

Case reduce_case(const Ctx& ctx, std::int64_t n) {
  Case c;
  c.row = kernel_row(fmt::format("reduce.sum n={}", n), "reduce.sum", ops::reduce_op(n, 4), false,
                     {{"n", n}, {"dtype", "fp32"}});
  c.prepare = [ctx, n] {
    auto dst = random_floats(count(n), 21);
    auto src = std::make_shared<DeviceBuffer<float>>(count(n));
    src->upload(
        std::vector<float>(count(n), 0.0F));  // adding zeros: values stay put however often it runs
    const auto run = [=] {
      ops::reduce_cuda(ops::ReduceOp::sum, dst->get(), src->get(), n, ctx->stream);
    };
    // Adding zeros leaves every value as drawn, exactly.
    return device_instance(ctx, run, [n, dst] {
      const std::vector<float> got = dst->download();
      const std::vector<float> want = uniform_floats(count(n), 21);
      for (const std::int64_t i : reference::sample(n, 64)) {
        if (got[count(i)] != want[count(i)]) {
          return reference::mismatch(fmt::format("dst[{}]", i), got[count(i)], want[count(i)]);
        }
      }
      return std::string("pass");
    });
  };
  return c;
}

Case permute_case(const Ctx& ctx, std::int64_t tokens, std::int64_t experts, std::int64_t hidden) {
  ops::RouterShape s{tokens, experts, 2, ops::expert_capacity(tokens, experts, 2, 1.25)};
  Case c;
  c.row =
      kernel_row(fmt::format("moe.permute tokens={} experts={} hidden={}", tokens, experts, hidden),
                 "permute.moe", ops::permute_op(s, hidden, 4), false,
                 {{"tokens", tokens},
                  {"experts", experts},
                  {"top_k", 2},
                  {"capacity_factor", 1.25},
                  {"hidden", hidden}});
  c.prepare = [ctx, s, hidden] {
    auto logits = random_floats(count(s.tokens, s.experts), 22);
    auto expert = std::make_shared<DeviceBuffer<std::int32_t>>(count(s.tokens, s.top_k));
    auto weight = std::make_shared<DeviceBuffer<float>>(count(s.tokens, s.top_k));
    auto slot = std::make_shared<DeviceBuffer<std::int32_t>>(count(s.tokens, s.top_k));
    auto load = std::make_shared<DeviceBuffer<std::int32_t>>(count(s.experts));
    const ops::RoutingCuda routing{expert->get(), weight->get(), slot->get(), load->get()};
    ops::route_top_k_cuda(s, logits->get(), routing, ctx->stream);
    auto x = random_floats(count(s.tokens, hidden), 23);
    auto buffer = poisoned(count(s.experts, s.capacity, hidden));
    const auto run = [=] {
      (void)expert;  // keep the routing alive
      (void)weight;
      (void)slot;
      (void)load;
      ops::permute_tokens_cuda(s, routing, hidden, x->get(), buffer->get(), ctx->stream);
    };
    return device_instance(ctx, run, [buffer] { return finite(buffer->download()); });
  };
  return c;
}

template Case norm_case<float>(const Ctx&, bool, bool, std::int64_t, std::int64_t);
template Case norm_case<ops::Bf16>(const Ctx&, bool, bool, std::int64_t, std::int64_t);
template Case activation_case<float>(const Ctx&, bool, bool, std::int64_t);
template Case activation_case<ops::Bf16>(const Ctx&, bool, bool, std::int64_t);

Ctx shared_context() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 1) {
    throw std::runtime_error("no CUDA device: the cuda backend needs a GPU (use --backend cpu)");
  }
  static const std::shared_ptr<Context> ctx = std::make_shared<Context>();
  return ctx;
}

}  // namespace myriad::calibration::cuda_detail

namespace myriad::calibration {

using namespace cuda_detail;  // NOLINT(google-build-using-namespace): this file's own detail

bool cuda_backend_built() { return true; }

std::vector<Case> cuda_cases(Grid grid) {
  const bool full = grid == Grid::full;
  const auto ctx = shared_context();
  std::vector<Case> cases;
  cases.push_back(copy_case(ctx, std::int64_t{1} << 30, true));
  cases.push_back(gemm_case(ctx, ops::GemmLayout::nn, 8192, 8192, 8192, true));
  struct Shape {
    std::int64_t m, n, k;
  };
  std::vector<Shape> gemms = {{4096, 12288, 4096}, {4096, 4096, 4096}, {4096, 16384, 4096},
                              {4096, 4096, 16384}, {1024, 1024, 1024}, {2048, 4096, 256},
                              {512, 8192, 2048},   {16384, 1536, 4096}};
  if (full) gemms.insert(gemms.end(), {{8192, 28672, 8192}, {333, 5000, 4096}, {128, 128, 128}});
  for (const auto layout : {ops::GemmLayout::nt, ops::GemmLayout::nn, ops::GemmLayout::tn}) {
    for (const auto& g : gemms) cases.push_back(gemm_case(ctx, layout, g.m, g.n, g.k));
  }
  for (const std::int64_t bytes :
       {std::int64_t{1} << 20, std::int64_t{1} << 24, std::int64_t{1} << 28}) {
    cases.push_back(copy_case(ctx, bytes));
  }
  struct Rows {
    std::int64_t rows, hidden;
  };
  for (const bool rms : {false, true}) {
    for (const bool bwd : {false, true}) {
      for (const Rows s : {Rows{1024, 1024}, Rows{4096, 4096}, Rows{16384, 8192}}) {
        cases.push_back(norm_case<float>(ctx, rms, bwd, s.rows, s.hidden));
        cases.push_back(norm_case<ops::Bf16>(ctx, rms, bwd, s.rows, s.hidden));
      }
    }
  }
  const std::vector<std::int64_t> elems = {1 << 20, 1 << 24, 1 << 26};
  for (const bool swiglu : {false, true}) {
    for (const bool bwd : {false, true}) {
      for (const auto n : elems) {
        cases.push_back(activation_case<float>(ctx, swiglu, bwd, n));
        cases.push_back(activation_case<ops::Bf16>(ctx, swiglu, bwd, n));
      }
    }
  }
  for (const bool bwd : {false, true}) {
    cases.push_back(attention_case<float>(ctx, bwd, 16, 1024, 64));
    cases.push_back(attention_case<float>(ctx, bwd, 16, 4096, 128));
    cases.push_back(attention_case<ops::Bf16>(ctx, bwd, 16, 1024, 64));
    cases.push_back(attention_case<ops::Bf16>(ctx, bwd, 8, 2048, 128));
    cases.push_back(attention_case<ops::Bf16>(ctx, bwd, 16, 4096, 128));
  }
  for (const bool bwd : {false, true}) {
    cases.push_back(attention_mma_case(ctx, bwd, 16, 1024, 64));
    cases.push_back(attention_mma_case(ctx, bwd, 8, 2048, 128));
    cases.push_back(attention_mma_case(ctx, bwd, 16, 4096, 128));
  }
  // cuDNN's fused attention beside ours where it loads; without it the grid
  // says so on stderr and has no rows of it, which the fit does not need.
  if (const std::string why = attention_cudnn_missing(); why.empty()) {
    for (const bool bwd : {false, true}) {
      cases.push_back(attention_cudnn_case(ctx, bwd, 16, 1024, 64));
      cases.push_back(attention_cudnn_case(ctx, bwd, 8, 2048, 128));
      cases.push_back(attention_cudnn_case(ctx, bwd, 16, 4096, 128));
    }
  } else {
    fmt::print(stderr, "calibration: no cuDNN attention rows: {}\n", why);
  }
  for (const bool lion : {false, true}) {
    for (const auto n : elems) cases.push_back(optimizer_case(ctx, lion, n));
  }
  cases.push_back(quantize_case(ctx, 4096, 4096));
  cases.push_back(quantize_case(ctx, 16384, 8192));
  for (const auto n : elems) cases.push_back(reduce_case(ctx, n));
  cases.push_back(permute_case(ctx, 4096, 64, 4096));
  cases.push_back(permute_case(ctx, 16384, 64, 4096));
  append_collective_cases(cases);
  return cases;
}

}  // namespace myriad::calibration

#else

#include <stdexcept>

#include "calibration/check/composite.hpp"

namespace myriad::calibration {

bool cuda_backend_built() { return false; }

namespace {
constexpr const char* kNoCuda =
    "this build has no CUDA backend (configure with -DMYRIAD_CUDA=ON where nvcc is installed)";
}

std::vector<Case> cuda_cases(Grid /*grid*/) { throw std::runtime_error(kNoCuda); }
std::vector<Composite> cuda_composites(Grid /*grid*/) { throw std::runtime_error(kNoCuda); }

}  // namespace myriad::calibration

#endif
