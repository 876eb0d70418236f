#include "sim/cost/ecmp.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace myriad::sim {
namespace {

// Small enough for the exact recursion: ports x flows x (k + 1) steps.
constexpr double kExactWork = 1e5;

// P(each of U ports gets at most k of m flows hashed uniformly): A_i(r), the
// probability that r flows on i ports leave none above k, by how many of them
// the i-th port takes (binomial with p = 1 / i).
double exact_within(int flows, int ports, int k) {
  if (static_cast<double>(k) * ports < flows) return 0;
  std::vector<double> a(static_cast<std::size_t>(flows) + 1, 0.0);
  std::vector<double> next(a.size(), 0.0);
  std::vector<double> log_factorial(a.size(), 0.0);
  for (std::size_t n = 1; n < log_factorial.size(); ++n) {
    log_factorial[n] = log_factorial[n - 1] + std::log(static_cast<double>(n));
  }
  const auto lf = [&](int n) { return log_factorial[static_cast<std::size_t>(n)]; };
  for (int r = 0; r <= std::min(k, flows); ++r) a[static_cast<std::size_t>(r)] = 1;  // one port
  for (int i = 2; i <= ports; ++i) {
    const double log_p = -std::log(static_cast<double>(i));
    const double log_q = std::log1p(-1.0 / i);
    for (int r = 0; r <= flows; ++r) {
      double sum = 0;
      // C(r, j) p^j (1-p)^(r-j), j = 0.. min(k, r), in logs.
      for (int j = 0; j <= std::min(k, r); ++j) {
        const double log_term = lf(r) - lf(j) - lf(r - j) + j * log_p + (r - j) * log_q;
        sum += std::exp(log_term) * a[static_cast<std::size_t>(r - j)];
      }
      next[static_cast<std::size_t>(r)] = sum;
    }
    std::swap(a, next);
  }
  return std::clamp(a[static_cast<std::size_t>(flows)], 0.0, 1.0);
}

// log P(Poisson(lambda) <= k).
double log_poisson_cdf(double lambda, int k) {
  if (lambda <= 0) return 0;
  double term = std::exp(-lambda);
  double sum = term;
  for (int j = 1; j <= k; ++j) {
    term *= lambda / j;
    sum += term;
  }
  return std::log(std::min(1.0, sum));
}

double log_within(const HashedPorts& g, int k) {
  const auto flows = static_cast<int>(std::lround(g.flows));
  const auto ports = static_cast<int>(std::lround(std::max(1.0, g.ports)));
  if (flows <= 0) return 0;
  if (static_cast<double>(ports) * flows * (k + 1) <= kExactWork) {
    const double p = exact_within(flows, ports, k);
    return p > 0 ? g.count * std::log(p) : -INFINITY;
  }
  return g.count * ports * log_poisson_cdf(static_cast<double>(flows) / ports, k);
}

}  // namespace

double all_ports_within(std::span<const HashedPorts> groups, int k) {
  double log_p = 0;
  for (const auto& g : groups) log_p += log_within(g, k);
  return std::exp(log_p);
}

EcmpSlowdown ecmp_slowdown(std::span<const HashedPorts> groups, double demand) {
  if (!(demand > 0)) throw std::invalid_argument("ecmp_slowdown: a positive demand expected");
  int most = 0;  // the most flows any group has: no port carries more
  for (const auto& g : groups) most = std::max(most, static_cast<int>(std::lround(g.flows)));
  EcmpSlowdown out;
  if (most == 0) return out;
  out.expected = 0;
  bool low_set = false;
  bool high_set = false;
  double below = 0;  // P(M <= k - 1)
  for (int k = 0; k <= most; ++k) {
    const double within = k == most ? 1.0 : all_ports_within(groups, k);
    const double slowdown = std::max(1.0, k * demand);
    out.expected += (within - below) * slowdown;
    if (!low_set && within >= 0.1) {
      out.low = slowdown;
      low_set = true;
    }
    if (!high_set && within >= 0.9) {
      out.high = slowdown;
      high_set = true;
    }
    below = within;
    if (within >= 1 - 1e-12) break;
  }
  return out;
}

}  // namespace myriad::sim
