// The NCCL executor in a build without CUDA or NCCL: every entry point says so.
#include <stdexcept>

#include "kernels/collectives/nccl_executor.hpp"

namespace myriad::kernels::collectives {
namespace {

[[noreturn]] void not_built() {
  throw std::runtime_error("NCCL executor: built without CUDA/NCCL");
}

}  // namespace

struct NcclRanks::Impl {};

bool nccl_built() { return false; }
std::string nccl_version() { return {}; }

NcclRanks::NcclRanks(const std::vector<int>& /*devices*/) { not_built(); }
NcclRanks::~NcclRanks() = default;
NcclRanks::NcclRanks(NcclRanks&&) noexcept = default;
NcclRanks& NcclRanks::operator=(NcclRanks&&) noexcept = default;
int NcclRanks::nranks() const { not_built(); }
P2pTransport NcclRanks::transport() const { not_built(); }
void NcclRanks::execute(const Schedule& /*schedule*/,
                        std::vector<std::vector<float>>& /*buffers*/) {
  not_built();
}
void NcclRanks::execute_reference(const Schedule& /*schedule*/,
                                  std::vector<std::vector<float>>& /*buffers*/) {
  not_built();
}
std::vector<double> NcclRanks::time(const Schedule& /*schedule*/, int /*iterations*/,
                                    int /*warmup*/) {
  not_built();
}
std::vector<double> NcclRanks::time_reference(const Schedule& /*schedule*/, int /*iterations*/,
                                              int /*warmup*/) {
  not_built();
}

std::vector<double> time_schedule_nccl(const Schedule& /*schedule*/,
                                       const std::vector<int>& /*devices*/, int /*iterations*/) {
  not_built();
}

}  // namespace myriad::kernels::collectives
