// cuBLASLt, loaded on first use instead of linked. libcublasLt is 540 MB, and
// loading it at start put about 210 MiB under every myriad run's resident set
// (measured 2026-11-29: a program that only links it peaks at 207 MiB; `myriad
// --version` at 240 MiB), though only the CUDA GEMMs use it. These are
// cuBLASLt's own entry points, as cublasLt.h declares them, forwarding to the
// library found beside libcudart (a CUDA install keeps them together), else by
// its soname. Without it each returns CUBLAS_STATUS_NOT_INITIALIZED, and the
// status name says why.
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <string>

#include "kernels/ops/cuda_library.hpp"

namespace {

struct Library {
  void* handle = nullptr;
  std::string error;
};

const Library& library() {
  static const Library lib = [] {
    Library l;
    l.handle = myriad::kernels::ops::open_cuda_library(
        "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR), l.error);
    return l;
  }();
  return lib;
}

template <typename F>
F resolve(const char* name) {
  const Library& l = library();
  return l.handle == nullptr ? nullptr : reinterpret_cast<F>(dlsym(l.handle, name));
}

// Calls the library's `name`, or says it is not there.
#define MYRIAD_CUBLASLT_FORWARD(name, ...)                  \
  static const auto real = resolve<decltype(&name)>(#name); \
  return real != nullptr ? real(__VA_ARGS__) : CUBLAS_STATUS_NOT_INITIALIZED

}  // namespace

extern "C" {

const char* CUBLASWINAPI cublasLtGetStatusName(cublasStatus_t status) {
  static const auto real = resolve<decltype(&cublasLtGetStatusName)>("cublasLtGetStatusName");
  if (real != nullptr) return real(status);
  static const std::string why = "cuBLASLt could not be loaded (" + library().error + ")";
  return why.c_str();
}

cublasStatus_t CUBLASWINAPI cublasLtCreate(cublasLtHandle_t* handle) {
  MYRIAD_CUBLASLT_FORWARD(cublasLtCreate, handle);
}

cublasStatus_t CUBLASWINAPI cublasLtDestroy(cublasLtHandle_t handle) {
  MYRIAD_CUBLASLT_FORWARD(cublasLtDestroy, handle);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmul(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                           const void* alpha, const void* a,
                                           cublasLtMatrixLayout_t a_desc, const void* b,
                                           cublasLtMatrixLayout_t b_desc, const void* beta,
                                           const void* c, cublasLtMatrixLayout_t c_desc, void* d,
                                           cublasLtMatrixLayout_t d_desc,
                                           const cublasLtMatmulAlgo_t* algo, void* workspace,
                                           size_t workspace_bytes, cudaStream_t stream) {
  MYRIAD_CUBLASLT_FORWARD(cublasLtMatmul, handle, desc, alpha, a, a_desc, b, b_desc, beta, c,
                          c_desc, d, d_desc, algo, workspace, workspace_bytes, stream);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulAlgoGetHeuristic(
    cublasLtHandle_t handle, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a_desc,
    cublasLtMatrixLayout_t b_desc, cublasLtMatrixLayout_t c_desc, cublasLtMatrixLayout_t d_desc,
    cublasLtMatmulPreference_t preference, int requested, cublasLtMatmulHeuristicResult_t results[],
    int* returned) {
  MYRIAD_CUBLASLT_FORWARD(cublasLtMatmulAlgoGetHeuristic, handle, desc, a_desc, b_desc, c_desc,
                          d_desc, preference, requested, results, returned);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc,
                                                     cublasComputeType_t compute,
                                                     cudaDataType_t scale) {
  MYRIAD_CUBLASLT_FORWARD(cublasLtMatmulDescCreate, desc, compute, scale);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  MYRIAD_CUBLASLT_FORWARD(cublasLtMatmulDescDestroy, desc);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                                           cublasLtMatmulDescAttributes_t attr,
                                                           const void* buf, size_t bytes) {
  MYRIAD_CUBLASLT_FORWARD(cublasLtMatmulDescSetAttribute, desc, attr, buf, bytes);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  MYRIAD_CUBLASLT_FORWARD(cublasLtMatmulPreferenceCreate, pref);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  MYRIAD_CUBLASLT_FORWARD(cublasLtMatmulPreferenceDestroy, pref);
}

cublasStatus_t CUBLASWINAPI cublasLtMatmulPreferenceSetAttribute(
    cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
    size_t bytes) {
  MYRIAD_CUBLASLT_FORWARD(cublasLtMatmulPreferenceSetAttribute, pref, attr, buf, bytes);
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout,
                                                       cudaDataType type, uint64_t rows,
                                                       uint64_t cols, int64_t ld) {
  MYRIAD_CUBLASLT_FORWARD(cublasLtMatrixLayoutCreate, layout, type, rows, cols, ld);
}

cublasStatus_t CUBLASWINAPI cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  MYRIAD_CUBLASLT_FORWARD(cublasLtMatrixLayoutDestroy, layout);
}

}  // extern "C"
