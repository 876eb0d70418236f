// Values that parse and that no single key's range refuses, but that describe no
// machine and no training job: a capacity factor that leaves an expert less than
// one token, a network slower than 1 Gbit/s Ethernet, a node failing every few
// minutes. Each bound states its physical reason, and where it is a judgement it
// says so and sits far from any real system. Part of check() in scenario_checks.hpp.
#pragma once

#include "models/scenario/diagnostics.hpp"
#include "models/scenario/scenario.hpp"

namespace myriad::models::scenario {

// The least link bandwidth a scenario may give (1 Gbit/s, per direction): a
// sanity floor, below the slowest Ethernet of any GPU cluster.
inline constexpr double kMinLinkBandwidth_Bps = 125e6;
// The least storage bandwidth a job's checkpoints see (10 MB/s): a sanity floor,
// a tenth of what one hard disk streams.
inline constexpr double kMinStorageBandwidth_Bps = 10e6;
// The least GPU memory bandwidth (10 GB/s): a sanity floor, below one DDR4 channel.
inline constexpr double kMinMemoryBandwidth_Bps = 10e9;
// The most frequent failure or straggler onset of one node (or domain): once an
// hour, 24,000 per 1000 node-days.
inline constexpr double kMaxEventsPer1000NodeDays = 24000;

// The least capacity factor with which every expert holds at least one token of
// a micro-batch: experts / (top_k x micro_batch x seq_length).
double min_capacity_factor(const Scenario& s);

void check_physical_bounds(const Scenario& s, const Location& file, Diagnostics& d);
// The one of them a layout (parallelism, model.moe.prune) can break: an expert's
// capacity of a micro-batch's tokens.
void check_layout_bounds(const Scenario& s, const Location& file, Diagnostics& d);

}  // namespace myriad::models::scenario
