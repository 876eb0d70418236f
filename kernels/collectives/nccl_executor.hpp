// Runs a schedule on GPUs through NCCL: the schedule is lowered to rounds of
// grouped point-to-point operations (group_plan.hpp), each round one
// ncclGroupStart/ncclGroupEnd of ncclSend/ncclRecv over every rank's
// communicator, and received chunks of a recv_reduce are added by our reduction
// kernel (ops/reduce_cuda.hpp) after the group. Beside it, NCCL's own collective
// for the same CollectiveSpec (ncclAllReduce, ncclAllGather, ncclReduceScatter,
// ncclBroadcast, grouped sends for all-to-all and sendrecv) as the reference.
//
// All ranks live in this process: one communicator per rank (ncclCommInitAll),
// each with its own stream and buffers on its device. The devices must be
// distinct: since NCCL 2.5 two ranks of one communicator on the same GPU are
// refused at initialization ("Duplicate GPU detected", ncclInvalidUsage; see
// NVIDIA/nccl issues #103 and #418). On a one-GPU machine only one-rank
// schedules run here; multi-rank schedules need one GPU per rank.
//
// This header needs neither CUDA nor NCCL. In a build without them
// (MYRIAD_HAVE_NCCL undefined) every entry point throws std::runtime_error
// "built without CUDA/NCCL".
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kernels/collectives/schedule.hpp"

namespace myriad::collectives {

// Whether this build has the NCCL executor.
bool nccl_built();
// NCCL's version, "2.28.9", or "" in a build without NCCL.
std::string nccl_version();

// One NCCL communicator, stream and set of buffers per rank.
class NcclRanks {
 public:
  // Rank r runs on CUDA device devices[r]. Throws std::invalid_argument on an
  // empty or repeated device list, kernels::CudaError or std::runtime_error
  // (with NCCL's message) when CUDA or NCCL fails.
  explicit NcclRanks(const std::vector<int>& devices);
  ~NcclRanks();
  NcclRanks(NcclRanks&&) noexcept;
  NcclRanks& operator=(NcclRanks&&) noexcept;
  NcclRanks(const NcclRanks&) = delete;
  NcclRanks& operator=(const NcclRanks&) = delete;

  [[nodiscard]] int nranks() const;

  // The schedule on real floats, as the thread executor's execute(): buffers[r]
  // holds layout(r).bytes() / 4 floats and is updated in place (uploaded, run,
  // downloaded). The schedule needs 4-byte elements, nranks() ranks and must
  // pass check(); std::invalid_argument otherwise.
  void execute(const Schedule& schedule, std::vector<std::vector<float>>& buffers);

  // NCCL's own collective for schedule.spec on the same buffers: all-reduce and
  // broadcast over the whole buffer; all-gather and reduce-scatter in place on
  // the ring layout (the shards must be of equal size); all-to-all from the input
  // half to the output half (uniform blocks). Reduce-scatter defines only each
  // rank's own shard. std::invalid_argument for other kinds or layouts.
  void execute_reference(const Schedule& schedule, std::vector<std::vector<float>>& buffers);

  // Seconds per iteration of `iterations` runs of the schedule (or of the
  // reference collective) on device-resident buffers, after `warmup` untimed
  // runs: per iteration, the longest of the ranks' CUDA-event intervals, the
  // ranks' streams started together.
  std::vector<double> time(const Schedule& schedule, int iterations, int warmup = 2);
  std::vector<double> time_reference(const Schedule& schedule, int iterations, int warmup = 2);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// For a calibration harness: NcclRanks(devices).time(schedule, iterations).
std::vector<double> time_schedule_nccl(const Schedule& schedule, const std::vector<int>& devices,
                                       int iterations);

}  // namespace myriad::collectives
