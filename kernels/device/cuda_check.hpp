// Checked CUDA runtime calls: a failing call throws with the call's text.
#pragma once

#include <stdexcept>
#include <string>

namespace myriad::kernels {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace myriad::kernels

#define MYRIAD_CUDA_CHECK(call)                                                                   \
  do {                                                                                            \
    const cudaError_t myriad_cuda_status_ = (call);                                               \
    if (myriad_cuda_status_ != cudaSuccess) {                                                     \
      throw ::myriad::kernels::CudaError(std::string(#call) +                                     \
                                         " failed: " + cudaGetErrorString(myriad_cuda_status_) +  \
                                         " (" + __FILE__ + ":" + std::to_string(__LINE__) + ")"); \
    }                                                                                             \
  } while (false)
