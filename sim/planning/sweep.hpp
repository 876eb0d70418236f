// Sweeps over scenario keys (`myriad sweep`): the axes a user varies, the
// configurations they span, and the Pareto front of what was evaluated.
//
//   --vary parallelism.tp=1,2,4,8        a list (values as YAML scalars, units allowed)
//   --vary cluster.gpus=1024..8192*2     a geometric range: 1024, 2048, 4096, 8192
//   --vary parallelism.micro_batch=1..4  an arithmetic range, step 1 (or ..4:2, step 2)
//
// Axes combine as a cartesian product, or zipped (all advance together; equal
// lengths). Each configuration is a list of `key=value` overrides (overrides.hpp)
// in the order of the axes.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace myriad::sim {

struct SweepAxis {
  std::string key;                  // dotted scenario key
  std::vector<std::string> values;  // as given (YAML scalars)
};

// Parses `key=list|range`; throws std::invalid_argument naming what is wrong.
SweepAxis parse_axis(const std::string& text);

// The most configurations one sweep may span. A sweep estimates about 1,000
// configurations a second, valid or refused by the scenario checks (the shipped
// examples, 2-core development machine, 2026-12), so this is under two minutes.
inline constexpr std::size_t kMostSweepConfigs = 100000;

// The configurations the axes span: each a list of `key=value`, one per axis.
// Throws std::invalid_argument when zipped axes differ in length, a key is
// varied twice, or the configurations would exceed `limit` (--max-configs, at
// most kMostSweepConfigs), naming each axis's length and the longest.
std::vector<std::vector<std::string>> expand_axes(const std::vector<SweepAxis>& axes, bool zip,
                                                  std::size_t limit);

// An objective and which way is better.
struct Objective {
  std::string name;  // days, gpu-hours, gpus, step-time, tokens-per-s, mfu, memory, cost
  bool maximize = false;
};

// The objectives a sweep or a plan can rank by, with their direction.
const std::vector<Objective>& known_objectives();
// "days,gpus": throws std::invalid_argument naming an unknown one (and listing them).
std::vector<Objective> parse_objectives(const std::string& text);

// For each point (values in the order of `objectives`), whether no other point
// is at least as good in every objective and better in one. Points that are not
// candidates (`candidate[i]` false: invalid, or over memory) are never on the
// front and never dominate.
std::vector<bool> pareto_front(const std::vector<std::vector<double>>& points,
                               const std::vector<Objective>& objectives,
                               const std::vector<bool>& candidate);

}  // namespace myriad::sim
