#include "kernels/ops/attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace myriad::kernels::ops {

namespace {

// Indexing into [batch, heads, seq, head_dim] tensors.
struct Rows {
  const AttentionShape& s;
  [[nodiscard]] std::size_t q(std::int64_t b, std::int64_t h, std::int64_t i) const {
    return static_cast<std::size_t>(((b * s.q_heads + h) * s.seq + i) * s.head_dim);
  }
  [[nodiscard]] std::size_t kv(std::int64_t b, std::int64_t h, std::int64_t j) const {
    return static_cast<std::size_t>(((b * s.kv_heads + h) * s.seq + j) * s.head_dim);
  }
  [[nodiscard]] std::size_t lse(std::int64_t b, std::int64_t h, std::int64_t i) const {
    return static_cast<std::size_t>((b * s.q_heads + h) * s.seq + i);
  }
};

float scale_of(const AttentionShape& s) {
  return s.scale != 0.0F ? s.scale : 1.0F / std::sqrt(static_cast<float>(s.head_dim));
}

// Keys [first, last) that query i may see.
std::pair<std::int64_t, std::int64_t> key_range(const AttentionShape& s, std::int64_t i) {
  std::int64_t first = 0;
  std::int64_t last = s.causal ? i + 1 : s.seq;
  if (s.window > 0) {
    first = std::max<std::int64_t>(0, i - s.window + 1);
    if (!s.causal) last = std::min(s.seq, i + s.window);
  }
  return {first, last};
}

float dot(const float* a, const float* b, std::int64_t n) {
  float acc = 0.0F;
  for (std::int64_t d = 0; d < n; ++d) acc += a[d] * b[d];
  return acc;
}

void require(const AttentionShape& s, std::size_t size, std::int64_t heads, std::int64_t dim,
             const char* what) {
  const auto expected = static_cast<std::size_t>(s.batch * heads * s.seq * dim);
  if (size != expected)
    throw std::invalid_argument(std::string("attention: wrong size for ") + what);
}

struct ForwardIo {
  const float* q;  // [head_dim], this query's row
  const float* k;  // [seq, head_dim] of the kv head
  const float* v;  // [seq, head_dim] of the kv head
  float* o;        // [head_dim]
};

// One query row: key tiles with an online softmax (running max m, running sum l).
float forward_row(const AttentionShape& s, std::int64_t i, const ForwardIo& io,
                  std::vector<float>& tile, std::vector<float>& acc) {
  const float scale = scale_of(s);
  const auto [first, last] = key_range(s, i);
  float m = -std::numeric_limits<float>::infinity();
  float l = 0.0F;
  std::fill(acc.begin(), acc.end(), 0.0F);
  for (std::int64_t t0 = first; t0 < last; t0 += s.key_tile) {
    const std::int64_t t1 = std::min(last, t0 + s.key_tile);
    float tile_max = -std::numeric_limits<float>::infinity();
    for (std::int64_t j = t0; j < t1; ++j) {
      const float sc = scale * dot(io.q, io.k + j * s.head_dim, s.head_dim);
      tile[static_cast<std::size_t>(j - t0)] = sc;
      tile_max = std::max(tile_max, sc);
    }
    const float m_new = std::max(m, tile_max);
    const float correction = std::exp(m - m_new);  // 0 on the first tile
    l *= correction;
    for (float& a : acc) a *= correction;
    for (std::int64_t j = t0; j < t1; ++j) {
      const float p = std::exp(tile[static_cast<std::size_t>(j - t0)] - m_new);
      l += p;
      const float* vj = io.v + j * s.head_dim;
      for (std::int64_t d = 0; d < s.head_dim; ++d) acc[static_cast<std::size_t>(d)] += p * vj[d];
    }
    m = m_new;
  }
  for (std::int64_t d = 0; d < s.head_dim; ++d) io.o[d] = acc[static_cast<std::size_t>(d)] / l;
  return m + std::log(l);
}

struct BackwardIo {
  const float* q;    // [head_dim]
  const float* k;    // [seq, head_dim]
  const float* v;    // [seq, head_dim]
  const float* do_;  // [head_dim]
  float lse;
  float delta;  // rowsum(dO * O)
  float* dq;    // [head_dim]
  float* dk;    // [seq, head_dim], accumulated
  float* dv;    // [seq, head_dim], accumulated
};

// One query row of the backward: scores recomputed key by key from the saved lse.
void backward_row(const AttentionShape& s, std::int64_t i, const BackwardIo& io) {
  const float scale = scale_of(s);
  const auto [first, last] = key_range(s, i);
  std::fill(io.dq, io.dq + s.head_dim, 0.0F);
  for (std::int64_t j = first; j < last; ++j) {
    const float* kj = io.k + j * s.head_dim;
    const float* vj = io.v + j * s.head_dim;
    const float p = std::exp(scale * dot(io.q, kj, s.head_dim) - io.lse);
    const float ds = p * (dot(io.do_, vj, s.head_dim) - io.delta);
    float* dkj = io.dk + j * s.head_dim;
    float* dvj = io.dv + j * s.head_dim;
    for (std::int64_t d = 0; d < s.head_dim; ++d) {
      dvj[d] += p * io.do_[d];
      io.dq[d] += scale * ds * kj[d];
      dkj[d] += scale * ds * io.q[d];
    }
  }
}

}  // namespace

