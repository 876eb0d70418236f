// Checked cuBLAS/cuBLASLt calls: a failing call throws with the call's text and
// the status name, as MYRIAD_CUDA_CHECK does for the runtime.
#pragma once

#include <cublasLt.h>

#include <stdexcept>
#include <string>

namespace myriad::kernels::ops {

class CublasError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace myriad::kernels::ops

#define MYRIAD_CUBLAS_CHECK(call)                                                                  \
  do {                                                                                             \
    const cublasStatus_t myriad_cublas_status_ = (call);                                           \
    if (myriad_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                          \
      throw ::myriad::kernels::ops::CublasError(                                                   \
          std::string(#call) + " failed: " + cublasLtGetStatusName(myriad_cublas_status_) + " (" + \
          __FILE__ + ":" + std::to_string(__LINE__) + ")");                                        \
    }                                                                                              \
  } while (false)
