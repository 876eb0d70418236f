#include "calibration/measure/reference.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>

namespace myriad::calibration::reference {
namespace {

namespace ops = kernels::ops;

std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }
double real(std::int64_t n) { return static_cast<double>(n); }

// Mean and 1 / sqrt(variance + eps) of one row, two passes in double.
struct LayerStats {
  double mean = 0, rstd = 0, mean_abs = 0;
};
LayerStats layer_stats(Span xr, double eps) {
  LayerStats st;
  for (const float v : xr) {
    st.mean += v;
    st.mean_abs += std::abs(v);
  }
  st.mean /= real(static_cast<std::int64_t>(xr.size()));
  st.mean_abs /= real(static_cast<std::int64_t>(xr.size()));
  double var = 0;
  for (const float v : xr) var += (v - st.mean) * (v - st.mean);
  st.rstd = 1.0 / std::sqrt(var / real(static_cast<std::int64_t>(xr.size())) + eps);
  return st;
}

// 1 / sqrt(mean(x^2) + eps) of one row.
double rms_rstd(Span xr, double eps) {
  double ss = 0;
  for (const float v : xr) ss += static_cast<double>(v) * v;
  return 1.0 / std::sqrt(ss / real(static_cast<std::int64_t>(xr.size())) + eps);
}

// The norms' backward for one row: dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),
// g = dy * gamma; RMSNorm has no mean term (centered = false).
std::string norm_dx_row(std::int64_t r, Span dyr, Span xr, Span gamma, double mean, double rstd,
                        bool centered, Span dxr) {
  const auto h = static_cast<std::int64_t>(xr.size());
  double c1 = 0, c1_abs = 0, c2 = 0, c2_abs = 0;  // mean(g * xhat), mean(g)
  for (std::int64_t j = 0; j < h; ++j) {
    const double g = static_cast<double>(dyr[at(j)]) * gamma[at(j)];
    const double xhat = (xr[at(j)] - mean) * rstd;
    c1 += g * xhat;
    c1_abs += std::abs(g * xhat);
    c2 += g;
    c2_abs += std::abs(g);
  }
  c1 /= real(h);
  c1_abs /= real(h);
  c2 = centered ? c2 / real(h) : 0.0;
  c2_abs = centered ? c2_abs / real(h) : 0.0;
  for (std::int64_t j = 0; j < h; ++j) {
    const double g = static_cast<double>(dyr[at(j)]) * gamma[at(j)];
    const double xhat = (xr[at(j)] - mean) * rstd;
    const double want = rstd * (g - c2 - xhat * c1);
    const double scale = rstd * (std::abs(g) + c2_abs + std::abs(xhat) * c1_abs);
    if (!within(dxr[at(j)], want, scale)) {
      return mismatch(fmt::format("dx[{}, {}]", r, j), dxr[at(j)], want);
    }
  }
  return "pass";
}

// Both norms' backward: dx at sampled rows, dgamma = sum_r dy * xhat and
// dbeta = sum_r dy at sampled columns over every row.
std::string norm_backward(const ops::NormShape& s, Span dy, Span x, Span gamma, Span dx,
                          Span dgamma, Span dbeta, bool centered) {
  const std::int64_t h = s.hidden;
  const std::vector<std::int64_t> rows = sample(s.rows);
  const std::vector<std::int64_t> cols = sample(h, 64);
  std::vector<double> dg(cols.size()), dg_scale(cols.size()), db(cols.size()),
      db_scale(cols.size());
  for (std::int64_t r = 0; r < s.rows; ++r) {
    const Span xr = x.subspan(at(r * h), at(h));
    const Span dyr = dy.subspan(at(r * h), at(h));
    double mean = 0;
    double rstd = 0;
    if (centered) {
      const LayerStats st = layer_stats(xr, s.eps);
      mean = st.mean;
      rstd = st.rstd;
    } else {
      rstd = rms_rstd(xr, s.eps);
    }
    for (std::size_t c = 0; c < cols.size(); ++c) {
      const std::size_t j = at(cols[c]);
      const double xhat = (xr[j] - mean) * rstd;
      dg[c] += dyr[j] * xhat;
      dg_scale[c] += std::abs(dyr[j] * xhat);
      db[c] += dyr[j];
      db_scale[c] += std::abs(dyr[j]);
    }
    if (std::binary_search(rows.begin(), rows.end(), r)) {
      std::string why =
          norm_dx_row(r, dyr, xr, gamma, mean, rstd, centered, dx.subspan(at(r * h), at(h)));
      if (why != "pass") return why;
    }
  }
  for (std::size_t c = 0; c < cols.size(); ++c) {
    const std::size_t j = at(cols[c]);
    if (!within(dgamma[j], dg[c], dg_scale[c])) {
      return mismatch(fmt::format("dgamma[{}]", j), dgamma[j], dg[c]);
    }
    if (centered && !within(dbeta[j], db[c], db_scale[c])) {
      return mismatch(fmt::format("dbeta[{}]", j), dbeta[j], db[c]);
    }
  }
  return centered ? all_finite({{"dx", dx}, {"dgamma", dgamma}, {"dbeta", dbeta}})
                  : all_finite({{"dx", dx}, {"dgamma", dgamma}});
}

// GeLU's tanh approximation at x: tanh(sqrt(2 / pi) (x + 0.044715 x^3)).
constexpr double kGeluA = 0.044715;
constexpr double kSqrt2OverPi = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  // sqrt(2 / pi)
double gelu_tanh(double x) { return std::tanh(kSqrt2OverPi * (x + kGeluA * x * x * x)); }

double sigmoid(double g) { return 1.0 / (1.0 + std::exp(-g)); }

// One query row of an attention, from the definition, in double.
class Attention {
 public:
  Attention(const ops::AttentionShape& s, Span q, Span k, Span v)
      : s_(s),
        q_(q),
        k_(k),
        v_(v),
        scale_(s.scale != 0.0F ? s.scale : 1.0 / std::sqrt(real(s.head_dim))),
        group_(s.q_heads / s.kv_heads) {}

