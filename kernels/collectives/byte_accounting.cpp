#include "kernels/collectives/byte_accounting.hpp"

#include <fmt/format.h>

#include <numeric>
#include <stdexcept>

namespace myriad::kernels::collectives {
namespace {

std::vector<std::int64_t> bytes_of(const Schedule& schedule, bool sent) {
  std::vector<std::int64_t> bytes(static_cast<std::size_t>(schedule.nranks()), 0);
  for (int r = 0; r < schedule.nranks(); ++r) {
    for (const Step& step : schedule.rank_steps(r)) {
      const bool counts = sent ? step.kind == StepKind::send
                               : step.kind == StepKind::recv || step.kind == StepKind::recv_reduce;
      if (counts) bytes[static_cast<std::size_t>(r)] += step.bytes;
    }
  }
  return bytes;
}

}  // namespace

std::vector<std::int64_t> bytes_sent(const Schedule& schedule) { return bytes_of(schedule, true); }

std::vector<std::int64_t> bytes_received(const Schedule& schedule) {
  return bytes_of(schedule, false);
}

std::int64_t total_bytes_sent(const Schedule& schedule) {
  const std::vector<std::int64_t> sent = bytes_sent(schedule);
  return std::accumulate(sent.begin(), sent.end(), std::int64_t{0});
}

double algbw_Bps(std::int64_t bytes, double time_s) {
  if (!(time_s > 0)) {
    throw std::invalid_argument(fmt::format("algbw_Bps: time_s must be > 0, got {}", time_s));
  }
  if (bytes < 0)
    throw std::invalid_argument(fmt::format("algbw_Bps: bytes must be >= 0, got {}", bytes));
  return static_cast<double>(bytes) / time_s;
}

double busbw_Bps(CollectiveKind kind, int nranks, std::int64_t bytes, double time_s) {
  return algbw_Bps(bytes, time_s) * models::busbw_factor(kind, nranks);
}

}  // namespace myriad::kernels::collectives
