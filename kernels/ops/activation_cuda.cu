#include <stdexcept>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/activation_cuda.hpp"
#include "kernels/ops/launch.cuh"
#include "kernels/ops/storage.cuh"

namespace myriad::kernels::ops {

namespace {

constexpr float kGeluCoeff = 0.044715F;
constexpr float kSqrt2OverPi = 0.7978845608028654F;

__device__ float tanh_arg(float x) { return kSqrt2OverPi * (x + kGeluCoeff * x * x * x); }

__device__ float sigmoid(float x) { return 1.0F / (1.0F + expf(-x)); }

template <typename T>
__global__ void gelu_forward_kernel(const T* x, T* y, std::int64_t n) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) {
    const float v = to_float(x[i]);
    y[i] = from_float<T>(0.5F * v * (1.0F + tanhf(tanh_arg(v))));
  }
}

template <typename T>
__global__ void gelu_backward_kernel(const T* dy, const T* x, T* dx, std::int64_t n) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) {
    const float v = to_float(x[i]);
    const float t = tanhf(tanh_arg(v));
    const float dinner = kSqrt2OverPi * (1.0F + 3.0F * kGeluCoeff * v * v);
    dx[i] =
        from_float<T>(to_float(dy[i]) * (0.5F * (1.0F + t) + 0.5F * v * (1.0F - t * t) * dinner));
  }
}

template <typename T>
__global__ void swiglu_forward_kernel(const T* gate, const T* up, T* y, std::int64_t n) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) {
    const float g = to_float(gate[i]);
    y[i] = from_float<T>(g * sigmoid(g) * to_float(up[i]));
  }
}

template <typename T>
__global__ void swiglu_backward_kernel(const T* dy, const T* gate, const T* up, T* dgate, T* dup,
                                       std::int64_t n) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) {
    const float g = to_float(gate[i]);
    const float d = to_float(dy[i]);
    const float sg = sigmoid(g);
    dup[i] = from_float<T>(d * g * sg);
    dgate[i] = from_float<T>(d * to_float(up[i]) * sg * (1.0F + g * (1.0F - sg)));
  }
}

template <typename T>
__global__ void bias_gelu_forward_kernel(const T* x, const float* bias, T* y, std::int64_t n,
                                         std::int64_t cols) {
  for (std::int64_t i = grid_index(); i < n; i += grid_stride()) {
    const float v = to_float(x[i]) + bias[i % cols];
    y[i] = from_float<T>(0.5F * v * (1.0F + tanhf(tanh_arg(v))));
  }
}

__device__ float gelu_grad(float v) {
  const float t = tanhf(tanh_arg(v));
  const float dinner = kSqrt2OverPi * (1.0F + 3.0F * kGeluCoeff * v * v);
  return 0.5F * (1.0F + t) + 0.5F * v * (1.0F - t * t) * dinner;
}

// One thread per column: dx for the column's elements, then their fp32 sum into dbias.
template <typename T>
__global__ void bias_gelu_backward_kernel(const T* dy, const T* x, const float* bias, T* dx,
                                          float* dbias, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t c = grid_index(); c < cols; c += grid_stride()) {
    float sum = 0.0F;
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t i = r * cols + c;
      const float d = to_float(dy[i]) * gelu_grad(to_float(x[i]) + bias[c]);
      dx[i] = from_float<T>(d);
      sum += d;
    }
    dbias[c] = sum;
  }
}

template <typename T>
void bias_gelu_forward(const T* x, const float* bias, T* y, std::int64_t rows, std::int64_t cols,
                       cudaStream_t stream) {
  if (rows < 1 || cols < 1) {
    throw std::invalid_argument("bias_gelu_cuda: rows and cols must be >= 1");
  }
  bias_gelu_forward_kernel<<<blocks_for(rows * cols), kThreadsPerBlock, 0, stream>>>(
      x, bias, y, rows * cols, cols);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void bias_gelu_backward(const T* dy, const T* x, const float* bias, T* dx, float* dbias,
                        std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  if (rows < 1 || cols < 1) {
    throw std::invalid_argument("bias_gelu_cuda: rows and cols must be >= 1");
  }
  bias_gelu_backward_kernel<<<blocks_for(cols), kThreadsPerBlock, 0, stream>>>(dy, x, bias, dx,
                                                                               dbias, rows, cols);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void gelu_forward_cuda(const float* x, float* y, std::int64_t n, cudaStream_t stream) {
  gelu_forward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(x, y, n);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void gelu_forward_cuda(const Bf16* x, Bf16* y, std::int64_t n, cudaStream_t stream) {
  gelu_forward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(device_ptr(x), device_ptr(y),
                                                                      n);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void gelu_backward_cuda(const float* dy, const float* x, float* dx, std::int64_t n,
                        cudaStream_t stream) {
  gelu_backward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(dy, x, dx, n);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void gelu_backward_cuda(const Bf16* dy, const Bf16* x, Bf16* dx, std::int64_t n,
                        cudaStream_t stream) {
  gelu_backward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
      device_ptr(dy), device_ptr(x), device_ptr(dx), n);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void swiglu_forward_cuda(const float* gate, const float* up, float* y, std::int64_t n,
                         cudaStream_t stream) {
  swiglu_forward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(gate, up, y, n);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void swiglu_forward_cuda(const Bf16* gate, const Bf16* up, Bf16* y, std::int64_t n,
                         cudaStream_t stream) {
  swiglu_forward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
      device_ptr(gate), device_ptr(up), device_ptr(y), n);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void swiglu_backward_cuda(const float* dy, const float* gate, const float* up, float* dgate,
                          float* dup, std::int64_t n, cudaStream_t stream) {
  swiglu_backward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(dy, gate, up, dgate, dup,
                                                                         n);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void swiglu_backward_cuda(const Bf16* dy, const Bf16* gate, const Bf16* up, Bf16* dgate, Bf16* dup,
                          std::int64_t n, cudaStream_t stream) {
  swiglu_backward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
      device_ptr(dy), device_ptr(gate), device_ptr(up), device_ptr(dgate), device_ptr(dup), n);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
}

void bias_gelu_forward_cuda(const float* x, const float* bias, float* y, std::int64_t rows,
                            std::int64_t cols, cudaStream_t stream) {
  bias_gelu_forward(x, bias, y, rows, cols, stream);
}

void bias_gelu_forward_cuda(const Bf16* x, const float* bias, Bf16* y, std::int64_t rows,
                            std::int64_t cols, cudaStream_t stream) {
  bias_gelu_forward(device_ptr(x), bias, device_ptr(y), rows, cols, stream);
}

void bias_gelu_backward_cuda(const float* dy, const float* x, const float* bias, float* dx,
                             float* dbias, std::int64_t rows, std::int64_t cols,
                             cudaStream_t stream) {
  bias_gelu_backward(dy, x, bias, dx, dbias, rows, cols, stream);
}

void bias_gelu_backward_cuda(const Bf16* dy, const Bf16* x, const float* bias, Bf16* dx,
                             float* dbias, std::int64_t rows, std::int64_t cols,
                             cudaStream_t stream) {
  bias_gelu_backward(device_ptr(dy), device_ptr(x), bias, device_ptr(dx), dbias, rows, cols,
                     stream);
}

}  // namespace myriad::kernels::ops
