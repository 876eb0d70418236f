// The NCCL executor (CUDA and NCCL builds). Host code: the CUDA runtime, NCCL
// and our reduction kernel's launcher, compiled as C++20.
#include "kernels/collectives/nccl_executor.hpp"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <algorithm>
#include <functional>
#include <set>
#include <stdexcept>
#include <utility>

#include "kernels/collectives/group_plan.hpp"
#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/reduce_cuda.hpp"

#define MYRIAD_NCCL_CHECK(call)                                                               \
  do {                                                                                        \
    const ncclResult_t myriad_nccl_status_ = (call);                                          \
    if (myriad_nccl_status_ != ncclSuccess) {                                                 \
      throw std::runtime_error(fmt::format("{} failed: {} ({}:{})", #call,                    \
                                           ncclGetErrorString(myriad_nccl_status_), __FILE__, \
                                           __LINE__));                                        \
    }                                                                                         \
  } while (false)

namespace myriad::collectives {
namespace {

constexpr std::int64_t kFloat = 4;

std::size_t floats(std::int64_t bytes) { return static_cast<std::size_t>(bytes / kFloat); }

// Device memory of one rank, freed with its owner.
class DeviceBytes {
 public:
  DeviceBytes() = default;
  DeviceBytes(int device, std::int64_t bytes) : bytes_(bytes) {
    MYRIAD_CUDA_CHECK(cudaSetDevice(device));
    MYRIAD_CUDA_CHECK(
        cudaMalloc(&ptr_, static_cast<std::size_t>(std::max<std::int64_t>(bytes, 4))));
  }
  ~DeviceBytes() { (void)cudaFree(ptr_); }
  DeviceBytes(DeviceBytes&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBytes& operator=(DeviceBytes&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;

  [[nodiscard]] std::int64_t bytes() const { return bytes_; }
  [[nodiscard]] char* at(std::int64_t offset) const { return static_cast<char*>(ptr_) + offset; }

 private:
  void* ptr_ = nullptr;
  std::int64_t bytes_ = 0;
};

// One rank: its communicator, stream, timing events and three regions.
struct Rank {
  int device = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  DeviceBytes data, scratch, staging;

  [[nodiscard]] char* at(const Place& p) const {
    const DeviceBytes& region =
        p.region == Region::data ? data : (p.region == Region::scratch ? scratch : staging);
    return region.at(p.offset);
  }
};

// Holds at least `bytes` of device memory in `region` (contents not kept when it grows).
void reserve(DeviceBytes& region, int device, std::int64_t bytes) {
  if (region.bytes() < bytes || region.bytes() == 0) region = DeviceBytes(device, bytes);
}

// Posts ops inside ncclGroupStart/End; the group is closed even when a post fails.
void in_group(const std::function<void()>& post) {
  MYRIAD_NCCL_CHECK(ncclGroupStart());
  try {
    post();
  } catch (...) {
    (void)ncclGroupEnd();
    throw;
  }
  MYRIAD_NCCL_CHECK(ncclGroupEnd());
}

// buffers: the host buffers to run on, or nullptr when timing on device data.
void require_runnable(const Schedule& s, int nranks,
                      const std::vector<std::vector<float>>* buffers) {
  if (s.spec.elem_bytes != kFloat) {
    throw std::invalid_argument("NCCL executor: the schedule must have 4-byte (float) elements");
  }
  if (s.nranks() != nranks) {
    throw std::invalid_argument(
        fmt::format("NCCL executor: a {}-rank schedule on {} ranks", s.nranks(), nranks));
  }
  if (buffers == nullptr) return;
  if (buffers->size() != static_cast<std::size_t>(nranks)) {
    throw std::invalid_argument("NCCL executor: one buffer per rank");
  }
  for (int r = 0; r < nranks; ++r) {
    if (static_cast<std::int64_t>((*buffers)[static_cast<std::size_t>(r)].size()) * kFloat !=
        s.layout(r).bytes()) {
      throw std::invalid_argument(
          fmt::format("NCCL executor: rank {}'s buffer does not match the schedule's layout", r));
    }
  }
}

// Bytes of rank r's shard in a ring layout (chunks [r * channels, (r + 1) * channels)),
// which NCCL's all-gather and reduce-scatter need equal on every rank.
std::int64_t equal_shard_bytes(const Schedule& s) {
  const int ch = s.spec.channels;
  const std::int64_t shard = s.layout(0).range_bytes(0, ch);
  for (int r = 1; r < s.nranks(); ++r) {
    if (s.layout(r).range_bytes(r * ch, ch) != shard) {
      throw std::invalid_argument(
          "NCCL reference: shards of unequal size; NCCL needs equal counts");
    }
  }
  return shard;
}

// All-to-all blocks (input half, then output half) of one size everywhere.
std::int64_t equal_block_bytes(const Schedule& s) {
  const std::int64_t block = s.layout(0).size(0);
  for (int r = 0; r < s.nranks(); ++r) {
    for (int c = 0; c < s.layout(r).nchunks(); ++c) {
      if (s.layout(r).size(c) != block) {
        throw std::invalid_argument("NCCL reference: all-to-all-v has no NCCL collective here");
      }
    }
  }
  return block;
}

}  // namespace

struct NcclRanks::Impl {
  std::vector<Rank> ranks;

