// `myriad campaign`: days of training with failures, stragglers and recovery policies. Its options,
// as the command line fills them (campaign_options.cpp, CLI11), and the run that reads them
// (campaign_command.cpp).
#pragma once

#include <string>
#include <vector>

#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

struct CampaignCliOptions {
  ScenarioOptions scenario;
  std::string profile;
  std::string json_file;
  std::string events_file;
  std::string events_level = "failures";
  std::string report_file;
  int event_seed = 0;
  bool wide = false;
  std::string step_engine = "analytic";
  int step_engine_states = 3;
  std::vector<std::string> vary;
  double days = 0;
  std::string tokens;
  int seeds = 8;
  int threads = 0;
};

int run_campaign(const CampaignCliOptions& o, Streams io, const Environment& env);

}  // namespace myriad::cli
