// MoE routing backward, CUDA backend against the CPU backend (itself checked
// against finite differences), fresh random inputs, odd sizes, dropped tokens,
// outputs poisoned first. Runs only where a GPU is visible (label `gpu`).
#include <gtest/gtest.h>

#if defined(MYRIAD_HAVE_CUDA)
#include <random>
#include <utility>

#include "gpu_test_support.hpp"
#include "kernels/ops/moe_router.hpp"
#include "kernels/ops/moe_router_cuda.hpp"
#endif

namespace myriad::kernels::ops {
namespace {

#if defined(MYRIAD_HAVE_CUDA)

using testing::DeviceBuffer;
using testing::expect_close;
using testing::have_gpu;
using testing::random_floats;
using testing::widen;

TEST(OpsGpu, MoeRoutingBackwardMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << query_devices().note;
  std::mt19937_64 rng(111);
  // hidden 128 moves rows 16 bytes a load, 130 element by element.
  for (const auto& [hidden, s] :
       {std::pair{std::int64_t{130}, RouterShape{17, 5, 2, 4}},
        std::pair{std::int64_t{130}, RouterShape{1, 1, 1, 1}},
        std::pair{std::int64_t{130}, RouterShape{300, 8, 2, 100, false}},
        std::pair{std::int64_t{130}, RouterShape{33, 7, 3, 9}},
        std::pair{std::int64_t{128}, RouterShape{33, 7, 3, 9}},
        std::pair{std::int64_t{128}, RouterShape{300, 8, 2, 100, false}}}) {
    SCOPED_TRACE(::testing::Message()
                 << s.tokens << " tokens, " << s.experts << " experts, top " << s.top_k
                 << ", capacity " << s.capacity << ", hidden " << hidden);
    const auto nlogits = static_cast<std::size_t>(s.tokens * s.experts);
    const auto choices = static_cast<std::size_t>(s.tokens * s.top_k);
    const auto nx = static_cast<std::size_t>(s.tokens * hidden);
    const auto nbuf = static_cast<std::size_t>(s.experts * s.capacity * hidden);
    const auto logits = random_floats(rng, nlogits, -3.0F, 3.0F);
    const auto dweight = random_floats(rng, choices);
    const auto buffer = random_floats(rng, nbuf);
    const auto dbuffer_in = random_floats(rng, nbuf);
    const auto dy = random_floats(rng, nx);
    const Routing r = route_top_k_cpu(s, logits);
    std::vector<float> dlogits(nlogits), dx(nx), dbuffer(nbuf), dw(choices);
    route_top_k_backward_cpu(s, r, logits, dweight, dlogits);
    permute_tokens_backward_cpu(s, r, hidden, dbuffer_in, dx);
    unpermute_tokens_backward_cpu(s, r, hidden, dy, buffer, dbuffer, dw);

    DeviceBuffer<float> glogits(logits), gweight(choices, DeviceFill::poison), gdweight(dweight),
        gbuffer(buffer), gdbuffer_in(dbuffer_in), gdy(dy), gdlogits(nlogits, DeviceFill::poison),
        gdx(nx, DeviceFill::poison), gdbuffer(nbuf, DeviceFill::poison),
        gdw(choices, DeviceFill::poison);
    DeviceBuffer<std::int32_t> gexpert(choices, DeviceFill::poison),
        gslot(choices, DeviceFill::poison), gload(r.load.size(), DeviceFill::poison);
    const RoutingCuda rc{gexpert.get(), gweight.get(), gslot.get(), gload.get()};
    route_top_k_cuda(s, glogits.get(), rc, nullptr);
    route_top_k_backward_cuda(s, rc, glogits.get(), gdweight.get(), gdlogits.get(), nullptr);
    permute_tokens_backward_cuda(s, rc, hidden, gdbuffer_in.get(), gdx.get(), nullptr);
    unpermute_tokens_backward_cuda(s, rc, hidden, gdy.get(), gbuffer.get(), gdbuffer.get(),
                                   gdw.get(), nullptr);
    ASSERT_EQ(gslot.download(), r.slot);  // same routing on both sides
    expect_close(gdlogits.download(), widen(dlogits), 1e-6, 1e-5, "dlogits");
    expect_close(gdx.download(), widen(dx), 1e-6, 1e-5, "dx");
    expect_close(gdbuffer.download(), widen(dbuffer), 1e-7, 1e-6, "dbuffer");
    expect_close(gdw.download(), widen(dw), 1e-5, 1e-4, "dweight");
  }
}

#else

TEST(OpsGpu, NoCudaMoeBackwardInThisBuild) { GTEST_SKIP() << "built without CUDA"; }

#endif

}  // namespace
}  // namespace myriad::kernels::ops
