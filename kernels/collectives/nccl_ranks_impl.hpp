// Internals of the NCCL executor, shared by nccl_executor.cpp and
// nccl_reference.cpp (CUDA and NCCL builds only; not part of the API).
#pragma once

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <vector>

#include "kernels/collectives/group_plan.hpp"
#include "kernels/collectives/nccl_executor.hpp"
#include "kernels/device/cuda_check.hpp"
#include "kernels/device/device_buffer.hpp"

#define MYRIAD_NCCL_CHECK(call)                                                               \
  do {                                                                                        \
    const ncclResult_t myriad_nccl_status_ = (call);                                          \
    if (myriad_nccl_status_ != ncclSuccess) {                                                 \
      throw std::runtime_error(fmt::format("{} failed: {} ({}:{})", #call,                    \
                                           ncclGetErrorString(myriad_nccl_status_), __FILE__, \
                                           __LINE__));                                        \
    }                                                                                         \
  } while (false)

namespace myriad::kernels::collectives::nccl_detail {

constexpr std::int64_t kFloat = 4;

inline std::size_t floats(std::int64_t bytes) { return static_cast<std::size_t>(bytes / kFloat); }

// Device memory of one rank, counted in bytes, freed with its owner.
using DeviceBytes = kernels::DeviceBuffer<char>;

// One rank: its communicator, stream, timing events and three regions.
struct Rank {
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  cudaEvent_t fence = nullptr;  // device_copy: where the stream stands at a round's barrier
  DeviceBytes data, scratch, staging;

  [[nodiscard]] char* at(const Place& p) const {
    const DeviceBytes& region =
        p.region == Region::data ? data : (p.region == Region::scratch ? scratch : staging);
    return region.byte_at(p.offset);
  }
};

// Posts ops inside ncclGroupStart/End; the group is closed even when a post fails.
void in_group(const std::function<void()>& post);

}  // namespace myriad::kernels::collectives::nccl_detail

namespace myriad::kernels::collectives {

struct NcclRanks::Impl {
  std::vector<nccl_detail::Rank> ranks;
  P2pTransport transport = P2pTransport::nccl;

  Impl() = default;
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  Impl(Impl&&) = delete;
  Impl& operator=(Impl&&) = delete;

  void init(const std::vector<int>& devices);
  void prepare(const Schedule& s, const GroupPlan* plan);
  void upload(const std::vector<std::vector<float>>& buffers);
  void download(std::vector<std::vector<float>>& buffers);
  void synchronize();
  void clear();
  void run_plan(const GroupPlan& plan);
  void exchange_by_nccl(const std::vector<RankRound>& round);
  void exchange_by_copies(const std::vector<RankRound>& round);
  void fence_all();
  void run_reference(const Schedule& s);  // nccl_reference.cpp
  std::vector<double> timed(const std::function<void()>& once, int iterations, int warmup);
};

}  // namespace myriad::kernels::collectives
