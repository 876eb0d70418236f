#include "kernels/ops/moe_router.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace myriad::kernels::ops {

namespace {

void require(const RouterShape& s) {
  const std::string why = router_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("router: " + why);
}

void require_size(std::size_t got, std::int64_t expected, const char* what) {
  if (got != static_cast<std::size_t>(expected)) {
    throw std::invalid_argument(std::string("router: wrong size for ") + what);
  }
}

// Softmax of one token's logits, then the indices of the k largest probabilities.
void choose(const RouterShape& s, std::span<const float> logits, std::vector<float>& prob,
            std::vector<std::int32_t>& order) {
  const float mx = *std::max_element(logits.begin(), logits.end());
  float sum = 0.0F;
  for (std::size_t e = 0; e < prob.size(); ++e) {
    prob[e] = std::exp(logits[e] - mx);
    sum += prob[e];
  }
  for (float& p : prob) p /= sum;
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + s.top_k, order.end(),
                    [&prob](std::int32_t a, std::int32_t b) {
                      const auto pa = prob[static_cast<std::size_t>(a)];
                      const auto pb = prob[static_cast<std::size_t>(b)];
                      return pa > pb || (pa == pb && a < b);
                    });
}

}  // namespace

std::string router_can_implement(const RouterShape& s) {
  if (s.tokens < 1 || s.experts < 1) return "tokens and experts must be at least 1";
  if (s.top_k < 1 || s.top_k > s.experts) return "top_k must lie in [1, experts]";
  if (s.capacity < 1) return "capacity must be at least 1";
  return {};
}

std::int64_t expert_capacity(std::int64_t tokens, std::int64_t experts, std::int64_t top_k,
                             double capacity_factor) {
  const double c = std::ceil(capacity_factor * static_cast<double>(tokens * top_k) /
                             static_cast<double>(experts));
  return std::max<std::int64_t>(1, static_cast<std::int64_t>(c));
}

Routing route_top_k_cpu(const RouterShape& s, std::span<const float> logits) {
  require(s);
  require_size(logits.size(), s.tokens * s.experts, "logits");
  const auto k = static_cast<std::size_t>(s.top_k);
  const auto ne = static_cast<std::size_t>(s.experts);
  Routing r;
  r.expert.resize(static_cast<std::size_t>(s.tokens) * k);
  r.weight.resize(r.expert.size());
  r.slot.assign(r.expert.size(), -1);
  r.load.assign(ne, 0);
  std::vector<float> prob(ne);
  std::vector<std::int32_t> order(ne);
  for (std::size_t t = 0; t < static_cast<std::size_t>(s.tokens); ++t) {
    choose(s, logits.subspan(t * ne, ne), prob, order);
    float kept = 0.0F;
    for (std::size_t c = 0; c < k; ++c) kept += prob[static_cast<std::size_t>(order[c])];
    for (std::size_t c = 0; c < k; ++c) {
      r.expert[t * k + c] = order[c];
      const float p = prob[static_cast<std::size_t>(order[c])];
      r.weight[t * k + c] = s.renormalize ? p / kept : p;
    }
  }
  for (std::size_t c = 0; c < k; ++c) {
    for (std::size_t t = 0; t < static_cast<std::size_t>(s.tokens); ++t) {
      auto& load = r.load[static_cast<std::size_t>(r.expert[t * k + c])];
      if (load < s.capacity) r.slot[t * k + c] = load++;
    }
  }
  return r;
}

void permute_tokens_cpu(const RouterShape& s, const Routing& r, std::int64_t hidden,
                        std::span<const float> x, std::span<float> buffer) {
  require(s);
  require_size(r.slot.size(), s.tokens * s.top_k, "routing");
  require_size(x.size(), s.tokens * hidden, "x");
  require_size(buffer.size(), s.experts * s.capacity * hidden, "buffer");
  std::fill(buffer.begin(), buffer.end(), 0.0F);
  const auto h = static_cast<std::size_t>(hidden);
  const auto k = static_cast<std::size_t>(s.top_k);
  for (std::size_t a = 0; a < r.expert.size(); ++a) {
    if (r.slot[a] < 0) continue;
    const std::size_t dst =
        (static_cast<std::size_t>(r.expert[a]) * static_cast<std::size_t>(s.capacity) +
         static_cast<std::size_t>(r.slot[a])) *
        h;
    std::copy_n(x.begin() + static_cast<std::ptrdiff_t>((a / k) * h), h,
                buffer.begin() + static_cast<std::ptrdiff_t>(dst));
  }
}

void unpermute_tokens_cpu(const RouterShape& s, const Routing& r, std::int64_t hidden,
                          std::span<const float> buffer, std::span<float> y) {
  require(s);
  require_size(r.slot.size(), s.tokens * s.top_k, "routing");
  require_size(y.size(), s.tokens * hidden, "y");
  require_size(buffer.size(), s.experts * s.capacity * hidden, "buffer");
  std::fill(y.begin(), y.end(), 0.0F);
  const auto h = static_cast<std::size_t>(hidden);
  const auto k = static_cast<std::size_t>(s.top_k);
  for (std::size_t a = 0; a < r.expert.size(); ++a) {
    if (r.slot[a] < 0) continue;
    const std::size_t src =
        (static_cast<std::size_t>(r.expert[a]) * static_cast<std::size_t>(s.capacity) +
         static_cast<std::size_t>(r.slot[a])) *
        h;
    for (std::size_t j = 0; j < h; ++j) y[(a / k) * h + j] += r.weight[a] * buffer[src + j];
  }
}

models::Op router_op(const RouterShape& s) {
  const double logits = static_cast<double>(s.tokens) * static_cast<double>(s.experts);
  const double chosen = static_cast<double>(s.tokens) * static_cast<double>(s.top_k);
  // Reads the logits, writes expert, weight and slot per choice (4 bytes each).
  return models::make_elementwise("moe.router", 4.0 * logits + 12.0 * chosen, 5.0 * logits);
}

models::Op permute_op(const RouterShape& s, std::int64_t hidden, double elem_bytes) {
  const double rows = static_cast<double>(s.tokens) * static_cast<double>(s.top_k);
  return models::make_elementwise("moe.permute",
                                  2.0 * rows * static_cast<double>(hidden) * elem_bytes);
}

}  // namespace myriad::kernels::ops