  explicit Impl(const std::vector<int>& devices);
  ~Impl();
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  Impl(Impl&&) = delete;
  Impl& operator=(Impl&&) = delete;

  void prepare(const Schedule& s, const GroupPlan* plan);
  void upload(const std::vector<std::vector<float>>& buffers);
  void download(std::vector<std::vector<float>>& buffers);
  void synchronize();
  void clear();
  void run_plan(const GroupPlan& plan);
  void run_reference(const Schedule& s);
  std::vector<double> timed(const std::function<void()>& once, int iterations, int warmup);
};

NcclRanks::Impl::Impl(const std::vector<int>& devices) {
  if (devices.empty()) throw std::invalid_argument("NcclRanks: no devices");
  if (std::set<int>(devices.begin(), devices.end()).size() != devices.size()) {
    throw std::invalid_argument(
        "NcclRanks: each rank needs its own GPU; NCCL (>= 2.5) refuses two ranks of a "
        "communicator on one device (\"Duplicate GPU detected\")");
  }
  ranks.resize(devices.size());
  std::vector<ncclComm_t> comms(devices.size());
  MYRIAD_NCCL_CHECK(
      ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()));
  for (std::size_t r = 0; r < devices.size(); ++r) {
    Rank& rank = ranks[r];
    rank.device = devices[r];
    rank.comm = comms[r];
    MYRIAD_CUDA_CHECK(cudaSetDevice(rank.device));
    MYRIAD_CUDA_CHECK(cudaStreamCreateWithFlags(&rank.stream, cudaStreamNonBlocking));
    MYRIAD_CUDA_CHECK(cudaEventCreate(&rank.start));
    MYRIAD_CUDA_CHECK(cudaEventCreate(&rank.stop));
  }
}

NcclRanks::Impl::~Impl() {
  for (Rank& rank : ranks) {
    (void)cudaSetDevice(rank.device);
    if (rank.comm != nullptr) (void)ncclCommDestroy(rank.comm);
    if (rank.start != nullptr) (void)cudaEventDestroy(rank.start);
    if (rank.stop != nullptr) (void)cudaEventDestroy(rank.stop);
    if (rank.stream != nullptr) (void)cudaStreamDestroy(rank.stream);
  }
}

// Device memory for the schedule's layouts and, given a plan, its scratch and staging.
void NcclRanks::Impl::prepare(const Schedule& s, const GroupPlan* plan) {
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    Rank& rank = ranks[r];
    reserve(rank.data, rank.device, s.layout(static_cast<int>(r)).bytes());
    if (plan == nullptr) continue;
    reserve(rank.scratch, rank.device, plan->scratch_bytes[r]);
    reserve(rank.staging, rank.device, plan->staging_bytes[r]);
  }
}

void NcclRanks::Impl::upload(const std::vector<std::vector<float>>& buffers) {
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    MYRIAD_CUDA_CHECK(cudaSetDevice(ranks[r].device));
    MYRIAD_CUDA_CHECK(cudaMemcpy(ranks[r].data.at(0), buffers[r].data(),
                                 buffers[r].size() * sizeof(float), cudaMemcpyHostToDevice));
  }
}

void NcclRanks::Impl::download(std::vector<std::vector<float>>& buffers) {
  synchronize();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    MYRIAD_CUDA_CHECK(cudaSetDevice(ranks[r].device));
    MYRIAD_CUDA_CHECK(cudaMemcpy(buffers[r].data(), ranks[r].data.at(0),
                                 buffers[r].size() * sizeof(float), cudaMemcpyDeviceToHost));
  }
}

