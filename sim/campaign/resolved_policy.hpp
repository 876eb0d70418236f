// A policy set turned into the durations the engine needs: checkpoint stall,
// upload and load times from sizes and bandwidths, and the checkpoint interval
// by its rule (Young 1974: sqrt(2 C M); Daly 2006: the higher-order form),
// computed on the checkpoint's effective cost and never shorter than what the
// storage can take (one upload, or one peer copy for in-memory checkpoints).
// The stall is what every rank waits for: the coordination of the save
// (planning, metadata, barrier) and the busiest GPU's copy of its part of the
// state to host memory, at its own link or its node's share of host memory
// (docs/campaign.md, "What a checkpoint costs", gives each term's source).
#pragma once

#include "models/scenario/scenario.hpp"

namespace myriad::sim::campaign {

struct ResolvedPolicy {
  const models::scenario::PolicySpec* spec = nullptr;
  double checkpoint_bytes = 0;
  double write_Bps = 0;  // storage write bandwidth the job gets (after other jobs' load)
  double stall_s = 0;    // blocking per checkpoint (stage; plus upload when not async)
  // The stage, in parts: coordination_s + snapshot_s.
  double snapshot_bytes_per_gpu = 0;  // the busiest GPU's copy to host memory
  double snapshot_s = 0;              // that copy, at its link or its node's host memory share
  double coordination_s = 0;          // save planning, metadata exchange, barrier
  double upload_s = 0;                // background upload, when async
  double peer_copy_s = 0;             // in-memory: each node's shard to its peer, in the background
  double load_s = 0;          // reading the checkpoint back on restart (from a peer when in memory)
  double storage_load_s = 0;  // reading it back from storage
  // What the interval rules see: the stall, plus the training an upload's
  // slowdown costs (upload x s / (1 + s), when async and not in memory).
  double cost_s = 0;
  double rule_interval_s = 0;    // what the rule gave
  double interval_s = 0;         // compute time between checkpoints, after the floor
  bool raised = false;           // the rule's interval was under one upload (or peer copy)
  int persistent_every = 1;      // in memory: every Nth checkpoint also goes to storage
  double job_mtbf_s = 0;         // M: the job's mean time between interruptions
  double detect_s = 0;           // detection + diagnosis
  double restart_s = 0;          // job start + communicator init + load + warm-up
  double storage_restart_s = 0;  // the same, loading from storage
};

// Failures per second of a job on `nodes` nodes: every node process on each
// node, every domain process on each domain the job touches (planes, spines and
// up ports, which slow the job without stopping it, left out).
double job_failure_rate(const models::scenario::Scenario& s, int nodes);
double young_interval(double cost_s, double mtbf_s);
double daly_interval(double cost_s, double mtbf_s);

// Bytes the busiest GPU copies to host memory at a checkpoint of
// `checkpoint_bytes` (the model's own size, or the policy's checkpoint_size,
// which scales every GPU's part alike), by the policy's checkpoint_snapshot.
double snapshot_bytes_per_gpu(const models::scenario::Scenario& s,
                              const models::scenario::PolicySpec& p, double checkpoint_bytes);

ResolvedPolicy resolve_policy(const models::scenario::Scenario& s,
                              const models::scenario::PolicySpec& p);

}  // namespace myriad::sim::campaign
