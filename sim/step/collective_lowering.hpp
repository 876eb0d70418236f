// The two ways the step engine can play a collective schedule on SimGrid
// (ARCHITECTURE.md principle 3), over a ring of hosts joined by links of
// `link_Bps` and `latency_s` (host r to host r+1):
//   chunked  every step of the schedule (kernels/collectives) as it is: each send
//            a message of its chunk's bytes to the next rank's mailbox (eager),
//            each receive waiting for it; the latency paid per message;
//   phased   the step engine's lowering: one flow per ring edge carrying every
//            byte the rank sends over the whole schedule, concurrently, plus the
//            latency of the schedule's other sequential steps added analytically.
// Chunked costs SimGrid one message per step per rank (a 1 GiB ring all-reduce
// over 1,024 ranks: 2.1M messages, 12 s on SimGrid 3.32), so it is for small
// groups; a test holds the two to 1% there.
// Each call runs one SimGrid engine: one call per process.
#pragma once

#include "kernels/collectives/schedule.hpp"

namespace myriad::sim {

struct LoweringLink {
  double link_Bps = 0;
  double latency_s = 0;
};

// Simulated seconds until every rank has finished its steps. The schedule's
// sends must all go to the next rank on the ring (ring schedules); throws
// std::invalid_argument otherwise.
double simulate_chunked(const kernels::collectives::Schedule& schedule, const LoweringLink& link,
                        bool sanitizer_safe = false);
double simulate_phased(const kernels::collectives::Schedule& schedule, const LoweringLink& link,
                       bool sanitizer_safe = false);

}  // namespace myriad::sim
