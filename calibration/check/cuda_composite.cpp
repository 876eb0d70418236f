// The layer composite on the GPU: the grid's CUDA cases in a layer's order.
#include "calibration/check/composite.hpp"
#include "calibration/measure/cuda_support.hpp"

#ifdef MYRIAD_HAVE_CUDA

namespace myriad::calibration {
namespace {

using namespace cuda_detail;  // NOLINT(google-build-using-namespace): the CUDA cases

// The kernels of one transformer layer's forward and backward, in order.
std::vector<Case> layer_cases(const Ctx& ctx, const LayerDims& d) {
  const std::int64_t t = d.tokens();
  const std::int64_t h = d.hidden;
  const std::int64_t f = d.ffn;
  using L = ops::GemmLayout;
  std::vector<Case> c;
  c.push_back(norm_case<ops::Bf16>(ctx, false, false, t, h));
  c.push_back(gemm_case(ctx, L::nt, t, 3 * h, h));
  c.push_back(attention_case<ops::Bf16>(ctx, false, d.batch * d.heads, d.seq, h / d.heads));
  c.push_back(gemm_case(ctx, L::nt, t, h, h));
  c.push_back(reduce_case(ctx, t * h));
  c.push_back(norm_case<ops::Bf16>(ctx, false, false, t, h));
  c.push_back(gemm_case(ctx, L::nt, t, f, h));
  c.push_back(activation_case<ops::Bf16>(ctx, false, false, t * f));
  c.push_back(gemm_case(ctx, L::nt, t, h, f));
  c.push_back(reduce_case(ctx, t * h));
  c.push_back(gemm_case(ctx, L::nn, t, f, h));
  c.push_back(gemm_case(ctx, L::tn, h, f, t));
  c.push_back(activation_case<ops::Bf16>(ctx, false, true, t * f));
  c.push_back(gemm_case(ctx, L::nn, t, h, f));
  c.push_back(gemm_case(ctx, L::tn, f, h, t));
  c.push_back(norm_case<ops::Bf16>(ctx, false, true, t, h));
  c.push_back(reduce_case(ctx, t * h));
  c.push_back(gemm_case(ctx, L::nn, t, h, h));
  c.push_back(gemm_case(ctx, L::tn, h, h, t));
  c.push_back(attention_case<ops::Bf16>(ctx, true, d.batch * d.heads, d.seq, h / d.heads));
  c.push_back(gemm_case(ctx, L::nn, t, h, 3 * h));
  c.push_back(gemm_case(ctx, L::tn, 3 * h, h, t));
  c.push_back(norm_case<ops::Bf16>(ctx, false, true, t, h));
  c.push_back(reduce_case(ctx, t * h));
  return c;
}

Composite layer_on_gpu(const LayerDims& d) {
  Composite c;
  c.row.name = fmt::format("layer fwd+bwd seq={} hidden={} heads={} ffn={} batch={} (cuda)", d.seq,
                           d.hidden, d.heads, d.ffn, d.batch);
  c.row.kind = RowKind::composite;
  c.row.family = "composite";
  c.row.arguments = {{"batch", d.batch},   {"seq", d.seq},
                     {"hidden", d.hidden}, {"heads", d.heads},
                     {"ffn", d.ffn},       {"dtype", "bf16 storage, fp32 residual adds"}};
  c.describe = [d] {
    CompositeWork w;  // the cases' rows need no context: it is used when they are prepared
    for (const Case& k : layer_cases(nullptr, d)) w.rows.push_back(k.row);
    return w;
  };
  c.build = [d] {
    const Ctx ctx = shared_context();
    const std::vector<Case> cases = layer_cases(ctx, d);
    auto instances = std::make_shared<std::vector<Instance>>();
    CompositeWork w;
    for (const Case& k : cases) {
      w.rows.push_back(k.row);
      instances->push_back(k.prepare());
    }
    const auto run = [instances] {
      for (const auto& i : *instances) i.run();
    };
    w.instance.run = run;
    w.instance.timed = [ctx, run](int iterations) { return ctx->time(iterations, run); };
    w.instance.check = [instances] {
      for (const auto& i : *instances) {
        std::string r = i.check();
        if (r != "pass") return r;
      }
      return std::string("pass");
    };
    return w;
  };
  return c;
}

}  // namespace

std::vector<Composite> cuda_composites(Grid grid) {
  std::vector<Composite> c;
  c.push_back(layer_on_gpu({1, 4096, 4096, 32, 16384}));
  c.push_back(layer_on_gpu({2, 2048, 2048, 16, 8192}));
  if (grid == Grid::full) c.push_back(layer_on_gpu({1, 8192, 8192, 64, 28672}));
  return c;
}

}  // namespace myriad::calibration

#endif
