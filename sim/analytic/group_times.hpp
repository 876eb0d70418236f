// Seconds (or shares) by communication group: one slot per models::GroupKind
// (tp, cp, ep, dp, pp), so that a new group is a new enum value, not a new field
// in every struct that counts time by group.
#pragma once

#include <array>
#include <cstddef>

#include "models/plan/collective.hpp"

namespace myriad::sim {

inline constexpr std::array kGroupKinds = {models::GroupKind::tp, models::GroupKind::cp,
                                           models::GroupKind::ep, models::GroupKind::dp,
                                           models::GroupKind::pp};

static_assert(static_cast<std::size_t>(models::GroupKind::pp) + 1 == kGroupKinds.size(),
              "kGroupKinds lists every GroupKind in order");

struct GroupTimes {
  std::array<double, kGroupKinds.size()> by{};

  double& operator[](models::GroupKind g) { return by[static_cast<std::size_t>(g)]; }
  double operator[](models::GroupKind g) const { return by[static_cast<std::size_t>(g)]; }
  [[nodiscard]] double total() const {
    double t = 0;
    for (const double x : by) t += x;
    return t;
  }
  GroupTimes& operator+=(const GroupTimes& o) {
    for (std::size_t i = 0; i < by.size(); ++i) by[i] += o.by[i];
    return *this;
  }
  GroupTimes& operator*=(double k) {
    for (double& x : by) x *= k;
    return *this;
  }
  // Exactly equal, slot by slot (a cache's key).
  bool operator==(const GroupTimes&) const = default;
  [[nodiscard]] GroupTimes scaled(double k) const {
    GroupTimes t = *this;
    t *= k;
    return t;
  }
};

}  // namespace myriad::sim
