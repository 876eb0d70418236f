// The NCCL executor (CUDA and NCCL builds): ranks, their buffers, running a
// group plan over NCCL or, with every rank on one GPU, over device copies, and
// timing with CUDA events. Host code compiled as C++20.
#include "kernels/collectives/nccl_executor.hpp"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "kernels/collectives/nccl_ranks_impl.hpp"
#include "kernels/ops/reduce_cuda.hpp"

namespace myriad::kernels::collectives {

using nccl_detail::DeviceBytes;
using nccl_detail::floats;
using nccl_detail::kFloat;
using nccl_detail::Rank;

namespace nccl_detail {

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

}  // namespace nccl_detail

namespace {

// Holds at least `bytes` of device memory in `region` (contents not kept when it grows).
void reserve(DeviceBytes& region, int device, std::int64_t bytes) {
  const auto want = static_cast<std::size_t>(std::max<std::int64_t>(bytes, 0));
  if (!region.allocated() || region.bytes() < want) {
    region = DeviceBytes(want, kernels::DeviceFill::none, device);
  }
}

// Distinct devices: NCCL. One device for every rank: device copies. Else refused.
P2pTransport transport_for(const std::vector<int>& devices) {
  if (devices.empty()) throw std::invalid_argument("NcclRanks: no devices");
  const std::set<int> distinct(devices.begin(), devices.end());
  if (distinct.size() == devices.size()) return P2pTransport::nccl;
  if (distinct.size() == 1) return P2pTransport::device_copy;
  throw std::invalid_argument(
      "NcclRanks: give each rank its own GPU (NCCL) or every rank the same GPU (device copies); "
      "NCCL (>= 2.5) refuses two ranks of a communicator on one device");
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

}  // namespace

void NcclRanks::Impl::init(const std::vector<int>& devices) {
  transport = transport_for(devices);
  ranks.resize(devices.size());
  if (transport == P2pTransport::nccl) {
    std::vector<ncclComm_t> comms(devices.size());
    MYRIAD_NCCL_CHECK(
        ncclCommInitAll(comms.data(), static_cast<int>(devices.size()), devices.data()));
    for (std::size_t r = 0; r < devices.size(); ++r) ranks[r].comm = comms[r];
  }
  for (std::size_t r = 0; r < devices.size(); ++r) {
    Rank& rank = ranks[r];
    rank.device = devices[r];
    MYRIAD_CUDA_CHECK(cudaSetDevice(rank.device));
    // Blocking streams: they wait for the synchronous copies of upload() and clear().
    MYRIAD_CUDA_CHECK(cudaStreamCreate(&rank.stream));
    MYRIAD_CUDA_CHECK(cudaEventCreate(&rank.start));
    MYRIAD_CUDA_CHECK(cudaEventCreate(&rank.stop));
    MYRIAD_CUDA_CHECK(cudaEventCreateWithFlags(&rank.fence, cudaEventDisableTiming));
  }
}

NcclRanks::Impl::~Impl() {
  for (Rank& rank : ranks) {
    (void)cudaSetDevice(rank.device);
    if (rank.comm != nullptr) (void)ncclCommDestroy(rank.comm);
    for (cudaEvent_t event : {rank.start, rank.stop, rank.fence}) {
      if (event != nullptr) (void)cudaEventDestroy(event);
    }
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
    MYRIAD_CUDA_CHECK(cudaMemcpy(ranks[r].data.get(), buffers[r].data(),
                                 buffers[r].size() * sizeof(float), cudaMemcpyHostToDevice));
    MYRIAD_CUDA_CHECK(cudaDeviceSynchronize());
  }
}

void NcclRanks::Impl::download(std::vector<std::vector<float>>& buffers) {
  synchronize();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    MYRIAD_CUDA_CHECK(cudaSetDevice(ranks[r].device));
    MYRIAD_CUDA_CHECK(cudaMemcpy(buffers[r].data(), ranks[r].data.get(),
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
    MYRIAD_CUDA_CHECK(cudaMemset(rank.data.get(), 0, rank.data.bytes()));
    MYRIAD_CUDA_CHECK(cudaDeviceSynchronize());
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
    if (transport == P2pTransport::nccl) {
      exchange_by_nccl(round);
    } else {
      exchange_by_copies(round);
    }
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

// One NCCL group: every rank's sends and receives, each on its communicator and stream.
void NcclRanks::Impl::exchange_by_nccl(const std::vector<RankRound>& round) {
  nccl_detail::in_group([&] {
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
}

// Every stream waits until every other stream has reached this point.
void NcclRanks::Impl::fence_all() {
  for (const Rank& rank : ranks) MYRIAD_CUDA_CHECK(cudaEventRecord(rank.fence, rank.stream));
  for (const Rank& waiter : ranks) {
    for (const Rank& other : ranks) {
      if (&other != &waiter) MYRIAD_CUDA_CHECK(cudaStreamWaitEvent(waiter.stream, other.fence, 0));
    }
  }
}

// The group as device copies on one GPU: each receive copies, on the receiver's
// stream, the bytes of the send NCCL would match it with (the k-th from that peer),
// between barriers so that sends read what the round's start left there.
void NcclRanks::Impl::exchange_by_copies(const std::vector<RankRound>& round) {
  MYRIAD_CUDA_CHECK(cudaSetDevice(ranks.front().device));
  std::map<std::pair<int, int>, std::deque<const char*>> sent;  // (src, dst): send bytes
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (const GroupOp& op : round[r].group) {
      if (op.kind == GroupOpKind::send) {
        sent[{static_cast<int>(r), op.peer}].push_back(ranks[r].at(op.src));
      }
    }
  }
  fence_all();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    for (const GroupOp& op : round[r].group) {
      if (op.kind != GroupOpKind::recv) continue;
      auto& queue = sent[{op.peer, static_cast<int>(r)}];
      if (queue.empty()) throw std::logic_error("NCCL executor: a receive without a send");
      MYRIAD_CUDA_CHECK(cudaMemcpyAsync(ranks[r].at(op.dst), queue.front(),
                                        static_cast<std::size_t>(op.bytes),
                                        cudaMemcpyDeviceToDevice, ranks[r].stream));
      queue.pop_front();
    }
  }
  fence_all();
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

NcclRanks::NcclRanks(const std::vector<int>& devices) : impl_(std::make_unique<Impl>()) {
  impl_->init(devices);  // a failure here still releases what init made, through ~Impl
}
NcclRanks::~NcclRanks() = default;
NcclRanks::NcclRanks(NcclRanks&&) noexcept = default;
NcclRanks& NcclRanks::operator=(NcclRanks&&) noexcept = default;

int NcclRanks::nranks() const { return static_cast<int>(impl_->ranks.size()); }
P2pTransport NcclRanks::transport() const { return impl_->transport; }

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

}  // namespace myriad::kernels::collectives
