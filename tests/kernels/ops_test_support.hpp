// Helpers for the compute-kernel tests: random inputs, NaN-poisoned outputs,
// float64 references and a finite-difference gradient to check backwards.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace myriad::kernels::ops::testing {

// Uniform in [lo, hi): fresh, never all zeros.
inline std::vector<float> random_floats(std::mt19937_64& rng, std::size_t n, float lo = -1.0F,
                                        float hi = 1.0F) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// An output buffer every element of which must be written.
inline std::vector<float> poisoned(std::size_t n) {
  return std::vector<float>(n, std::numeric_limits<float>::quiet_NaN());
}

inline std::vector<double> to_double(std::span<const float> x) { return {x.begin(), x.end()}; }

// Every element finite and |got - want| <= atol + rtol * |want|; reports the worst.
inline void expect_close(std::span<const float> got, std::span<const double> want, double atol,
                         double rtol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  std::size_t bad = 0;
  std::size_t worst = 0;
  double worst_excess = -1.0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(static_cast<double>(got[i]) - want[i]);
    const double excess = std::isfinite(got[i]) ? err - (atol + rtol * std::fabs(want[i]))
                                                : std::numeric_limits<double>::infinity();
    if (excess > 0.0) ++bad;
    if (excess > worst_excess) {
      worst_excess = excess;
      worst = i;
    }
  }
  EXPECT_EQ(bad, 0U) << what << ": " << bad << " of " << got.size()
                     << " elements out of tolerance; worst at " << worst << ": got " << got[worst]
                     << ", expected " << want[worst] << " (atol " << atol << ", rtol " << rtol
                     << ")";
}

using Function = std::function<std::vector<double>(const std::vector<double>&)>;

// Gradient of sum(dy * f(x)) with respect to x, by central differences in float64.
inline std::vector<double> numeric_grad(const Function& f, std::vector<double> x,
                                        const std::vector<double>& dy, double h = 1e-6) {
  std::vector<double> grad(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double keep = x[i];
    x[i] = keep + h;
    const std::vector<double> up = f(x);
    x[i] = keep - h;
    const std::vector<double> down = f(x);
    x[i] = keep;
    double acc = 0.0;
    for (std::size_t j = 0; j < dy.size(); ++j) acc += dy[j] * (up[j] - down[j]);
    grad[i] = acc / (2.0 * h);
  }
  return grad;
}

}  // namespace myriad::kernels::ops::testing
