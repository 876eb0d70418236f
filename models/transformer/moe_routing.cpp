#include "models/transformer/moe_routing.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

namespace myriad::models {
namespace {

// Terms a Zipf sum adds one by one before the Euler-Maclaurin formula takes the
// rest: past n = 32 its first three correction terms leave an error below 1e-13
// of the sum, and the load costs O(ep) rather than O(experts) (a plan estimates
// thousands of layouts of a model of up to 2^20 experts, each layer asking).
constexpr int kZipfTermsSummed = 32;

// sum of n^-s for n in [a, b], 1 <= a <= b.
double zipf_sum(double a, double b, double s) {
  double sum = 0;
  for (; a <= b && a < kZipfTermsSummed; ++a) sum += std::pow(a, -s);
  if (a > b) return sum;
  // Euler-Maclaurin: the integral, the ends' halves, then f' and f''' terms.
  const auto f = [s](double x) { return std::pow(x, -s); };
  const double integral =
      s == 1 ? std::log(b / a) : (std::pow(b, 1 - s) - std::pow(a, 1 - s)) / (1 - s);
  const double d1 = -s * (std::pow(b, -s - 1) - std::pow(a, -s - 1));
  const double d3 = -s * (s + 1) * (s + 2) * (std::pow(b, -s - 3) - std::pow(a, -s - 3));
  return sum + integral + (f(a) + f(b)) / 2 + d1 / 12 - d3 / 720;
}

// An expert's weight under uniform or Zipf routing (shares are weights over their
// sum), with sums over index ranges in closed form.
struct Weights {
  bool zipf = false;
  double s = 0;