std::string attention_can_implement(const AttentionShape& s) {
  if (s.batch < 1 || s.q_heads < 1 || s.kv_heads < 1 || s.seq < 1 || s.head_dim < 1) {
    return "batch, heads, seq and head_dim must be at least 1";
  }
  if (s.q_heads % s.kv_heads != 0) return "kv_heads must divide q_heads";
  if (s.window < 0) return "window must be 0 (none) or positive";
  if (s.key_tile < 1) return "key_tile must be at least 1";
  if (s.scale < 0.0F) return "scale must be 0 (default) or positive";
  return {};
}

bool attention_allowed(const AttentionShape& s, std::int64_t i, std::int64_t j) {
  const auto [first, last] = key_range(s, i);
  return j >= first && j < last;
}

void attention_forward_cpu(const AttentionShape& s, std::span<const float> q,
                           std::span<const float> k, std::span<const float> v, std::span<float> o,
                           std::span<float> lse) {
  const std::string why = attention_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("attention: " + why);
  require(s, q.size(), s.q_heads, s.head_dim, "q");
  require(s, o.size(), s.q_heads, s.head_dim, "o");
  require(s, k.size(), s.kv_heads, s.head_dim, "k");
  require(s, v.size(), s.kv_heads, s.head_dim, "v");
  require(s, lse.size(), s.q_heads, 1, "lse");
  const Rows at{s};
  const std::int64_t group = s.q_heads / s.kv_heads;
  std::vector<float> tile(static_cast<std::size_t>(s.key_tile));
  std::vector<float> acc(static_cast<std::size_t>(s.head_dim));
  for (std::int64_t b = 0; b < s.batch; ++b) {
    for (std::int64_t h = 0; h < s.q_heads; ++h) {
      for (std::int64_t i = 0; i < s.seq; ++i) {
        const ForwardIo io{&q[at.q(b, h, i)], &k[at.kv(b, h / group, 0)],
                           &v[at.kv(b, h / group, 0)], &o[at.q(b, h, i)]};
        lse[at.lse(b, h, i)] = forward_row(s, i, io, tile, acc);
      }
    }
  }
}

void attention_backward_cpu(const AttentionShape& s, std::span<const float> q,
                            std::span<const float> k, std::span<const float> v,
                            std::span<const float> o, std::span<const float> lse,
                            std::span<const float> do_, const AttentionGrads& grads) {
  const std::string why = attention_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("attention: " + why);
  for (const std::size_t n : {q.size(), o.size(), do_.size(), grads.dq.size()}) {
    require(s, n, s.q_heads, s.head_dim, "q/o/do/dq");
  }
  for (const std::size_t n : {k.size(), v.size(), grads.dk.size(), grads.dv.size()}) {
    require(s, n, s.kv_heads, s.head_dim, "k/v/dk/dv");
  }
  require(s, lse.size(), s.q_heads, 1, "lse");
  std::fill(grads.dk.begin(), grads.dk.end(), 0.0F);
  std::fill(grads.dv.begin(), grads.dv.end(), 0.0F);
  const Rows at{s};
  const std::int64_t group = s.q_heads / s.kv_heads;
  for (std::int64_t b = 0; b < s.batch; ++b) {
    for (std::int64_t h = 0; h < s.q_heads; ++h) {
      const std::size_t kv0 = at.kv(b, h / group, 0);
      for (std::int64_t i = 0; i < s.seq; ++i) {
        const std::size_t r = at.q(b, h, i);
        const BackwardIo io{&q[r],
                            &k[kv0],
                            &v[kv0],
                            &do_[r],
                            lse[at.lse(b, h, i)],
                            dot(&do_[r], &o[r], s.head_dim),
                            &grads.dq[r],
                            &grads.dk[kv0],
                            &grads.dv[kv0]};
        backward_row(s, i, io);
      }
    }
  }
}

models::Op attention_op(const AttentionShape& s, double elem_bytes) {
  double pairs = 0.0;
  for (std::int64_t i = 0; i < s.seq; ++i) {
    const auto [first, last] = key_range(s, i);
    pairs += static_cast<double>(last - first);
  }
  const double heads = static_cast<double>(s.batch) * static_cast<double>(s.q_heads);
  const auto d = static_cast<double>(s.head_dim);
  const double tokens = static_cast<double>(s.batch) * static_cast<double>(s.seq);
  models::Op op;
  op.name = "attention";
  op.cls = models::OpClass::attention;
  op.flops = 4.0 * heads * pairs * d;
  op.bytes = tokens * d * elem_bytes *
             (2.0 * static_cast<double>(s.q_heads) + 2.0 * static_cast<double>(s.kv_heads));
  return op;
}

}  // namespace myriad::kernels::ops