  struct Row {
    std::vector<double> p;  // [seq] softmax probabilities, 0 where masked
    double lse = 0, lse_scale = 0;
    std::vector<double> o, o_scale;  // [head_dim]
  };

  [[nodiscard]] double scale() const { return scale_; }
  [[nodiscard]] std::int64_t group() const { return group_; }
  [[nodiscard]] std::size_t q_at(std::int64_t b, std::int64_t h, std::int64_t i) const {
    return at(((b * s_.q_heads + h) * s_.seq + i) * s_.head_dim);
  }
  [[nodiscard]] std::size_t kv_at(std::int64_t b, std::int64_t hk, std::int64_t j) const {
    return at(((b * s_.kv_heads + hk) * s_.seq + j) * s_.head_dim);
  }
  [[nodiscard]] std::size_t lse_at(std::int64_t b, std::int64_t h, std::int64_t i) const {
    return at((b * s_.q_heads + h) * s_.seq + i);
  }
  [[nodiscard]] bool allowed(std::int64_t i, std::int64_t j) const {
    return (!s_.causal || j <= i) && (s_.window == 0 || std::abs(i - j) < s_.window);
  }

  [[nodiscard]] Row row(std::int64_t b, std::int64_t h, std::int64_t i) const {
    const std::int64_t d = s_.head_dim;
    Row r;
    r.p.assign(at(s_.seq), 0.0);
    r.o.assign(at(d), 0.0);
    r.o_scale.assign(at(d), 0.0);
    const std::size_t qi = q_at(b, h, i);
    double mx = -std::numeric_limits<double>::infinity();
    double max_abs = 0;
    for (std::int64_t j = 0; j < s_.seq; ++j) {
      if (!allowed(i, j)) continue;
      const std::size_t kj = kv_at(b, h / group_, j);
      double dot = 0;
      double dot_abs = 0;
      for (std::int64_t e = 0; e < d; ++e) {
        dot += static_cast<double>(q_[qi + at(e)]) * k_[kj + at(e)];
        dot_abs += std::abs(static_cast<double>(q_[qi + at(e)]) * k_[kj + at(e)]);
      }
      r.p[at(j)] = scale_ * dot;  // the score, for now
      mx = std::max(mx, scale_ * dot);
      max_abs = std::max(max_abs, scale_ * dot_abs);
    }
    double l = 0;
    for (std::int64_t j = 0; j < s_.seq; ++j) {
      if (allowed(i, j)) l += std::exp(r.p[at(j)] - mx);
    }
    r.lse = mx + std::log(l);
    r.lse_scale = std::abs(r.lse) + max_abs;
    for (std::int64_t j = 0; j < s_.seq; ++j) {
      if (!allowed(i, j)) continue;
      const double p = std::exp(r.p[at(j)] - r.lse);
      r.p[at(j)] = p;
      const std::size_t vj = kv_at(b, h / group_, j);
      for (std::int64_t e = 0; e < d; ++e) {
        r.o[at(e)] += p * v_[vj + at(e)];
        r.o_scale[at(e)] += p * std::abs(v_[vj + at(e)]);
      }
    }
    return r;
  }

  // delta = do . o, and the size of its terms: {value, scale}.
  using Delta = std::array<double, 2>;
  [[nodiscard]] Delta delta(const Row& r, const float* do_i) const {
    Delta out{0, 0};
    for (std::int64_t e = 0; e < s_.head_dim; ++e) {
      out[0] += do_i[e] * r.o[at(e)];
      out[1] += std::abs(do_i[e]) * r.o_scale[at(e)];
    }
    return out;
  }

