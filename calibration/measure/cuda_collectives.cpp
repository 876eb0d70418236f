// The collectives of the CUDA grid: schedules run by the NCCL executor.
#include "calibration/measure/cuda_support.hpp"

#ifdef MYRIAD_HAVE_CUDA

#include "kernels/collectives/byte_accounting.hpp"
#include "kernels/collectives/nccl_executor.hpp"
#include "kernels/collectives/ring.hpp"
#include "kernels/collectives/thread_executor.hpp"

namespace myriad::calibration::cuda_detail {
namespace {

namespace coll = myriad::kernels::collectives;

// A collective schedule run by the NCCL executor (one GPU per rank), or, on one
// GPU, by device copies between the ranks' buffers. The device-copy rows measure
// no GPU interconnect, so they carry their own algorithm name and the fit leaves
// them out of the bus bandwidth curve.
Case collective_case(coll::CollectiveKind kind, const char* name, int ranks, std::int64_t bytes,
                     const std::vector<int>& devices) {
  coll::Schedule schedule = kind == coll::CollectiveKind::all_reduce
                                ? coll::make_ring_allreduce(ranks, bytes, 1, 4)
                            : kind == coll::CollectiveKind::all_gather
                                ? coll::make_ring_allgather(ranks, bytes, 1, 4)
                                : coll::make_ring_reduce_scatter(ranks, bytes, 1, 4);
  const bool one_gpu = devices.size() > 1 && devices[0] == devices[1];
  const std::string algorithm = one_gpu ? "ring.device_copy" : "ring";
  Case c;
  c.row.name = fmt::format("{}.{} ranks={} bytes={}", name, algorithm, ranks, bytes);
  c.row.kind = RowKind::collective;
  c.row.family = fmt::format("{}.{}", name, algorithm);
  c.row.bytes = static_cast<double>(bytes);
  c.row.arguments = {{"ranks", ranks},
                     {"bytes", bytes},
                     {"executor", one_gpu ? "device copies on one GPU" : "nccl"},
                     {"dtype", "fp32"}};
  c.row.collective = {kind,
                      models::CollectiveAlgorithm::ring,
                      one_gpu,
                      ranks,
                      static_cast<double>(bytes),
                      models::busbw_factor(kind, ranks),
                      models::ring_steps(kind, ranks)};
  auto sched = std::make_shared<coll::Schedule>(std::move(schedule));
  c.prepare = [sched, devices] {
    auto executor = std::make_shared<coll::NcclRanks>(devices);
    Instance inst;
    inst.run = [executor, sched] { (void)executor->time(*sched, 1, 0); };
    inst.timed = [executor, sched](int iterations) {
      double total = 0;
      for (const double t : executor->time(*sched, iterations)) total += t;
      return total;
    };
    inst.check = [executor, sched] {
      // Small integers: the executor must give the thread executor's sums exactly.
      std::vector<std::vector<float>> a;
      for (int r = 0; r < sched->nranks(); ++r) {
        std::vector<float> b(static_cast<std::size_t>(sched->layout(r).bytes() / 4));
        for (std::size_t i = 0; i < b.size(); ++i)
          b[i] = static_cast<float>(r + 1 + static_cast<int>(i % 5));
        a.push_back(std::move(b));
      }
      auto b = a;
      executor->execute(*sched, a);
      coll::execute(*sched, b);
      return a == b ? std::string("pass") : std::string("differs from the thread executor");
    };
    return inst;
  };
  return c;
}

}  // namespace

void append_collective_cases(std::vector<Case>& cases) {
  if (coll::nccl_built()) {
    int gpus = 0;
    MYRIAD_CUDA_CHECK(cudaGetDeviceCount(&gpus));
    std::vector<int> rank_counts;
    if (gpus >= 2) {
      rank_counts = {std::min(gpus, 8)};
    } else {
      rank_counts = {2, 4};  // ranks as buffers on the one GPU
    }
    for (const int ranks : rank_counts) {
      std::vector<int> devices(static_cast<std::size_t>(ranks), 0);
      if (gpus >= 2) {
        for (int r = 0; r < ranks; ++r) devices[static_cast<std::size_t>(r)] = r;
      }
      for (const std::int64_t bytes : {std::int64_t{1} << 16, std::int64_t{1} << 22,
                                       std::int64_t{1} << 26, std::int64_t{1} << 30}) {
        cases.push_back(
            collective_case(coll::CollectiveKind::all_reduce, "all_reduce", ranks, bytes, devices));
      }
      for (const std::int64_t bytes : {std::int64_t{1} << 22, std::int64_t{1} << 28}) {
        cases.push_back(
            collective_case(coll::CollectiveKind::all_gather, "all_gather", ranks, bytes, devices));
        cases.push_back(collective_case(coll::CollectiveKind::reduce_scatter, "reduce_scatter",
                                        ranks, bytes, devices));
      }
    }
  }
}

}  // namespace myriad::calibration::cuda_detail

#endif
