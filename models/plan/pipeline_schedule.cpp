#include "models/plan/pipeline_schedule.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace myriad::models {
namespace {

PipelineTask task(bool forward, int k, int pp, int v) {
  const int group = k / pp;
  const int chunk = v == 1 ? 0 : group % v;
  const int micro_batch = v == 1 ? k : (k / (pp * v)) * pp + k % pp;
  return {forward, forward ? chunk : v - 1 - chunk, micro_batch};
}

}  // namespace

std::vector<PipelineTask> pipeline_order(int pp, int v, int m, int stage) {
  if (pp < 1 || v < 1 || m < 1 || stage < 0 || stage >= pp) {
    throw std::invalid_argument(
        "pipeline_order: need pp >= 1, virtual_stages >= 1, "
        "micro_batches >= 1 and 0 <= stage < pp");
  }
  if (v > 1 && m % pp != 0) {
    throw std::invalid_argument("pipeline_order: the interleaved schedule needs micro_batches (" +
                                std::to_string(m) + ") to be a multiple of pp (" +
                                std::to_string(pp) + ")");
  }
  const int total = m * v;
  const int warmup = v == 1 ? std::min(pp - stage - 1, total)
                            : std::min((pp - stage - 1) * 2 + (v - 1) * pp, total);
  std::vector<PipelineTask> order;
  order.reserve(2 * static_cast<std::size_t>(total));
  int forwards = 0;
  int backwards = 0;
  for (; forwards < warmup; ++forwards) order.push_back(task(true, forwards, pp, v));
  while (forwards < total) {
    order.push_back(task(true, forwards++, pp, v));
    order.push_back(task(false, backwards++, pp, v));
  }
  while (backwards < total) order.push_back(task(false, backwards++, pp, v));
  return order;
}

}  // namespace myriad::models
