#include "calibration/check/composite.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>

#include "calibration/fit/fit.hpp"
#include "kernels/collectives/byte_accounting.hpp"
#include "kernels/collectives/ring.hpp"
#include "kernels/collectives/thread_executor.hpp"
#include "kernels/ops/activation.hpp"
#include "kernels/ops/attention.hpp"
#include "kernels/ops/gemm.hpp"
#include "kernels/ops/norm.hpp"
#include "kernels/ops/reduce.hpp"
#include "sim/cost/compute_cost.hpp"

namespace myriad::calibration {
namespace {

namespace ops = kernels::ops;
namespace coll = myriad::kernels::collectives;
using Floats = std::vector<float>;
using Buffer = std::shared_ptr<Floats>;

std::size_t sz(std::int64_t a, std::int64_t b = 1) {
  return static_cast<std::size_t>(a) * static_cast<std::size_t>(b);
}

Buffer random_buffer(std::size_t n, std::mt19937& gen) {
  std::uniform_real_distribution<float> dist(-1.0F, 1.0F);
  auto b = std::make_shared<Floats>(n);
  for (auto& x : *b) x = dist(gen) * 0.1F;  // small: activations stay in range layer after layer
  return b;
}

Buffer poisoned(std::size_t n) {
  return std::make_shared<Floats>(n, std::numeric_limits<float>::quiet_NaN());
}

// Names as the profile's families: the cost model finds each op's efficiency.
models::Op named(models::Op op, std::string_view family, bool backward) {
  op.name = family;
  op.backward = backward;
  return op;
}

// One layer's kernels, each with the descriptor the cost model prices.
struct LayerRun {
  std::vector<models::Op> ops;
  std::vector<std::function<void()>> kernels;
  std::vector<Buffer> outputs;    // checked for finite values
  std::vector<Buffer> gradients;  // weight gradients, all-reduced by the dp composite
  void add(models::Op op, std::function<void()> kernel) {
    ops.push_back(op);
    kernels.push_back(std::move(kernel));
  }
  void run() const {
    for (const auto& k : kernels) k();
  }
};

// Over 100 lines: issue 42 splits it by op family.
// NOLINTNEXTLINE(readability-function-size)
LayerRun make_layer(const LayerDims& d, std::uint32_t seed) {
  std::mt19937 gen(seed);
  const std::int64_t t = d.tokens();
  const std::int64_t h = d.hidden;
  const std::int64_t f = d.ffn;
  const ops::NormShape norm{t, h};
  ops::AttentionShape att;
  att.batch = d.batch;
  att.q_heads = d.heads;
  att.kv_heads = d.heads;
  att.seq = d.seq;
  att.head_dim = h / d.heads;

  LayerRun l;
  const auto gemm = [&l](std::int64_t m, std::int64_t n, std::int64_t k, ops::GemmLayout layout,
                         const Buffer& a, const Buffer& b, const Buffer& c, bool backward) {
    const ops::GemmArguments args{m, n, k, layout};
    l.add(named(ops::gemm_op(args, 4), "gemm", backward), [=] { ops::gemm_cpu(args, *a, *b, *c); });
  };
  const auto add_residual = [&l](const Buffer& dst, const Buffer& src, bool backward) {
    l.add(named(ops::reduce_op(static_cast<std::int64_t>(dst->size()), 4), "reduce.sum", backward),
          [=] { ops::reduce_cpu(ops::ReduceOp::sum, *dst, *src); });
  };
  // Weights and inputs.
  auto x = random_buffer(sz(t, h), gen);
  auto gamma1 = random_buffer(sz(h), gen);
  auto beta1 = random_buffer(sz(h), gen);
  auto gamma2 = random_buffer(sz(h), gen);
  auto beta2 = random_buffer(sz(h), gen);
  auto w_qkv = random_buffer(sz(3 * h, h), gen);
  auto w_o = random_buffer(sz(h, h), gen);
  auto w_1 = random_buffer(sz(f, h), gen);
  auto w_2 = random_buffer(sz(h, f), gen);
  auto q = random_buffer(sz(t, h), gen);  // heads-major copies of the QKV output
  auto k = random_buffer(sz(t, h), gen);
  auto v = random_buffer(sz(t, h), gen);
  auto dy = random_buffer(sz(t, h), gen);
  auto dqkv = random_buffer(sz(t, 3 * h), gen);
  // Activations and gradients.
  auto xn = poisoned(sz(t, h));
  auto mean1 = poisoned(sz(t));
  auto rstd1 = poisoned(sz(t));
  auto qkv = poisoned(sz(t, 3 * h));
  auto o = poisoned(sz(t, h));
  auto lse = poisoned(sz(d.batch * d.heads, d.seq));
  auto y1 = poisoned(sz(t, h));
  auto yn = poisoned(sz(t, h));
  auto mean2 = poisoned(sz(t));
  auto rstd2 = poisoned(sz(t));
  auto u = poisoned(sz(t, f));
  auto g = poisoned(sz(t, f));
  auto y2 = poisoned(sz(t, h));
  auto dg = poisoned(sz(t, f));
  auto du = poisoned(sz(t, f));
  auto dyn = poisoned(sz(t, h));
  auto dy1 = poisoned(sz(t, h));
  auto d_o = poisoned(sz(t, h));
  auto dq = poisoned(sz(t, h));
  auto dk = poisoned(sz(t, h));
  auto dv = poisoned(sz(t, h));
  auto dxn = poisoned(sz(t, h));
  auto dx = poisoned(sz(t, h));
  auto dw_qkv = poisoned(sz(3 * h, h));
  auto dw_o = poisoned(sz(h, h));
  auto dw_1 = poisoned(sz(f, h));
  auto dw_2 = poisoned(sz(h, f));
  auto dgamma1 = poisoned(sz(h));
  auto dbeta1 = poisoned(sz(h));
  auto dgamma2 = poisoned(sz(h));
  auto dbeta2 = poisoned(sz(h));

  // Forward.
  l.add(named(ops::layer_norm_op(norm, 4), "norm.layer.fwd", false),
        [=] { ops::layer_norm_forward_cpu(norm, *x, *gamma1, *beta1, *xn, *mean1, *rstd1); });
  gemm(t, 3 * h, h, ops::GemmLayout::nt, xn, w_qkv, qkv, false);
  l.add(named(ops::attention_op(att, 4), "attention", false),
        [=] { ops::attention_forward_cpu(att, *q, *k, *v, *o, *lse); });
  gemm(t, h, h, ops::GemmLayout::nt, o, w_o, y1, false);
  add_residual(y1, x, false);
  l.add(named(ops::layer_norm_op(norm, 4), "norm.layer.fwd", false),
        [=] { ops::layer_norm_forward_cpu(norm, *y1, *gamma2, *beta2, *yn, *mean2, *rstd2); });
  gemm(t, f, h, ops::GemmLayout::nt, yn, w_1, u, false);
  l.add(named(ops::gelu_op(t * f, 4), "activation.gelu.fwd", false),
        [=] { ops::gelu_forward_cpu(*u, *g); });
  gemm(t, h, f, ops::GemmLayout::nt, g, w_2, y2, false);
  add_residual(y2, y1, false);

  // Backward (from a random output gradient).
  gemm(t, f, h, ops::GemmLayout::nn, dy, w_2, dg, true);
  gemm(h, f, t, ops::GemmLayout::tn, dy, g, dw_2, true);
  models::Op gelu_bwd = named(ops::gelu_op(t * f, 4), "activation.gelu.bwd", true);
  gelu_bwd.bytes = gelu_bwd.backward_bytes;
  l.add(gelu_bwd, [=] { ops::gelu_backward_cpu(*dg, *u, *du); });
  gemm(t, h, f, ops::GemmLayout::nn, du, w_1, dyn, true);
  gemm(f, h, t, ops::GemmLayout::tn, du, yn, dw_1, true);
  models::Op norm_bwd = named(ops::layer_norm_op(norm, 4), "norm.layer.bwd", true);
  norm_bwd.bytes = norm_bwd.backward_bytes;
  l.add(norm_bwd, [=] {
    ops::layer_norm_backward_cpu(norm, *dyn, *y1, *gamma2, *mean2, *rstd2, *dy1, *dgamma2, *dbeta2);
  });
  add_residual(dy1, dy, true);
  gemm(t, h, h, ops::GemmLayout::nn, dy1, w_o, d_o, true);
  gemm(h, h, t, ops::GemmLayout::tn, dy1, o, dw_o, true);
  const models::Op att_bwd =
      models::attention_backward_of(named(ops::attention_op(att, 4), "attention", false));
  l.add(att_bwd, [=] {
    ops::attention_backward_cpu(att, *q, *k, *v, *o, *lse, *d_o, {*dq, *dk, *dv});
  });
  gemm(t, h, 3 * h, ops::GemmLayout::nn, dqkv, w_qkv, dxn, true);
  gemm(3 * h, h, t, ops::GemmLayout::tn, dqkv, xn, dw_qkv, true);
  l.add(norm_bwd, [=] {
    ops::layer_norm_backward_cpu(norm, *dxn, *x, *gamma1, *mean1, *rstd1, *dx, *dgamma1, *dbeta1);
  });
  add_residual(dx, dy1, true);

  l.outputs = {y2, dx, dq, dk, dv};
  l.gradients = {dw_qkv, dw_o, dw_1, dw_2, dgamma1, dbeta1, dgamma2, dbeta2};
  return l;
}

std::string finite(const std::vector<Buffer>& buffers) {
  for (const auto& b : buffers) {
    for (std::size_t i = 0; i < b->size(); ++i) {
      if (!std::isfinite((*b)[i])) return fmt::format("element {} of an output is not finite", i);
    }
  }
  return "pass";
}

nlohmann::json dims_json(const LayerDims& d) {
  return {{"batch", d.batch}, {"seq", d.seq}, {"hidden", d.hidden},
          {"heads", d.heads}, {"ffn", d.ffn}, {"dtype", "fp32"}};
}

Row composite_row(std::string name, const LayerDims& d) {
  Row r;
  r.name = std::move(name);
  r.kind = RowKind::composite;
  r.family = "composite";
  r.arguments = dims_json(d);
  return r;
}

}  // namespace

Composite dp_composite(const LayerDims& d, int ranks) {
  Composite c;
  c.row = composite_row(fmt::format("dp step ranks={} seq={} hidden={} heads={} ffn={}", ranks,
                                    d.seq, d.hidden, d.heads, d.ffn),
                        d);
  c.row.arguments["ranks"] = ranks;
  c.build = [d, ranks] {
    auto layers = std::make_shared<std::vector<LayerRun>>();
    for (int r = 0; r < ranks; ++r)
      layers->push_back(make_layer(d, 100 + static_cast<std::uint32_t>(r)));
    std::size_t grad_floats = 0;
    for (const auto& g : layers->front().gradients) grad_floats += g->size();
    const auto bytes = static_cast<std::int64_t>(4 * grad_floats);
    auto schedule = std::make_shared<coll::Schedule>(coll::make_ring_allreduce(ranks, bytes, 1, 4));
    // The gradients, packed per rank as a bucket the all-reduce works on.
    auto buckets = std::make_shared<std::vector<Floats>>(static_cast<std::size_t>(ranks),
                                                         Floats(grad_floats, 0.0F));
    const auto step = [layers, schedule, buckets, ranks] {
      std::vector<std::thread> threads;
      threads.reserve(static_cast<std::size_t>(ranks));
      for (int r = 0; r < ranks; ++r) {
        threads.emplace_back([layers, buckets, r] {
          const LayerRun& l = (*layers)[static_cast<std::size_t>(r)];
          l.run();
          auto& bucket = (*buckets)[static_cast<std::size_t>(r)];
          std::size_t at = 0;
          for (const auto& g : l.gradients) {
            std::copy(g->begin(), g->end(), bucket.begin() + static_cast<std::ptrdiff_t>(at));
            at += g->size();
          }
        });
      }
      for (auto& th : threads) th.join();
      coll::execute(*schedule, *buckets);
    };
    CompositeWork w;
    w.ops = layers->front().ops;
    for (const auto& g : layers->front().gradients) {  // packing the bucket: a copy per gradient
      w.ops.push_back(models::make_elementwise("copy", 8.0 * static_cast<double>(g->size())));
    }
    Row ar;
    ar.name = "dp all-reduce";
    ar.kind = RowKind::collective;
    ar.family = "all_reduce.ring";
    ar.bytes = static_cast<double>(bytes);
    ar.collective = {models::CollectiveKind::all_reduce,
                     models::CollectiveAlgorithm::ring,
                     false,
                     ranks,
                     static_cast<double>(bytes),
                     models::busbw_factor(models::CollectiveKind::all_reduce, ranks),
                     models::ring_steps(models::CollectiveKind::all_reduce, ranks)};
    w.rows.push_back(ar);
    w.instance.run = step;
    w.ranks_on_host = ranks;
    w.instance.check = [layers, buckets, step, ranks] {
      step();
      std::vector<Buffer> outs;
      for (const auto& l : *layers) outs.insert(outs.end(), l.outputs.begin(), l.outputs.end());
      std::string f = finite(outs);
      if (f != "pass") return f;
      for (int r = 1; r < ranks; ++r) {
        if ((*buckets)[static_cast<std::size_t>(r)] != buckets->front()) {
          return fmt::format("rank {} holds other reduced gradients than rank 0", r);
        }
      }
      return std::string("pass");
    };
    return w;
  };
  return c;
}

Case timing_case(const Composite& c) {
  return {c.row, [build = c.build] { return build().instance; }};
}

std::vector<models::Op> layer_ops(const LayerDims& d) { return make_layer(d, 1).ops; }

namespace {

// A model of the given sizes for a layer-program composite.
models::scenario::ModelSpec program_model(std::int64_t hidden, int heads, int kv_heads,
                                          std::int64_t ffn, bool llama) {
  models::scenario::ModelSpec m;
  m.hidden = static_cast<int>(hidden);
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = static_cast<int>(ffn);
  m.norm = llama ? models::scenario::Norm::rmsnorm : models::scenario::Norm::layernorm;
  m.activation = llama ? models::scenario::Activation::swiglu : models::scenario::Activation::gelu;
  return m;
}

models::ShardShape one_rank(double batch, double seq) {
  models::ShardShape sh;
  sh.micro_batch = batch;
  sh.seq = seq;
  return sh;
}

}  // namespace

// GPT-like (LayerNorm, GeLU, multi-head) and Llama-like (RMSNorm, SwiGLU,
// grouped-query) layers from the model's program; the hand-written layer's
// gradients for the dp step.
std::vector<Composite> cpu_composites(Grid grid) {
  std::vector<Composite> c;
  c.push_back(program_composite(program_model(384, 6, 6, 1536, false), one_rank(1, 256)));
  c.push_back(program_composite(program_model(512, 8, 2, 1408, true), one_rank(2, 192)));
  if (grid == Grid::full) {
    c.push_back(program_composite(program_model(768, 12, 12, 3072, false), one_rank(1, 512)));
  }
  c.push_back(dp_composite({1, 256, 256, 4, 1024}, 2));
  return c;
}

double predict_composite(const CompositeWork& work, const sim::DeviceProfile& profile,
                         const FittedTerms& terms) {
  double compute = 0;
  for (const auto& op : work.ops) compute += sim::compute_cost(op, profile).time_s;
  if (work.ranks_on_host > 1) {
    if (terms.concurrent_threads != work.ranks_on_host) {
      throw std::runtime_error(fmt::format(
          "{} ranks compute at once on this host, but the profile measured {} thread{} at once "
          "(provenance.host): measure with `myriad calibrate`, whose CPU grid runs the ceiling "
          "GEMM on {} threads",
          work.ranks_on_host, terms.concurrent_threads, terms.concurrent_threads == 1 ? "" : "s",
          work.ranks_on_host));
    }
    compute *= terms.concurrent_slowdown;
  }
  double t = compute;
  for (const auto& r : work.rows) t += predict_row(r, profile, terms.latency_per_step_s);
  return t;
}

}  // namespace myriad::calibration
