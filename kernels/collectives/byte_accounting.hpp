// Bytes a schedule moves, and the bandwidths nccl-tests reports
// (nccl-tests doc/PERFORMANCE.md): algbw = bytes / time, and busbw = algbw
// times a factor that makes it comparable to the hardware's link bandwidth
// whatever the rank count (models::busbw_factor).
// `bytes` is nccl-tests' size, as CollectiveSpec::bytes records it.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/collectives/schedule.hpp"

namespace myriad::kernels::collectives {

// bytes_sent(s)[r]: the bytes of all of rank r's sends; likewise received.
std::vector<std::int64_t> bytes_sent(const Schedule& schedule);
std::vector<std::int64_t> bytes_received(const Schedule& schedule);
std::int64_t total_bytes_sent(const Schedule& schedule);

// Throw std::invalid_argument unless time_s > 0, bytes >= 0 and nranks >= 1.
double algbw_Bps(std::int64_t bytes, double time_s);
double busbw_Bps(CollectiveKind kind, int nranks, std::int64_t bytes, double time_s);

}  // namespace myriad::kernels::collectives
