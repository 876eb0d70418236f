// Backward of the MoE routing on the CPU: router (softmax through the chosen
// experts), permute and unpermute. Formulas in moe_router.hpp.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "kernels/ops/moe_router.hpp"

namespace myriad::kernels::ops {

namespace {

void require(const RouterShape& s, const Routing& r) {
  const std::string why = router_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("router backward: " + why);
  const auto choices = static_cast<std::size_t>(s.tokens * s.top_k);
  if (r.expert.size() != choices || r.weight.size() != choices || r.slot.size() != choices) {
    throw std::invalid_argument("router backward: routing does not match the shape");
  }
}

void require_size(std::size_t got, std::int64_t expected, const char* what) {
  if (got != static_cast<std::size_t>(expected)) {
    throw std::invalid_argument(std::string("router backward: wrong size for ") + what);
  }
}

// First element of the buffer row of choice a: [experts, capacity, hidden].
std::size_t slot_row(const RouterShape& s, const Routing& r, std::size_t a, std::size_t hidden) {
  return (static_cast<std::size_t>(r.expert[a]) * static_cast<std::size_t>(s.capacity) +
          static_cast<std::size_t>(r.slot[a])) *
         hidden;
}

}  // namespace

void route_top_k_backward_cpu(const RouterShape& s, const Routing& r, std::span<const float> logits,
                              std::span<const float> dweight, std::span<float> dlogits) {
  require(s, r);
  require_size(logits.size(), s.tokens * s.experts, "logits");
  require_size(dlogits.size(), s.tokens * s.experts, "dlogits");
  require_size(dweight.size(), s.tokens * s.top_k, "dweight");
  const auto ne = static_cast<std::size_t>(s.experts);
  const auto k = static_cast<std::size_t>(s.top_k);
  std::vector<float> q(ne);  // d weight / d logit's softmax: p, or the renormalized weights
  std::vector<float> g(ne);  // dweight scattered onto the experts
  for (std::size_t t = 0; t < static_cast<std::size_t>(s.tokens); ++t) {
    const auto lt = logits.subspan(t * ne, ne);
    if (s.renormalize) {
      std::fill(q.begin(), q.end(), 0.0F);
    } else {
      const float mx = *std::max_element(lt.begin(), lt.end());
      float sum = 0.0F;
      for (std::size_t e = 0; e < ne; ++e) sum += (q[e] = std::exp(lt[e] - mx));
      for (float& p : q) p /= sum;
    }
    std::fill(g.begin(), g.end(), 0.0F);
    float dot = 0.0F;
    for (std::size_t c = 0; c < k; ++c) {
      const auto e = static_cast<std::size_t>(r.expert[t * k + c]);
      g[e] = dweight[t * k + c];
      dot += dweight[t * k + c] * r.weight[t * k + c];
      if (s.renormalize) q[e] = r.weight[t * k + c];
    }
    for (std::size_t e = 0; e < ne; ++e) dlogits[t * ne + e] = q[e] * (g[e] - dot);
  }
}

void permute_tokens_backward_cpu(const RouterShape& s, const Routing& r, std::int64_t hidden,
                                 std::span<const float> dbuffer, std::span<float> dx) {
  require(s, r);
  require_size(dx.size(), s.tokens * hidden, "dx");
  require_size(dbuffer.size(), s.experts * s.capacity * hidden, "dbuffer");
  std::fill(dx.begin(), dx.end(), 0.0F);
  const auto h = static_cast<std::size_t>(hidden);
  const auto k = static_cast<std::size_t>(s.top_k);
  for (std::size_t a = 0; a < r.expert.size(); ++a) {
    if (r.slot[a] < 0) continue;
    const std::size_t src = slot_row(s, r, a, h);
    for (std::size_t j = 0; j < h; ++j) dx[(a / k) * h + j] += dbuffer[src + j];
  }
}

void unpermute_tokens_backward_cpu(const RouterShape& s, const Routing& r, std::int64_t hidden,
                                   std::span<const float> dy, std::span<const float> buffer,
                                   std::span<float> dbuffer, std::span<float> dweight) {
  require(s, r);
  require_size(dy.size(), s.tokens * hidden, "dy");
  require_size(buffer.size(), s.experts * s.capacity * hidden, "buffer");
  require_size(dbuffer.size(), s.experts * s.capacity * hidden, "dbuffer");
  require_size(dweight.size(), s.tokens * s.top_k, "dweight");
  std::fill(dbuffer.begin(), dbuffer.end(), 0.0F);
  const auto h = static_cast<std::size_t>(hidden);
  const auto k = static_cast<std::size_t>(s.top_k);
  for (std::size_t a = 0; a < r.expert.size(); ++a) {
    dweight[a] = 0.0F;
    if (r.slot[a] < 0) continue;
    const std::size_t row = slot_row(s, r, a, h);
    const std::size_t t = (a / k) * h;
    float dot = 0.0F;
    for (std::size_t j = 0; j < h; ++j) {
      dbuffer[row + j] = r.weight[a] * dy[t + j];
      dot += dy[t + j] * buffer[row + j];
    }
    dweight[a] = dot;
  }
}

}  // namespace myriad::kernels::ops