  [[nodiscard]] double at(int e) const { return zipf ? std::pow(e + 1.0, -s) : 1.0; }
  // sum over experts [lo, hi)
  [[nodiscard]] double sum(int lo, int hi) const {
    if (hi <= lo) return 0;
    return zipf ? zipf_sum(lo + 1.0, hi, s) : static_cast<double>(hi - lo);
  }
  // How many experts, from index 0, weigh more than `t` (weights never rise with
  // the index, s > 0).
  [[nodiscard]] int heavier_than(double t, int experts) const {
    if (!zipf) return 1 > t ? experts : 0;
    const double guess = std::ceil(std::pow(t, -1 / s) - 1);
    int n = static_cast<int>(std::clamp(guess, 0.0, static_cast<double>(experts)));
    while (n < experts && at(n) > t) ++n;
    while (n > 0 && at(n - 1) <= t) --n;
    return n;
  }
};

// Rank by rank, the slots each holds and what the group keeps, into a MoeLoad.
struct LoadTally {
  MoeLoad load;
  double kept = 0;
  double total = 0;
  void add_rank(double slots) {
    load.busiest_slots = std::max(load.busiest_slots, slots);
    load.rank_slots.push_back(slots);
    total += slots;
  }
  MoeLoad finish(int ep, double group) {
    load.mean_slots = total / ep;
    load.dropped = std::max(0.0, 1 - kept / group);
    return load;
  }
};

// The load from each expert's share, one by one (a measured histogram).
MoeLoad load_of_shares(const std::vector<double>& shares, const scenario::MoeSpec& moe, int ep) {
  const auto experts = static_cast<int>(shares.size());
  const double group = ep * static_cast<double>(moe.top_k);
  const double capacity = moe.capacity_factor > 0 ? moe.capacity_factor * group / experts : 0;
  const int local = std::max(1, experts / ep);
  LoadTally tally;
  for (int r = 0; r < ep; ++r) {
    double rank = 0;
    for (int e = r * local; e < std::min(experts, (r + 1) * local); ++e) {
      const double routed = group * shares[e];
      tally.kept += capacity > 0 ? std::min(routed, capacity) : routed;
      rank += capacity > 0 ? capacity : routed;  // padded to capacity
    }
    tally.add_rank(rank);
  }
  return tally.finish(ep, group);
}

}  // namespace

std::vector<double> expert_shares(const scenario::MoeSpec& moe) {
  const int experts = moe.active_experts();
  std::vector<double> shares(static_cast<std::size_t>(std::max(experts, 0)), 1.0);
  switch (moe.skew) {
    case scenario::RouterSkew::uniform:
      break;
    case scenario::RouterSkew::zipf:
      for (int e = 0; e < experts; ++e) shares[e] = std::pow(e + 1.0, -moe.zipf_exponent);
      break;
    case scenario::RouterSkew::histogram:
      if (moe.histogram.size() == shares.size()) shares = moe.histogram;
      break;
  }
  double sum = 0;
  for (const double s : shares) sum += s;
  for (double& s : shares) s = sum > 0 ? s / sum : 0;
  return shares;
}

namespace {

MoeLoad compute_load(const scenario::MoeSpec& moe, int ep) {
  const int experts = moe.active_experts();
  if (experts <= 0 || ep < 1) return {};
  const bool closed_form = moe.skew == scenario::RouterSkew::uniform ||
                           (moe.skew == scenario::RouterSkew::zipf && moe.zipf_exponent > 0);
  if (!closed_form) return load_of_shares(expert_shares(moe), moe, ep);
  const Weights w{moe.skew == scenario::RouterSkew::zipf, moe.zipf_exponent};
  // Slots the group routes per token a rank routes: ep ranks, top_k each.
  const double group = ep * static_cast<double>(moe.top_k);
  const double whole = w.sum(0, experts);
  const double capacity = moe.capacity_factor > 0 ? moe.capacity_factor * group / experts : 0;
  // The experts routed more than their capacity: the first ones, shares falling.
  const int over = capacity > 0 ? w.heavier_than(capacity * whole / group, experts) : 0;
  const int local = std::max(1, experts / ep);
  LoadTally tally;
  for (int r = 0; r < ep; ++r) {
    const int lo = static_cast<int>(std::min<long long>(experts, 1LL * r * local));
    const int hi = static_cast<int>(std::min<long long>(experts, (r + 1LL) * local));
    double rank = 0;
    if (capacity > 0) {
      const int capped = std::clamp(over, lo, hi) - lo;
      tally.kept += capped * capacity + group * w.sum(lo + capped, hi) / whole;
      rank = (hi - lo) * capacity;  // padded to capacity
    } else {
      rank = group * w.sum(lo, hi) / whole;
      tally.kept += rank;
    }
    tally.add_rank(rank);
  }
  return tally.finish(ep, group);
}

// What a load depends on: the routed experts, the router's spread, the capacity
// and the ranks.
struct LoadKey {
  int experts = 0;
  int top_k = 0;
  int ep = 0;
  double capacity_factor = 0;
  scenario::RouterSkew skew = scenario::RouterSkew::uniform;
  double zipf_exponent = 0;
  std::vector<double> histogram;
  bool operator==(const LoadKey&) const = default;
};

LoadKey key_of(const scenario::MoeSpec& moe, int ep) {
  LoadKey k{moe.active_experts(), moe.top_k, ep, moe.capacity_factor, moe.skew,
            moe.zipf_exponent,    {}};
  if (moe.skew == scenario::RouterSkew::histogram) k.histogram = moe.histogram;
  return k;
}

}  // namespace

const MoeLoad& moe_load(const scenario::MoeSpec& moe, int ep) {
  // An estimate asks for the same load for every stage's memory, the layer
  // program and the report: kept per thread for the last few asked for.
  struct Kept {
    LoadKey key;
    MoeLoad load;
    bool used = false;
  };
  constexpr std::size_t kKept = 4;
  thread_local std::array<Kept, kKept> kept;
  thread_local std::size_t oldest = 0;
  LoadKey key = key_of(moe, ep);
  for (const Kept& k : kept) {
    if (k.used && k.key == key) return k.load;
  }
  Kept& slot = kept[oldest];
  oldest = (oldest + 1) % kKept;
  slot.load = compute_load(moe, ep);
  slot.key = std::move(key);
  slot.used = true;
  return slot.load;
}

}  // namespace myriad::models
