// GEMM on the GPU through cuBLASLt: bf16 in and out, fp32 compute, row-major
// with the same layouts and arguments as gemm_cpu. Device pointers; the object
// owns the cuBLASLt handle and its workspace, so create it once and reuse it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

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
  void* handle_ = nullptr;  // cublasLtHandle_t, kept opaque to callers without cuBLASLt headers
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
};

}  // namespace myriad::kernels::ops
