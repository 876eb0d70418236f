#include <stdexcept>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/activation_cuda.hpp"
#include "kernels/ops/column_sum.cuh"
#include "kernels/ops/launch.cuh"
#include "kernels/ops/storage.cuh"
#include "kernels/ops/vector_map.cuh"

namespace myriad::kernels::ops {

namespace {

constexpr float kGeluCoeff = 0.044715F;
constexpr float kSqrt2OverPi = 0.7978845608028654F;

__device__ float tanh_arg(float x) { return kSqrt2OverPi * (x + kGeluCoeff * x * x * x); }

__device__ float sigmoid(float x) { return 1.0F / (1.0F + expf(-x)); }

// The tanh approximation as the CPU computes it: 0.5 (1 + tanh u) = sigmoid(2u).
__device__ float gelu(float v) { return v * sigmoid(2.0F * tanh_arg(v)); }

// The elementwise kernels, as functors for launch_map (vector_map.cuh): 16-byte
// loads and stores, one pass.
struct GeluForward {
  __device__ void operator()(std::int64_t, const float* x, float* y) const { y[0] = gelu(x[0]); }
};

struct GeluBackward {  // in: dy, x
  __device__ void operator()(std::int64_t, const float* in, float* dx) const;
};

struct SwigluForward {  // in: gate, up
  __device__ void operator()(std::int64_t, const float* in, float* y) const {
    y[0] = in[0] * sigmoid(in[0]) * in[1];
  }
};

struct SwigluBackward {  // in: dy, gate, up; out: dgate, dup
  __device__ void operator()(std::int64_t, const float* in, float* out) const {
    const float d = in[0], g = in[1], sg = sigmoid(g);
    out[0] = d * in[2] * sg * (1.0F + g * (1.0F - sg));
    out[1] = d * g * sg;
  }
};

struct BiasGeluForward {
  const float* bias;
  std::int64_t cols;
  __device__ void operator()(std::int64_t i, const float* x, float* y) const {
    y[0] = gelu(x[0] + bias[i % cols]);
  }
};

__device__ float gelu_grad(float v) {
  const float sg = sigmoid(2.0F * tanh_arg(v));
  const float dinner = kSqrt2OverPi * (1.0F + 3.0F * kGeluCoeff * v * v);
  return sg + 2.0F * v * sg * (1.0F - sg) * dinner;
}

__device__ void GeluBackward::operator()(std::int64_t, const float* in, float* dx) const {
  dx[0] = in[0] * gelu_grad(in[1]);
}

// dx for a chunk of rows and its columns, and the chunk's fp32 sums of dx per
// column into partial[chunk][column] (column_sum.cuh adds the chunks). Adjacent
// threads take adjacent columns, so each row is read and written coalesced.
template <typename T>
__global__ void bias_gelu_backward_kernel(const T* dy, const T* x, const float* bias, T* dx,
                                          float* partial, std::int64_t rows, std::int64_t cols,
                                          std::int64_t rows_per_chunk) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.y) * rows_per_chunk;
  const std::int64_t r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
  float sum = 0.0F;
  for (std::int64_t r = r0; r < r1; ++r) {
    const std::int64_t i = r * cols + c;
    const float d = to_float(dy[i]) * gelu_grad(to_float(x[i]) + bias[c]);
    dx[i] = from_float<T>(d);
    sum += d;
  }
  partial[blockIdx.y * cols + c] = sum;
}

template <typename T>
void bias_gelu_forward(const T* x, const float* bias, T* y, std::int64_t rows, std::int64_t cols,
                       cudaStream_t stream) {
  if (rows < 1 || cols < 1) {
    throw std::invalid_argument("bias_gelu_cuda: rows and cols must be >= 1");
  }
  launch_map<T, 1, 1>({{x}, {y}}, rows * cols, BiasGeluForward{bias, cols}, stream);
}

template <typename T>
void bias_gelu_backward(const T* dy, const T* x, const float* bias, T* dx, float* dbias,
                        std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  if (rows < 1 || cols < 1) {
    throw std::invalid_argument("bias_gelu_cuda: rows and cols must be >= 1");
  }
  const std::int64_t chunks = column_chunks(rows);
  const std::int64_t rows_per_chunk = (rows + chunks - 1) / chunks;
  float* partial = nullptr;  // stream-ordered: the pool hands the same memory back next call
  MYRIAD_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&partial),
                                    sizeof(float) * static_cast<std::size_t>(chunks * cols),
                                    stream));
  const dim3 grid(static_cast<unsigned int>((cols + kThreadsPerBlock - 1) / kThreadsPerBlock),
                  static_cast<unsigned int>(chunks));
  bias_gelu_backward_kernel<<<grid, kThreadsPerBlock, 0, stream>>>(dy, x, bias, dx, partial, rows,
                                                                   cols, rows_per_chunk);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
  column_sum_kernel<<<blocks_for(cols), kThreadsPerBlock, 0, stream>>>(chunks, cols, partial,
                                                                       dbias);
  MYRIAD_CUDA_CHECK(cudaGetLastError());
  MYRIAD_CUDA_CHECK(cudaFreeAsync(partial, stream));
}

}  // namespace

void gelu_forward_cuda(const float* x, float* y, std::int64_t n, cudaStream_t stream) {
  launch_map<float, 1, 1>({{x}, {y}}, n, GeluForward{}, stream);
}

void gelu_forward_cuda(const Bf16* x, Bf16* y, std::int64_t n, cudaStream_t stream) {
  launch_map<__nv_bfloat16, 1, 1>({{device_ptr(x)}, {device_ptr(y)}}, n, GeluForward{}, stream);
}

void gelu_backward_cuda(const float* dy, const float* x, float* dx, std::int64_t n,
                        cudaStream_t stream) {
  launch_map<float, 2, 1>({{dy, x}, {dx}}, n, GeluBackward{}, stream);
}

void gelu_backward_cuda(const Bf16* dy, const Bf16* x, Bf16* dx, std::int64_t n,
                        cudaStream_t stream) {
  launch_map<__nv_bfloat16, 2, 1>({{device_ptr(dy), device_ptr(x)}, {device_ptr(dx)}}, n,
                                  GeluBackward{}, stream);
}

void swiglu_forward_cuda(const float* gate, const float* up, float* y, std::int64_t n,
                         cudaStream_t stream) {
  launch_map<float, 2, 1>({{gate, up}, {y}}, n, SwigluForward{}, stream);
}

void swiglu_forward_cuda(const Bf16* gate, const Bf16* up, Bf16* y, std::int64_t n,
                         cudaStream_t stream) {
  launch_map<__nv_bfloat16, 2, 1>({{device_ptr(gate), device_ptr(up)}, {device_ptr(y)}}, n,
                                  SwigluForward{}, stream);
}

void swiglu_backward_cuda(const float* dy, const float* gate, const float* up, float* dgate,
                          float* dup, std::int64_t n, cudaStream_t stream) {
  launch_map<float, 3, 2>({{dy, gate, up}, {dgate, dup}}, n, SwigluBackward{}, stream);
}

void swiglu_backward_cuda(const Bf16* dy, const Bf16* gate, const Bf16* up, Bf16* dgate, Bf16* dup,
                          std::int64_t n, cudaStream_t stream) {
  launch_map<__nv_bfloat16, 3, 2>(
      {{device_ptr(dy), device_ptr(gate), device_ptr(up)}, {device_ptr(dgate), device_ptr(dup)}}, n,
      SwigluBackward{}, stream);
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
