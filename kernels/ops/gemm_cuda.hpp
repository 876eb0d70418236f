// GEMM on the GPU through cuBLASLt: bf16 in and out, fp32 compute, row-major
// with the same layouts and arguments as gemm_cpu. Device pointers; the object
// owns the cuBLASLt handle and its workspace, so create it once and reuse it.
// The descriptors and the algorithm cuBLASLt's heuristic picks are kept per
// shape, as training frameworks keep them: a call after the first only
// enqueues the kernel, so calibration times the GEMM, not the host's search.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "kernels/ops/bf16.hpp"
#include "kernels/ops/gemm_arguments.hpp"

namespace myriad::kernels::ops {

class GemmCuda {
 public:
  explicit GemmCuda(std::size_t workspace_bytes = std::size_t{32} << 20);
  ~GemmCuda();
  GemmCuda(const GemmCuda&) = delete;
  GemmCuda& operator=(const GemmCuda&) = delete;
  GemmCuda(GemmCuda&&) = delete;
  GemmCuda& operator=(GemmCuda&&) = delete;

  // Empty when cuBLASLt can run these arguments, otherwise why not.
  static std::string can_implement(const GemmArguments& args);

  // a, b: device buffers shaped by args.layout (see GemmLayout); c: [m, n] on the
  // device. Enqueued on `stream`; throws CublasError/CudaError on failure.
  void run(const GemmArguments& args, const Bf16* a, const Bf16* b, Bf16* c,
           cudaStream_t stream) const;

 private:
  struct Plan;  // descriptors and algorithm of one shape
  using Shape = std::tuple<std::int64_t, std::int64_t, std::int64_t, GemmLayout>;
  const Plan& plan(const GemmArguments& args) const;

  void* handle_ = nullptr;  // cublasLtHandle_t, kept opaque to callers without cuBLASLt headers
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
  mutable std::mutex mutex_;  // guards plans_
  mutable std::map<Shape, std::unique_ptr<Plan>> plans_;
};

}  // namespace myriad::kernels::ops
