// A policy set turned into the durations the engine needs: checkpoint stall,
// upload and load times from sizes and bandwidths, and the checkpoint interval
// by its rule (Young 1974: sqrt(2 C M); Daly 2006: the higher-order form).
#pragma once

#include "models/scenario/scenario.hpp"

namespace myriad::sim::campaign {

struct ResolvedPolicy {
  const scenario::PolicySpec* spec = nullptr;
  double checkpoint_bytes = 0;
  double stall_s = 0;     // blocking per checkpoint (stage; plus upload when not async)
  double upload_s = 0;    // background upload, when async
  double load_s = 0;      // reading the checkpoint back on restart
  double interval_s = 0;  // compute time between checkpoints
  double job_mtbf_s = 0;  // M: the job's mean time between interruptions
  double detect_s = 0;    // detection + diagnosis
  double restart_s = 0;   // job start + communicator init + load + warm-up
};

// Failures per second of one node, all processes together.
double node_failure_rate(const scenario::FaultsSpec& f);
double young_interval(double cost_s, double mtbf_s);
double daly_interval(double cost_s, double mtbf_s);

ResolvedPolicy resolve_policy(const scenario::Scenario& s, const scenario::PolicySpec& p);

}  // namespace myriad::sim::campaign
