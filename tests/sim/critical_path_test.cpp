// The step engine's timelines: a step reported only when every rank group
// finished at a finite time.
#include "sim/program/critical_path.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace myriad::sim {
namespace {

std::vector<Span> finished_group() {
  return {{0, 1, Activity::forward}, {1, 3, Activity::backward}, {3, 3.5, Activity::optimizer}};
}

// Expectation: a complete step passes; a group left blocked (SimGrid's
// "Deadlock detected" leaves it without its optimizer step) or a non-finite
// clock is an internal error, never a result.
TEST(RequireFinished, OnlyACompleteFiniteStepIsAResult) {
  EXPECT_NO_THROW(require_finished({finished_group(), finished_group()}, 3.5));
  std::vector<Span> blocked = finished_group();
  blocked.pop_back();
  try {
    require_finished({finished_group(), blocked, {}}, 3.5);
    FAIL() << "accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("2 of 3 rank groups unfinished"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(require_finished({finished_group()}, std::numeric_limits<double>::infinity()),
               std::runtime_error);
  EXPECT_THROW(require_finished({finished_group()}, std::nan("")), std::runtime_error);
}

}  // namespace
}  // namespace myriad::sim
