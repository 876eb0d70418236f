#include "sim/analytic/required_parameters.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace myriad::sim {

void require_parameters(const models::scenario::Scenario& s, const DeviceProfile& p) {
  const auto& prune = s.model.moe.prune;
  const bool sparse =
      s.model.is_moe() &&
      (prune.pattern == models::scenario::Sparsity::two_four ||
       (prune.pattern == models::scenario::Sparsity::unstructured && prune.sparse_kernel));
  if (sparse && !(p.sparse_gemm_efficiency > 0)) {
    throw std::runtime_error(fmt::format(
        "{}: model.moe.prune runs sparse GEMMs, but the device profile {} gives no "
        "sparse_gemm_efficiency (parameters.sparse_gemm_efficiency: a sparse GEMM's rate on the "
        "work it keeps relative to a dense one's)",
        s.file, p.file));
  }
  if (s.overlap.fused && !p.parameters.contains("fused_overlap_exposed")) {
    throw std::runtime_error(fmt::format(
        "{}: overlap.fused is set, but the device profile {} gives no fused_overlap_exposed "
        "(parameters.fused_overlap_exposed: the share of a fused collective left exposed)",
        s.file, p.file));
  }
  if (s.parallelism.offload_layers > 0 &&
      !(p.host_to_device_efficiency > 0 && p.device_to_host_efficiency > 0)) {
    throw std::runtime_error(fmt::format(
        "{}: parallelism.offload_layers copies activations to the host and back, but the device "
        "profile {} gives no host_to_device_efficiency and device_to_host_efficiency (the "
        "fractions of cluster.gpu.host_link_bandwidth pinned-memory copies reach)",
        s.file, p.file));
  }
}

}  // namespace myriad::sim