  // dS[i, j] = p[j] * (do . v[j] - delta), and the size of its terms.
  struct Ds {
    double value = 0, scale = 0;
  };
  [[nodiscard]] Ds ds(const Row& r, std::int64_t b, std::int64_t h, std::int64_t j,
                      const Delta& delta, const float* do_i) const {
    const std::size_t vj = kv_at(b, h / group_, j);
    double dp = 0;
    double dp_abs = 0;
    for (std::int64_t e = 0; e < s_.head_dim; ++e) {
      dp += static_cast<double>(do_i[e]) * v_[vj + at(e)];
      dp_abs += std::abs(static_cast<double>(do_i[e]) * v_[vj + at(e)]);
    }
    const double p = r.p[at(j)];
    return {p * (dp - delta[0]), p * (dp_abs + delta[1])};
  }

 private:
  const ops::AttentionShape& s_;
  Span q_, k_, v_;
  double scale_;
  std::int64_t group_;
};

double decode_e4m3(std::uint8_t bits) {
  const int e = (bits >> 3) & 0xF;
  const int m = bits & 0x7;
  if (e == 15 && m == 7) return std::numeric_limits<double>::quiet_NaN();
  const double magnitude = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
  return (bits & 0x80) != 0 ? -magnitude : magnitude;
}

// The spacing of E4M3 values at magnitude m: 2^-9 below the smallest normal 2^-6,
// else 2^(floor(log2 m) - 3), up to 32 at the largest binade.
double e4m3_step(double m) {
  if (m < std::ldexp(1.0, -6)) return std::ldexp(1.0, -9);
  int e = 0;
  (void)std::frexp(m, &e);  // m = f 2^e with f in [0.5, 1)
  return std::ldexp(1.0, std::min(e - 1, 8) - 3);
}

// The largest |x| over the group of (r, c).
double group_amax(const ops::QuantShape& s, Span x, std::int64_t r, std::int64_t c) {
  double amax = 0;
  if (s.scaling == ops::QuantScaling::per_token) {
    const std::int64_t c0 = c / s.group * s.group;
    for (std::int64_t cc = c0; cc < std::min(s.cols, c0 + s.group); ++cc) {
      amax = std::max(amax, static_cast<double>(std::abs(x[at(r * s.cols + cc)])));
    }
  } else {
    const std::int64_t r0 = r / s.group * s.group;
    for (std::int64_t rr = r0; rr < std::min(s.rows, r0 + s.group); ++rr) {
      amax = std::max(amax, static_cast<double>(std::abs(x[at(rr * s.cols + c)])));
    }
  }
  return amax;
}

std::size_t quant_scale_at(const ops::QuantShape& s, std::int64_t r, std::int64_t c) {
  if (s.scaling == ops::QuantScaling::per_token) {
    return at(r * ((s.cols + s.group - 1) / s.group) + c / s.group);
  }
  return at(r / s.group * s.cols + c);
}

}  // namespace