void NcclRanks::Impl::synchronize() {
  for (const Rank& rank : ranks) {
    MYRIAD_CUDA_CHECK(cudaSetDevice(rank.device));
    MYRIAD_CUDA_CHECK(cudaStreamSynchronize(rank.stream));
  }
}

// Zeroes every rank's data: timing runs on defined values.
void NcclRanks::Impl::clear() {
  for (const Rank& rank : ranks) {
    MYRIAD_CUDA_CHECK(cudaSetDevice(rank.device));
    MYRIAD_CUDA_CHECK(cudaMemset(rank.data.at(0), 0, static_cast<std::size_t>(rank.data.bytes())));
  }
}

void NcclRanks::Impl::run_plan(const GroupPlan& plan) {
  for (const std::vector<RankRound>& round : plan.rounds) {
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const Rank& rank = ranks[r];
      MYRIAD_CUDA_CHECK(cudaSetDevice(rank.device));
      for (const GroupOp& op : round[r].before) {
        MYRIAD_CUDA_CHECK(cudaMemcpyAsync(rank.at(op.dst), rank.at(op.src),
                                          static_cast<std::size_t>(op.bytes),
                                          cudaMemcpyDeviceToDevice, rank.stream));
      }
    }
    in_group([&] {
      for (std::size_t r = 0; r < ranks.size(); ++r) {
        const Rank& rank = ranks[r];
        for (const GroupOp& op : round[r].group) {
          if (op.bytes == 0) continue;  // both sides of a pair skip it
          if (op.kind == GroupOpKind::send) {
            MYRIAD_NCCL_CHECK(ncclSend(rank.at(op.src), floats(op.bytes), ncclFloat, op.peer,
                                       rank.comm, rank.stream));
          } else {
            MYRIAD_NCCL_CHECK(ncclRecv(rank.at(op.dst), floats(op.bytes), ncclFloat, op.peer,
                                       rank.comm, rank.stream));
          }
        }
      }
    });
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      const Rank& rank = ranks[r];
      MYRIAD_CUDA_CHECK(cudaSetDevice(rank.device));
      for (const GroupOp& op : round[r].after) {
        if (op.bytes == 0) continue;
        kernels::ops::reduce_cuda(kernels::ops::ReduceOp::sum,
                                  reinterpret_cast<float*>(rank.at(op.dst)),
                                  reinterpret_cast<const float*>(rank.at(op.src)),
                                  static_cast<std::int64_t>(floats(op.bytes)), rank.stream);
      }
    }
  }
}

// NCCL's own collective for the schedule's spec, every rank's call in one group.
void NcclRanks::Impl::run_reference(const Schedule& s) {
  const auto n = static_cast<int>(ranks.size());
  const std::int64_t bytes = s.layout(0).bytes();
  const std::int64_t shard =
      s.spec.kind == CollectiveKind::allgather || s.spec.kind == CollectiveKind::reduce_scatter
          ? equal_shard_bytes(s)
          : 0;
  const std::int64_t block = s.spec.kind == CollectiveKind::alltoall ? equal_block_bytes(s) : 0;
  in_group([&] {
    for (int r = 0; r < n; ++r) {
      const Rank& k = ranks[static_cast<std::size_t>(r)];
      char* d = k.data.at(0);
      switch (s.spec.kind) {
        case CollectiveKind::allreduce:
          MYRIAD_NCCL_CHECK(
              ncclAllReduce(d, d, floats(bytes), ncclFloat, ncclSum, k.comm, k.stream));
          break;
        case CollectiveKind::broadcast:
          MYRIAD_NCCL_CHECK(
              ncclBroadcast(d, d, floats(bytes), ncclFloat, s.spec.root, k.comm, k.stream));
          break;
        case CollectiveKind::allgather:
          MYRIAD_NCCL_CHECK(
              ncclAllGather(d + r * shard, d, floats(shard), ncclFloat, k.comm, k.stream));
          break;
        case CollectiveKind::reduce_scatter:
          MYRIAD_NCCL_CHECK(ncclReduceScatter(d, d + r * shard, floats(shard), ncclFloat, ncclSum,
                                              k.comm, k.stream));
          break;
        case CollectiveKind::alltoall:
          for (int j = 0; j < n; ++j) {
            MYRIAD_NCCL_CHECK(
                ncclSend(d + j * block, floats(block), ncclFloat, j, k.comm, k.stream));
            MYRIAD_NCCL_CHECK(
                ncclRecv(d + (n + j) * block, floats(block), ncclFloat, j, k.comm, k.stream));
          }
          break;
        case CollectiveKind::sendrecv:
          if (s.spec.root == s.spec.dst) break;  // the schedule moves nothing either
          if (r == s.spec.root) {
            MYRIAD_NCCL_CHECK(ncclSend(d, floats(bytes), ncclFloat, s.spec.dst, k.comm, k.stream));
          }
          if (r == s.spec.dst) {
            MYRIAD_NCCL_CHECK(ncclRecv(d, floats(bytes), ncclFloat, s.spec.root, k.comm, k.stream));
          }
          break;
      }
    }
  });
}

