// Runs a schedule on GPUs through NCCL: the schedule is lowered to rounds of
// grouped point-to-point operations (group_plan.hpp), each round one
// ncclGroupStart/ncclGroupEnd of ncclSend/ncclRecv over every rank's
// communicator, and received chunks of a recv_reduce are added by our reduction
// kernel (ops/reduce_cuda.hpp) after the group. Beside it, NCCL's own collective
// for the same CollectiveSpec (ncclAllReduce, ncclAllGather, ncclReduceScatter,
// ncclBroadcast, grouped sends for all-to-all and sendrecv) as the reference.
//
// All ranks live in this process, each with its own stream and buffers. With
// one GPU per rank, each rank has an NCCL communicator (ncclCommInitAll). NCCL
// cannot put two ranks of a communicator on one GPU: since NCCL 2.5 that is
// refused at initialization ("Duplicate GPU detected", ncclInvalidUsage; see
// NVIDIA/nccl issues #103 and #418). So when every rank is given the same GPU,
// the ranks run as streams over separate buffers on that device and each group
// becomes device-to-device copies between them (P2pTransport::device_copy),
// between barriers of CUDA events: the same plan, rounds and reductions, without
// NCCL; NCCL's own collectives then have no reference to offer.
//
// This header needs neither CUDA nor NCCL. In a build without them
// (MYRIAD_HAVE_NCCL undefined) nccl_built() is false and every other entry
// point but nccl_version() throws std::runtime_error "built without CUDA/NCCL".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/collectives/schedule.hpp"

namespace myriad::kernels::collectives {

// Whether this build has the NCCL executor.
bool nccl_built();
// NCCL's version, "2.28.9", or "" in a build without NCCL.
std::string nccl_version();

// How the ranks of one group exchange bytes.
enum class P2pTransport : std::uint8_t {
  nccl,         // ncclSend/ncclRecv, one GPU per rank
  device_copy,  // every rank on one GPU: cudaMemcpyAsync between the ranks' buffers
};

// One stream and set of buffers per rank, and an NCCL communicator per rank
// when the ranks are on distinct GPUs.
class NcclRanks {
 public:
  // Rank r runs on CUDA device devices[r]: distinct devices use NCCL, one device
  // repeated uses device copies. Throws std::invalid_argument on an empty list or
  // a mix (some devices shared, others not), kernels::CudaError or
  // std::runtime_error (with NCCL's message) when CUDA or NCCL fails.
  explicit NcclRanks(const std::vector<int>& devices);
  ~NcclRanks();
  NcclRanks(NcclRanks&&) noexcept;
  NcclRanks& operator=(NcclRanks&&) noexcept;
  NcclRanks(const NcclRanks&) = delete;
  NcclRanks& operator=(const NcclRanks&) = delete;

  [[nodiscard]] int nranks() const;
  [[nodiscard]] P2pTransport transport() const;

  // The schedule on real floats, as the thread executor's execute(): buffers[r]
  // holds layout(r).bytes() / 4 floats and is updated in place (uploaded, run,
  // downloaded). The schedule needs 4-byte elements, nranks() ranks and must
  // pass check(); std::invalid_argument otherwise.
  void execute(const Schedule& schedule, std::vector<std::vector<float>>& buffers);

  // NCCL's own collective for schedule.spec on the same buffers: all-reduce and
  // broadcast over the whole buffer; all-gather and reduce-scatter in place on
  // the ring layout (the shards must be of equal size); all-to-all from the input
  // half to the output half (uniform blocks). Reduce-scatter defines only each
  // rank's own shard. std::invalid_argument for other kinds or layouts, and
  // under P2pTransport::device_copy (no NCCL communicators).
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

}  // namespace myriad::kernels::collectives
