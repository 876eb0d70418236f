// Scaled, causally masked softmax on the GPU in fp32, forward and backward, the
// formulas of causal_softmax.hpp's CPU backend (zeros above the diagonal). One
// block per score row. Device pointers, enqueued on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include "kernels/ops/softmax_shape.hpp"

namespace myriad::kernels::ops {

// x, y: [matrices, seq, seq].
void causal_softmax_forward_cuda(const SoftmaxShape& s, const float* x, float* y,
                                 cudaStream_t stream);
// dy, y, dx: [matrices, seq, seq].
void causal_softmax_backward_cuda(const SoftmaxShape& s, const float* dy, const float* y, float* dx,
                                  cudaStream_t stream);

}  // namespace myriad::kernels::ops
