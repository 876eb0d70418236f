// A policy set's runs over seeds as one job's outcome: days to the target, ETTR,
// whether every seed reached it, GPU-hours (the job and its spares) and goodput.
// What `myriad plan --rescore campaign` ranks a layout by.
#pragma once

#include "sim/campaign/campaign_report.hpp"

namespace myriad::sim::campaign {

struct PolicyOutcome {
  Interval days;  // wall-clock days, over seeds
  Interval ettr;
  bool reached = true;      // every seed reached the token target
  double gpu_hours = 0;     // job and hot spares, the mean over seeds
  double tokens_per_s = 0;  // tokens over wall-clock time, the mean over seeds
};

PolicyOutcome policy_outcome(const PolicyReport& p, int gpus_per_node);

}  // namespace myriad::sim::campaign