std::vector<double> NcclRanks::Impl::timed(const std::function<void()>& once, int iterations,
                                           int warmup) {
  if (iterations < 1 || warmup < 0) {
    throw std::invalid_argument("NCCL executor: iterations >= 1 and warmup >= 0");
  }
  for (int w = 0; w < warmup; ++w) once();
  std::vector<double> seconds;
  for (int it = 0; it < iterations; ++it) {
    synchronize();  // every stream starts the iteration idle
    for (const Rank& rank : ranks) {
      MYRIAD_CUDA_CHECK(cudaSetDevice(rank.device));
      MYRIAD_CUDA_CHECK(cudaEventRecord(rank.start, rank.stream));
    }
    once();
    float longest_ms = 0.0F;
    for (const Rank& rank : ranks) {
      MYRIAD_CUDA_CHECK(cudaSetDevice(rank.device));
      MYRIAD_CUDA_CHECK(cudaEventRecord(rank.stop, rank.stream));
      MYRIAD_CUDA_CHECK(cudaEventSynchronize(rank.stop));
      float ms = 0.0F;
      MYRIAD_CUDA_CHECK(cudaEventElapsedTime(&ms, rank.start, rank.stop));
      longest_ms = std::max(longest_ms, ms);
    }
    seconds.push_back(static_cast<double>(longest_ms) * 1e-3);
  }
  return seconds;
}

NcclRanks::NcclRanks(const std::vector<int>& devices) : impl_(std::make_unique<Impl>(devices)) {}
NcclRanks::~NcclRanks() = default;
NcclRanks::NcclRanks(NcclRanks&&) noexcept = default;
NcclRanks& NcclRanks::operator=(NcclRanks&&) noexcept = default;

int NcclRanks::nranks() const { return static_cast<int>(impl_->ranks.size()); }

void NcclRanks::execute(const Schedule& schedule, std::vector<std::vector<float>>& buffers) {
  require_runnable(schedule, nranks(), &buffers);
  const GroupPlan plan = make_group_plan(schedule);
  impl_->prepare(schedule, &plan);
  impl_->upload(buffers);
  impl_->run_plan(plan);
  impl_->download(buffers);
}

std::vector<double> NcclRanks::time(const Schedule& schedule, int iterations, int warmup) {
  require_runnable(schedule, nranks(), nullptr);
  const GroupPlan plan = make_group_plan(schedule);
  impl_->prepare(schedule, &plan);
  impl_->clear();
  return impl_->timed([&] { impl_->run_plan(plan); }, iterations, warmup);
}

void NcclRanks::execute_reference(const Schedule& schedule,
                                  std::vector<std::vector<float>>& buffers) {
  require_runnable(schedule, nranks(), &buffers);
  impl_->prepare(schedule, nullptr);
  impl_->upload(buffers);
  impl_->run_reference(schedule);
  impl_->download(buffers);
}

std::vector<double> NcclRanks::time_reference(const Schedule& schedule, int iterations,
                                              int warmup) {
  require_runnable(schedule, nranks(), nullptr);
  impl_->prepare(schedule, nullptr);
  impl_->clear();
  return impl_->timed([&] { impl_->run_reference(schedule); }, iterations, warmup);
}

std::vector<double> time_schedule_nccl(const Schedule& schedule, const std::vector<int>& devices,
                                       int iterations) {
  return NcclRanks(devices).time(schedule, iterations);
}

bool nccl_built() { return true; }

std::string nccl_version() {
  int v = 0;
  MYRIAD_NCCL_CHECK(ncclGetVersion(&v));
  return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
}

}  // namespace myriad::collectives
