// `myriad plan`: the layouts that fit, ranked. Its options, as the command line fills them
// (plan_options.cpp, CLI11), and the run that reads them (plan_command.cpp).
#pragma once

#include <string>
#include <vector>

#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

struct PlanCliOptions {
  ScenarioOptions scenario;
  std::string profile;
  std::string objective;  // "" : days, or with --max-days cost (priced) or gpu-hours
  int top = 10;
  double headroom = 0.9;
  std::string global_batch;
  std::string prune;      // pruning variants, comma-separated
  std::string schedules;  // pipeline schedules, comma-separated (--schedules)
  std::string csv_file;
  std::vector<std::string> rescore;  // step, campaign
  int seeds = 8;
  std::string report_file;
  std::string stages = "uniform";  // uniform | balanced
  bool partial_recompute = false;  // also the fewest layers recomputed that fit
  bool offload = false;            // also the fewest layers offloaded that fit
  double max_days = 0;             // --max-days: a deadline; 0 for none
  std::string gpus;                // --gpus: GPU counts, a list or range
  std::vector<std::string> vary;   // --vary KEY=VALUES: hardware (or any key) compared
  bool zip = false;                // --zip: the --vary axes advance together
};

int run_plan(const PlanCliOptions& o, Streams io, const Environment& env);

}  // namespace myriad::cli
