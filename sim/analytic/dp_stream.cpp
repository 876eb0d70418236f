#include "sim/analytic/dp_stream.hpp"

namespace myriad::sim {

double dp_collectives_time(std::span<const models::Collective> comms,
                           std::span<const CommCost> costs, double share, bool gather) {
  double time = 0;
  if (share <= 0) return 0;
  for (std::size_t i = 0; i < comms.size() && i < costs.size(); ++i) {
    if ((comms[i].kind == models::CollectiveKind::all_gather) != gather) continue;
    const CommCost& c = costs[i];
    time += c.latency_s + share * (c.time_s - c.latency_s);
  }
  return time;
}

DpStream dp_stream(std::span<const models::Collective> comms, std::span<const CommCost> costs,
                   int chunks, double buckets) {
  const double chunk = 1.0 / chunks;  // a chunk's share of the stage's parameters
  const auto piece = [&](double share, bool gather) {
    return DpPiece{share, dp_collectives_time(comms, costs, share, gather)};
  };
  DpStream d;
  d.buckets = buckets;
  d.first_gather = piece(chunk / buckets, true);
  d.first_rest = piece(chunk * (1 - 1 / buckets), true);
  d.chunk_gather = piece(chunk, true);
  d.early_reduce = piece(chunk * (1 - 1 / buckets), false);
  d.last_reduce = piece(chunk / buckets, false);
  return d;
}

}  // namespace myriad::sim