std::vector<std::int64_t> sample(std::int64_t n, std::int64_t spread) {
  if (n < 1) return {};
  std::vector<std::int64_t> out = {0, n / 2, n - 1};
  if (spread > 2) {
    const std::int64_t step = std::max<std::int64_t>(1, (n - 1) / (spread - 1));
    for (std::int64_t i = step; i < n - 1; i += step) out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {
thread_local double loosest_tolerance = 0;
}  // namespace

Tolerance::Tolerance(double rel) : outer_(loosest_tolerance) {
  loosest_tolerance = std::max(outer_, rel);
}

Tolerance::~Tolerance() { loosest_tolerance = outer_; }

bool within(double got, double want, double scale, double rel) {
  return std::abs(got - want) <= std::max(rel, loosest_tolerance) * scale + 1e-6;
}

std::string mismatch(std::string_view where, double got, double want) {
  return fmt::format("{} = {}, expected {}", where, got, want);
}

std::string all_finite(std::initializer_list<Output> outputs) {
  for (const Output& out : outputs) {
    const auto bad = std::find_if(out.values.begin(), out.values.end(),
                                  [](float x) { return !std::isfinite(x); });
    if (bad != out.values.end()) {
      return fmt::format("{}[{}] = {} of {} elements is not finite", out.name,
                         bad - out.values.begin(), *bad, out.values.size());
    }
  }
  return "pass";
}

std::string gemm(const ops::GemmArguments& args, Span a, Span b, Span c) {
  for (const std::int64_t i : sample(args.m)) {
    for (const std::int64_t j : sample(args.n)) {
      double want = 0;
      double scale = 0;
      for (std::int64_t p = 0; p < args.k; ++p) {
        const float av =
            args.layout == ops::GemmLayout::tn ? a[at(p * args.m + i)] : a[at(i * args.k + p)];
        const float bv =
            args.layout == ops::GemmLayout::nt ? b[at(j * args.k + p)] : b[at(p * args.n + j)];
        want += static_cast<double>(av) * bv;
        scale += std::abs(static_cast<double>(av) * bv);
      }
      const double got = c[at(i * args.n + j)];
      if (!within(got, want, scale, 1e-5))
        return mismatch(fmt::format("C[{}, {}]", i, j), got, want);
    }
  }
  return all_finite({{"C", c}});
}

std::string layer_norm_forward(const ops::NormShape& s, Span x, Span gamma, Span beta, Span y,
                               Span mean, Span rstd) {
  const std::int64_t h = s.hidden;
  for (const std::int64_t r : sample(s.rows)) {
    const LayerStats st = layer_stats(x.subspan(at(r * h), at(h)), s.eps);
    if (!within(mean[at(r)], st.mean, st.mean_abs)) {
      return mismatch(fmt::format("mean[{}]", r), mean[at(r)], st.mean);
    }
    if (!within(rstd[at(r)], st.rstd, st.rstd)) {
      return mismatch(fmt::format("rstd[{}]", r), rstd[at(r)], st.rstd);
    }
    for (std::int64_t j = 0; j < h; ++j) {
      const double xhat = (x[at(r * h + j)] - st.mean) * st.rstd;
      const double want = xhat * gamma[at(j)] + beta[at(j)];
      const double scale = std::abs(xhat * gamma[at(j)]) + std::abs(beta[at(j)]);
      if (!within(y[at(r * h + j)], want, scale)) {
        return mismatch(fmt::format("y[{}, {}]", r, j), y[at(r * h + j)], want);
      }
    }
  }
  return all_finite({{"y", y}, {"mean", mean}, {"rstd", rstd}});
}

std::string layer_norm_backward(const ops::NormShape& s, Span dy, Span x, Span gamma, Span dx,
                                Span dgamma, Span dbeta) {
  return norm_backward(s, dy, x, gamma, dx, dgamma, dbeta, true);
}

std::string rms_norm_forward(const ops::NormShape& s, Span x, Span gamma, Span y, Span rstd) {
  const std::int64_t h = s.hidden;
  for (const std::int64_t r : sample(s.rows)) {
    const double rs = rms_rstd(x.subspan(at(r * h), at(h)), s.eps);
    if (!within(rstd[at(r)], rs, rs)) return mismatch(fmt::format("rstd[{}]", r), rstd[at(r)], rs);
    for (std::int64_t j = 0; j < h; ++j) {
      const double want = x[at(r * h + j)] * rs * gamma[at(j)];
      if (!within(y[at(r * h + j)], want, std::abs(want))) {
        return mismatch(fmt::format("y[{}, {}]", r, j), y[at(r * h + j)], want);
      }
    }
  }
  return all_finite({{"y", y}, {"rstd", rstd}});
}

std::string rms_norm_backward(const ops::NormShape& s, Span dy, Span x, Span gamma, Span dx,
                              Span dgamma) {
  return norm_backward(s, dy, x, gamma, dx, dgamma, {}, false);
}

std::string gelu_forward(Span x, Span y) {
  for (const std::int64_t i : sample(static_cast<std::int64_t>(x.size()), 1024)) {
    const double xi = x[at(i)];
    const double t = gelu_tanh(xi);
    const double want = 0.5 * xi * (1.0 + t);
    if (!within(y[at(i)], want, 0.5 * std::abs(xi) * (1.0 + std::abs(t)))) {
      return mismatch(fmt::format("y[{}]", i), y[at(i)], want);
    }
  }
  return all_finite({{"y", y}});
}

std::string gelu_backward(Span dy, Span x, Span dx) {
  for (const std::int64_t i : sample(static_cast<std::int64_t>(x.size()), 1024)) {
    const double xi = x[at(i)];
    const double t = gelu_tanh(xi);
    // d/dx of 0.5 x (1 + t): 0.5 (1 + t) + 0.5 x (1 - t^2) d(inner)/dx.
    const double dinner = kSqrt2OverPi * (1.0 + 3.0 * kGeluA * xi * xi);
    const double a = 0.5 * (1.0 + t);
    const double b = 0.5 * xi * (1.0 - t * t) * dinner;
    const double want = dy[at(i)] * (a + b);
    if (!within(dx[at(i)], want, std::abs(dy[at(i)]) * (std::abs(a) + std::abs(b)))) {
      return mismatch(fmt::format("dx[{}]", i), dx[at(i)], want);
    }
  }
  return all_finite({{"dx", dx}});
}

std::string swiglu_forward(Span gate, Span up, Span y) {
  for (const std::int64_t i : sample(static_cast<std::int64_t>(gate.size()), 1024)) {
    const double g = gate[at(i)];
    const double want = g * sigmoid(g) * up[at(i)];
    if (!within(y[at(i)], want, std::abs(want))) {
      return mismatch(fmt::format("y[{}]", i), y[at(i)], want);
    }
  }
  return all_finite({{"y", y}});
}

std::string swiglu_backward(Span dy, Span gate, Span up, Span dgate, Span dup) {
  for (const std::int64_t i : sample(static_cast<std::int64_t>(gate.size()), 1024)) {
    const double g = gate[at(i)];
    const double sg = sigmoid(g);
    const double d = dy[at(i)];
    // y = g sigmoid(g) up: dy/dup = g sigmoid(g); dy/dg = up sigmoid(g) (1 + g (1 - sigmoid(g))).
    const double want_up = d * g * sg;
    if (!within(dup[at(i)], want_up, std::abs(want_up))) {
      return mismatch(fmt::format("dup[{}]", i), dup[at(i)], want_up);
    }
    const double want_gate = d * up[at(i)] * sg * (1.0 + g * (1.0 - sg));
    const double scale = std::abs(d * up[at(i)] * sg) * (1.0 + std::abs(g) * (1.0 - sg));
    if (!within(dgate[at(i)], want_gate, scale)) {
      return mismatch(fmt::format("dgate[{}]", i), dgate[at(i)], want_gate);
    }
  }
  return all_finite({{"dgate", dgate}, {"dup", dup}});
}

std::string causal_softmax_forward(const ops::SoftmaxShape& s, Span x, Span y) {
  const std::int64_t n = s.seq;
  const double scale = s.scale;
  for (const std::int64_t m : sample(s.matrices)) {
    for (const std::int64_t i : sample(n)) {
      const std::int64_t base = (m * n + i) * n;
      double mx = -std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j <= i; ++j) mx = std::max(mx, scale * x[at(base + j)]);
      double sum = 0;
      for (std::int64_t j = 0; j <= i; ++j) sum += std::exp(scale * x[at(base + j)] - mx);
      for (std::int64_t j = 0; j < n; ++j) {
        const double want = j <= i ? std::exp(scale * x[at(base + j)] - mx) / sum : 0.0;
        if (!within(y[at(base + j)], want, want)) {
          return mismatch(fmt::format("y[{}, {}, {}]", m, i, j), y[at(base + j)], want);
        }
      }
    }
  }
  return all_finite({{"y", y}});
}

std::string causal_softmax_backward(const ops::SoftmaxShape& s, Span dy, Span y, Span dx) {
  const std::int64_t n = s.seq;
  const double scale = s.scale;
  for (const std::int64_t m : sample(s.matrices)) {
    for (const std::int64_t i : sample(n)) {
      const std::int64_t base = (m * n + i) * n;
      double dot = 0;
      double dot_abs = 0;
      for (std::int64_t j = 0; j <= i; ++j) {
        dot += static_cast<double>(dy[at(base + j)]) * y[at(base + j)];
        dot_abs += std::abs(static_cast<double>(dy[at(base + j)]) * y[at(base + j)]);
      }
      for (std::int64_t j = 0; j < n; ++j) {
        const double yj = y[at(base + j)];
        const double want = j <= i ? scale * yj * (dy[at(base + j)] - dot) : 0.0;
        const double size = scale * std::abs(yj) * (std::abs(dy[at(base + j)]) + dot_abs);
        if (!within(dx[at(base + j)], want, j <= i ? size : 0.0)) {
          return mismatch(fmt::format("dx[{}, {}, {}]", m, i, j), dx[at(base + j)], want);
        }
      }
    }
  }
  return all_finite({{"dx", dx}});
}

std::string attention_forward(const ops::AttentionShape& s, Span q, Span k, Span v, Span o,
                              Span lse) {
  const Attention ref(s, q, k, v);
  for (const std::int64_t b : sample(s.batch)) {
    for (const std::int64_t h : sample(s.q_heads)) {
      for (const std::int64_t i : sample(s.seq)) {
        const Attention::Row r = ref.row(b, h, i);
        const float got_lse = lse[ref.lse_at(b, h, i)];
        if (!within(got_lse, r.lse, r.lse_scale)) {
          return mismatch(fmt::format("lse[{}, {}, {}]", b, h, i), got_lse, r.lse);
        }
        for (std::int64_t e = 0; e < s.head_dim; ++e) {
          const float got = o[ref.q_at(b, h, i) + at(e)];
          if (!within(got, r.o[at(e)], r.o_scale[at(e)])) {
            return mismatch(fmt::format("o[{}, {}, {}, {}]", b, h, i, e), got, r.o[at(e)]);
          }
        }
      }
    }
  }
  return all_finite({{"o", o}, {"lse", lse}});
}

std::string attention_backward(const ops::AttentionShape& s, Span q, Span k, Span v, Span do_,
                               Span dq, Span dk, Span dv) {
  const Attention ref(s, q, k, v);
  const auto d = at(s.head_dim);
  // dq[i] = scale * sum_j dS[i, j] k[j].
  for (const std::int64_t b : sample(s.batch)) {
    for (const std::int64_t h : sample(s.q_heads)) {
      for (const std::int64_t i : sample(s.seq)) {
        const Attention::Row r = ref.row(b, h, i);
        const float* do_i = &do_[ref.q_at(b, h, i)];
        const auto delta = ref.delta(r, do_i);
        std::vector<double> want(d), scale(d);
        for (std::int64_t j = 0; j < s.seq; ++j) {
          if (!ref.allowed(i, j)) continue;
          const Attention::Ds ds = ref.ds(r, b, h, j, delta, do_i);
          const std::size_t kj = ref.kv_at(b, h / ref.group(), j);
          for (std::size_t e = 0; e < d; ++e) {
            want[e] += ref.scale() * ds.value * k[kj + e];
            scale[e] += ref.scale() * ds.scale * std::abs(k[kj + e]);
          }
        }
        for (std::size_t e = 0; e < d; ++e) {
          const float got = dq[ref.q_at(b, h, i) + e];
          if (!within(got, want[e], scale[e])) {
            return mismatch(fmt::format("dq[{}, {}, {}, {}]", b, h, i, e), got, want[e]);
          }
        }
      }
    }
  }
  // dk[j] = scale * sum_i dS[i, j] q[i] and dv[j] = sum_i P[i, j] do[i], over every
  // query i of every q head reading the kv head.
  const std::vector<std::int64_t> keys = sample(s.seq);
  for (const std::int64_t b : sample(s.batch)) {
    for (const std::int64_t hk : sample(s.kv_heads)) {
      std::vector<double> dk_want(keys.size() * d), dk_scale(keys.size() * d);
      std::vector<double> dv_want(keys.size() * d), dv_scale(keys.size() * d);
      for (std::int64_t h = hk * ref.group(); h < (hk + 1) * ref.group(); ++h) {
        for (std::int64_t i = 0; i < s.seq; ++i) {
          if (std::none_of(keys.begin(), keys.end(),
                           [&ref, i](std::int64_t j) { return ref.allowed(i, j); })) {
            continue;
          }
          const Attention::Row r = ref.row(b, h, i);
          const float* do_i = &do_[ref.q_at(b, h, i)];
          const float* q_i = &q[ref.q_at(b, h, i)];
          const auto delta = ref.delta(r, do_i);
          for (std::size_t c = 0; c < keys.size(); ++c) {
            if (!ref.allowed(i, keys[c])) continue;
            const Attention::Ds ds = ref.ds(r, b, h, keys[c], delta, do_i);
            const double p = r.p[at(keys[c])];
            for (std::size_t e = 0; e < d; ++e) {
              dk_want[c * d + e] += ref.scale() * ds.value * q_i[e];
              dk_scale[c * d + e] += ref.scale() * ds.scale * std::abs(q_i[e]);
              dv_want[c * d + e] += p * do_i[e];
              dv_scale[c * d + e] += p * std::abs(do_i[e]);
            }
          }
        }
      }
      for (std::size_t c = 0; c < keys.size(); ++c) {
        const std::size_t kj = ref.kv_at(b, hk, keys[c]);
        for (std::size_t e = 0; e < d; ++e) {
          if (!within(dk[kj + e], dk_want[c * d + e], dk_scale[c * d + e])) {
            return mismatch(fmt::format("dk[{}, {}, {}, {}]", b, hk, keys[c], e), dk[kj + e],
                            dk_want[c * d + e]);
          }
          if (!within(dv[kj + e], dv_want[c * d + e], dv_scale[c * d + e])) {
            return mismatch(fmt::format("dv[{}, {}, {}, {}]", b, hk, keys[c], e), dv[kj + e],
                            dv_want[c * d + e]);
          }
        }
      }
    }
  }
  return all_finite({{"dq", dq}, {"dk", dk}, {"dv", dv}});
}

std::string adamw_step(const ops::AdamWArguments& a, const AdamWState& before, Span grad,
                       const AdamWState& after) {
  const double b1 = a.beta1;
  const double b2 = a.beta2;
  const double c1 = 1.0 - std::pow(b1, real(a.step));
  const double c2 = 1.0 - std::pow(b2, real(a.step));
  for (const std::int64_t i : sample(static_cast<std::int64_t>(grad.size()), 1024)) {
    const std::size_t n = at(i);
    const double g = grad[n];
    const double p = before.param[n];
    const double m = b1 * before.m[n] + (1.0 - b1) * g;
    const double m_scale = std::abs(b1 * before.m[n]) + std::abs((1.0 - b1) * g);
    const double v = b2 * before.v[n] + (1.0 - b2) * g * g;
    if (!within(after.m[n], m, m_scale)) return mismatch(fmt::format("m[{}]", i), after.m[n], m);
    if (!within(after.v[n], v, std::abs(v)))
      return mismatch(fmt::format("v[{}]", i), after.v[n], v);
    const double u = (m / c1) / (std::sqrt(v / c2) + a.eps);
    const auto want = [&](bool decays) {
      return p - a.lr * (u + (decays ? a.weight_decay * p : 0.0));
    };
    // The update's terms, and a thousandth of |p|: 1e-4 of it covers rounding p' to fp32.
    const double scale = a.lr * (std::abs(u) + a.weight_decay * std::abs(p)) + 1e-3 * std::abs(p);
    const bool decays = !a.cautious_decay || u * p > 0.0;
    // Where m' is within rounding of 0, fp32 may see the other sign of u.
    const bool unsure = a.cautious_decay && std::abs(m) <= 1e-6 * m_scale;
    if (!within(after.param[n], want(decays), scale) &&
        !(unsure && within(after.param[n], want(!decays), scale))) {
      return mismatch(fmt::format("param[{}]", i), after.param[n], want(decays));
    }
  }
  return all_finite({{"param", after.param}, {"m", after.m}, {"v", after.v}});
}

std::string lion_step(const ops::LionArguments& a, const LionState& before, Span grad,
                      const LionState& after) {
  const double b1 = a.beta1;
  const double b2 = a.beta2;
  for (const std::int64_t i : sample(static_cast<std::int64_t>(grad.size()), 1024)) {
    const std::size_t n = at(i);
    const double g = grad[n];
    const double p = before.param[n];
    const double c = b1 * before.m[n] + (1.0 - b1) * g;
    const double c_scale = std::abs(b1 * before.m[n]) + std::abs((1.0 - b1) * g);
    const auto want = [&](double u) {
      const bool decays = !a.cautious_decay || u * p > 0.0;
      return p - a.lr * (u + (decays ? a.weight_decay * p : 0.0));
    };
    const double u = c > 0.0 ? 1.0 : (c < 0.0 ? -1.0 : 0.0);
    const double scale = a.lr * (1.0 + a.weight_decay * std::abs(p)) + 1e-3 * std::abs(p);
    // Where c is within rounding of 0, fp32 may see another sign.
    const bool unsure = std::abs(c) <= 1e-6 * c_scale;
    const double got = after.param[n];
    if (!within(got, want(u), scale) &&
        !(unsure && (within(got, want(1.0), scale) || within(got, want(-1.0), scale) ||
                     within(got, want(0.0), scale)))) {
      return mismatch(fmt::format("param[{}]", i), got, want(u));
    }
    const double m = b2 * before.m[n] + (1.0 - b2) * g;
    const double m_scale = std::abs(b2 * before.m[n]) + std::abs((1.0 - b2) * g);
    if (!within(after.m[n], m, m_scale)) return mismatch(fmt::format("m[{}]", i), after.m[n], m);
  }
  return all_finite({{"param", after.param}, {"m", after.m}});
}

std::string quantize_fp8(const ops::QuantShape& s, Span x, std::span<const ops::Fp8E4M3> q,
                         Span scales) {
  constexpr double kMax = 448.0;  // the largest finite E4M3 value
  for (const std::int64_t r : sample(s.rows)) {
    std::size_t last = std::numeric_limits<std::size_t>::max();
    for (std::int64_t c = 0; c < s.cols; ++c) {
      const std::size_t si = quant_scale_at(s, r, c);
      if (si != last) {  // a new group
        const double amax = group_amax(s, x, r, c);
        const double want = amax > 0 ? amax / kMax : 1.0;
        if (!within(scales[si], want, want)) {
          return mismatch(fmt::format("scales[{}]", si), scales[si], want);
        }
        last = si;
      }
      const std::size_t i = at(r * s.cols + c);
      const double target = x[i] / static_cast<double>(scales[si]);
      const double got = decode_e4m3(q[i].bits);
      // Half a step, and a little for fp32's rounding of x / scale.
      const double half_step = 0.5 * e4m3_step(std::abs(target)) * (1.0 + 1e-5);
      if (!(std::abs(got - target) <= half_step)) {
        return fmt::format("q[{}, {}] = {} (bits {:#04x}), expected {} within {}", r, c, got,
                           q[i].bits, target, half_step);
      }
    }
  }
  return all_finite({{"scales", scales}});
}

std::string route_top_k(const ops::RouterShape& s, Span logits, const ops::Routing& r) {
  const auto k = at(s.top_k);
  const auto ne = at(s.experts);
  const std::size_t choices = at(s.tokens) * k;
  if (r.expert.size() != choices || r.weight.size() != choices || r.slot.size() != choices ||
      r.load.size() != ne) {
    return "the routing's sizes do not match the shape";
  }
  for (std::size_t a = 0; a < choices; ++a) {
    if (r.expert[a] < 0 || at(r.expert[a]) >= ne) {
      return fmt::format("expert[{}, {}] = {} is not an expert", a / k, a % k, r.expert[a]);
    }
    if (!(r.weight[a] >= 0.0F && r.weight[a] <= 1.0F)) {
      return fmt::format("weight[{}, {}] = {} is outside [0, 1]", a / k, a % k, r.weight[a]);
    }
  }
  std::vector<double> p(ne);
  for (const std::int64_t t : sample(s.tokens, 256)) {
    const Span row = logits.subspan(at(t) * ne, ne);
    const double mx = *std::max_element(row.begin(), row.end());
    double sum = 0;
    for (std::size_t e = 0; e < ne; ++e) {
      p[e] = std::exp(row[e] - mx);
      sum += p[e];
    }
    for (double& pe : p) pe /= sum;
    const auto chosen = [&](std::size_t c) { return at(r.expert[at(t) * k + c]); };
    double kept = 0;
    for (std::size_t c = 0; c < k; ++c) {
      kept += p[chosen(c)];
      // Best first; near ties (within fp32's rounding) may go either way.
      if (c > 0 && p[chosen(c)] > p[chosen(c - 1)] * (1 + 1e-6)) {
        return fmt::format("expert[{}, {}] = {} (p = {}) is more probable than choice {} (p = {})",
                           t, c, chosen(c), p[chosen(c)], c - 1, p[chosen(c - 1)]);
      }
      for (std::size_t c2 = 0; c2 < c; ++c2) {
        if (chosen(c2) == chosen(c)) return fmt::format("token {} chose expert {} twice", t, c);
      }
    }
    for (std::size_t e = 0; e < ne; ++e) {  // none left out is more probable than the last kept
      bool is_chosen = false;
      for (std::size_t c = 0; c < k; ++c) is_chosen = is_chosen || chosen(c) == e;
      if (!is_chosen && p[e] > p[chosen(k - 1)] * (1 + 1e-6)) {
        return fmt::format("expert[{}, {}] = {} (p = {}), expected {} (p = {}), left out", t, k - 1,
                           chosen(k - 1), p[chosen(k - 1)], e, p[e]);
      }
    }
    for (std::size_t c = 0; c < k; ++c) {
      const double want = s.renormalize ? p[chosen(c)] / kept : p[chosen(c)];
      const float got = r.weight[at(t) * k + c];
      if (!within(got, want, want)) return mismatch(fmt::format("weight[{}, {}]", t, c), got, want);
    }
  }
  // Slots: every first choice in token order, then every second, ... up to capacity.
  std::vector<std::int64_t> load(ne, 0);
  for (std::size_t c = 0; c < k; ++c) {
    for (std::size_t t = 0; t < at(s.tokens); ++t) {
      std::int64_t& l = load[at(r.expert[t * k + c])];
      const std::int64_t want = l < s.capacity ? l++ : -1;
      if (r.slot[t * k + c] != want) {
        return mismatch(fmt::format("slot[{}, {}]", t, c), r.slot[t * k + c], real(want));
      }
    }
  }
  for (std::size_t e = 0; e < ne; ++e) {
    if (r.load[e] != load[e]) return mismatch(fmt::format("load[{}]", e), r.load[e], real(load[e]));
  }
  return "pass";
}

std::string permute_tokens(const ops::RouterShape& s, const ops::Routing& r, std::int64_t hidden,
                           Span x, Span buffer) {
  const auto k = at(s.top_k);
  const auto cap = s.capacity;
  // Which token fills each slot of each expert (-1: none), from the routing.
  std::vector<std::int64_t> filler(at(s.experts * cap), -1);
  std::vector<std::int64_t> load(at(s.experts), 0);
  for (std::size_t a = 0; a < r.slot.size(); ++a) {
    if (r.slot[a] < 0) continue;
    filler[at(r.expert[a] * cap + r.slot[a])] = static_cast<std::int64_t>(a / k);
    ++load[at(r.expert[a])];
  }
  for (std::int64_t e = 0; e < s.experts; ++e) {
    std::vector<std::int64_t> slots = sample(cap);
    if (load[at(e)] > 0) slots.push_back(load[at(e)] - 1);  // the last filled
    if (load[at(e)] < cap) slots.push_back(load[at(e)]);    // the first empty
    for (const std::int64_t slot : slots) {
      const std::int64_t t = filler[at(e * cap + slot)];
      for (std::int64_t j = 0; j < hidden; ++j) {
        const float want = t >= 0 ? x[at(t * hidden + j)] : 0.0F;
        const float got = buffer[at((e * cap + slot) * hidden + j)];
        if (got != want) return mismatch(fmt::format("buffer[{}, {}, {}]", e, slot, j), got, want);
      }
    }
  }
  return all_finite({{"buffer", buffer}});
}

}  // namespace myriad::calibration::reference
