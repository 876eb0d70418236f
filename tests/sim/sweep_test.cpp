// Sweep axes, their expansion and the Pareto front (sim/planning/sweep.hpp).
#include "sim/planning/sweep.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace myriad::sim {
namespace {

std::string error_of(const std::string& text) {
  try {
    (void)parse_axis(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(SweepAxis, ListsAndRanges) {
  EXPECT_EQ(parse_axis("parallelism.tp=1, 2,4").values, (std::vector<std::string>{"1", "2", "4"}));
  EXPECT_EQ(parse_axis("cluster.nic_bandwidth=200Gbps,400Gbps").values,
            (std::vector<std::string>{"200Gbps", "400Gbps"}));
  EXPECT_EQ(parse_axis("parallelism.micro_batch=1..4").values,
            (std::vector<std::string>{"1", "2", "3", "4"}));
  EXPECT_EQ(parse_axis("x=2..9:3").values, (std::vector<std::string>{"2", "5", "8"}));
  EXPECT_EQ(parse_axis("cluster.gpus=1024..8192*2").values,
            (std::vector<std::string>{"1024", "2048", "4096", "8192"}));
  EXPECT_EQ(parse_axis("x=0.5..1:0.25").values, (std::vector<std::string>{"0.5", "0.75", "1"}));
  EXPECT_EQ(parse_axis("x=3").key, "x");
  // A value may be a list itself: its commas do not split the axis.
  EXPECT_EQ(parse_axis("parallelism.offload_modules=[core_attn],[core_attn, attn_norm],[]").values,
            (std::vector<std::string>{"[core_attn]", "[core_attn, attn_norm]", "[]"}));
  EXPECT_EQ(parse_axis("parallelism.stage_layers=[3,4,4,3],[4,4,3,3]").values,
            (std::vector<std::string>{"[3,4,4,3]", "[4,4,3,3]"}));
}

TEST(SweepAxis, RefusesWhatItCannotRead) {
  EXPECT_NE(error_of("parallelism.tp").find("expected KEY=V1,V2"), std::string::npos);
  EXPECT_NE(error_of("=1,2").find("expected KEY="), std::string::npos);
  EXPECT_NE(error_of("x=1,,2").find("an empty value"), std::string::npos);
  EXPECT_NE(error_of("x=1..y").find("a range is FROM..TO"), std::string::npos);
  EXPECT_NE(error_of("x=4..1").find("ends before it starts"), std::string::npos);
  EXPECT_NE(error_of("x=1..4:0").find("step must be above 0"), std::string::npos);
  EXPECT_NE(error_of("x=0..4*2").find("geometric range"), std::string::npos);
  EXPECT_NE(error_of("x=1..1e9").find("more than 100000 values"), std::string::npos);
}

TEST(SweepAxes, CartesianLastFastestOrZipped) {
  const std::vector<SweepAxis> axes = {{"a", {"1", "2"}}, {"b", {"x", "y"}}};
  const auto product = expand_axes(axes, false, 100);
  ASSERT_EQ(product.size(), 4U);
  EXPECT_EQ(product[0], (std::vector<std::string>{"a=1", "b=x"}));
  EXPECT_EQ(product[1], (std::vector<std::string>{"a=1", "b=y"}));
  EXPECT_EQ(product[3], (std::vector<std::string>{"a=2", "b=y"}));
  const auto zipped = expand_axes(axes, true, 100);
  ASSERT_EQ(zipped.size(), 2U);
  EXPECT_EQ(zipped[1], (std::vector<std::string>{"a=2", "b=y"}));
  EXPECT_EQ(expand_axes({}, false, 1).size(), 1U);  // the scenario as it stands
  EXPECT_THROW((void)expand_axes(axes, false, 3), std::invalid_argument);
  EXPECT_THROW((void)expand_axes({{"a", {"1"}}, {"a", {"2"}}}, false, 10), std::invalid_argument);
  EXPECT_THROW((void)expand_axes({{"a", {"1"}}, {"b", {"1", "2"}}}, true, 10),
               std::invalid_argument);
}

// Expectation: axes past the limit are refused before a configuration is built,
// zipped or not, saying how many they span, each axis's length and which to
// narrow, beside the bound every limit stays under.
TEST(SweepAxes, TooManyConfigurationsNameTheAxes) {
  const std::vector<std::string> thousand(1000, "1");
  const std::vector<SweepAxis> axes = {{"parallelism.tp", {"1", "2"}}, {"training.seed", thousand}};
  try {
    (void)expand_axes(axes, false, 1999);
    ADD_FAILURE() << "2,000 configurations past a limit of 1,999";
  } catch (const std::invalid_argument& e) {
    const std::string why = e.what();
    EXPECT_NE(why.find("2000 configurations (parallelism.tp 2 x training.seed 1000)"),
              std::string::npos)
        << why;
    EXPECT_NE(why.find("the limit of 1999 (--max-configs"), std::string::npos) << why;
    EXPECT_NE(why.find(std::to_string(kMostSweepConfigs)), std::string::npos) << why;
    EXPECT_NE(why.find("narrow --vary training.seed (1000 values)"), std::string::npos) << why;
  }
  const std::vector<SweepAxis> zipped = {{"a", thousand}, {"b", thousand}};
  EXPECT_EQ(expand_axes(zipped, true, 1000).size(), 1000U);
  EXPECT_THROW((void)expand_axes(zipped, true, 999), std::invalid_argument);
}

TEST(SweepObjectives, KnownNamesAndDirections) {
  const auto o = parse_objectives("days,tokens-per-s");
  ASSERT_EQ(o.size(), 2U);
  EXPECT_FALSE(o[0].maximize);
  EXPECT_TRUE(o[1].maximize);
  EXPECT_THROW((void)parse_objectives("days,speed"), std::invalid_argument);
  EXPECT_THROW((void)parse_objectives("days,days"), std::invalid_argument);
}

// Expectation: with days (min) and tokens/s (max), a point is on the front when
// nothing is at least as good on both and better on one; non-candidates neither
// join nor dominate; equal points both stay.
TEST(ParetoFront, NonDominatedCandidatesOnly) {
  const auto objectives = parse_objectives("days,tokens-per-s");
  const std::vector<std::vector<double>> points = {
      {10, 100},  // front
      {5, 50},    // front
      {10, 90},   // dominated by the first
      {1, 1000},  // would dominate everything, but is not a candidate
      {5, 50},    // equal to the second: both stay
      {20, 100},  // dominated by the first
  };
  const std::vector<bool> candidate = {true, true, true, false, true, true};
  const auto front = pareto_front(points, objectives, candidate);
  EXPECT_EQ(front, (std::vector<bool>{true, true, false, false, true, false}));
}

// Expectation: the front is the pairwise definition's, for one, two and three
// objectives, over points with many ties and repeats (values from a small set).
TEST(ParetoFront, IsThePairwiseDefinitionWithTies) {
  const auto all = parse_objectives("days,tokens-per-s,gpus");
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> value(0, 4);
  for (std::size_t count = 1; count <= 3; ++count) {
    const std::vector<Objective> objectives(all.begin(), all.begin() + static_cast<long>(count));
    for (int trial = 0; trial < 50; ++trial) {
      std::vector<std::vector<double>> points(40);
      std::vector<bool> candidate;
      for (auto& p : points) {
        for (std::size_t k = 0; k < count; ++k) p.push_back(value(rng));
        candidate.push_back(value(rng) > 0);
      }
      std::vector<bool> want(points.size(), false);
      for (std::size_t i = 0; i < points.size(); ++i) {
        bool dominated = false;
        for (std::size_t j = 0; j < points.size(); ++j) {
          bool no_worse = true;
          bool better = false;
          for (std::size_t k = 0; k < count; ++k) {
            const double x = objectives[k].maximize ? -points[j][k] : points[j][k];
            const double y = objectives[k].maximize ? -points[i][k] : points[i][k];
            no_worse = no_worse && x <= y;
            better = better || x < y;
          }
          dominated = dominated || (candidate[j] && no_worse && better);
        }
        want[i] = candidate[i] && !dominated;
      }
      EXPECT_EQ(pareto_front(points, objectives, candidate), want) << count << " objectives";
    }
  }
}

// Expectation: 100,000 points all on the front of two objectives (days rising
// as tokens/s rise) are found in well under a second; compared pairwise, as
// before, they took minutes (a sweep at --max-configs's bound with --pareto).
TEST(ParetoFront, ScalesToTheSweepBound) {
  const auto objectives = parse_objectives("days,tokens-per-s");
  std::vector<std::vector<double>> points;
  for (std::size_t i = 0; i < kMostSweepConfigs; ++i) {
    points.push_back({static_cast<double>(i), static_cast<double>(i)});
  }
  const auto front = pareto_front(points, objectives, std::vector<bool>(points.size(), true));
  EXPECT_EQ(std::count(front.begin(), front.end(), true),
            static_cast<std::ptrdiff_t>(kMostSweepConfigs));
}

}  // namespace
}  // namespace myriad::sim
