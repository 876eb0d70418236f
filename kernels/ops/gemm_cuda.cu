#include <cublasLt.h>

#include <cstdint>
#include <limits>
#include <stdexcept>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/cublas_check.hpp"
#include "kernels/ops/gemm_cuda.hpp"

namespace myriad::kernels::ops {

namespace {

cublasLtHandle_t lt(void* h) { return static_cast<cublasLtHandle_t>(h); }

// Descriptors of one call, destroyed whatever happens.
struct MatmulDescriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr;  // cuBLASLt's A: our B
  cublasLtMatrixLayout_t b = nullptr;  // cuBLASLt's B: our A
  cublasLtMatrixLayout_t c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  MatmulDescriptors() = default;
  MatmulDescriptors(const MatmulDescriptors&) = delete;
  MatmulDescriptors& operator=(const MatmulDescriptors&) = delete;
  ~MatmulDescriptors() {
    if (pref != nullptr) (void)cublasLtMatmulPreferenceDestroy(pref);
    if (c != nullptr) (void)cublasLtMatrixLayoutDestroy(c);
    if (b != nullptr) (void)cublasLtMatrixLayoutDestroy(b);
    if (a != nullptr) (void)cublasLtMatrixLayoutDestroy(a);
    if (op != nullptr) (void)cublasLtMatmulDescDestroy(op);
  }
};

// Row-major C[m, n] = op(A) op(B) is column-major C^T[n, m] = op(B)^T op(A)^T: cuBLASLt
// sees our B as its A and our A as its B, each stored matrix read column-major.
void describe(const GemmArguments& g, MatmulDescriptors& d) {
  const auto m = static_cast<std::uint64_t>(g.m);
  const auto n = static_cast<std::uint64_t>(g.n);
  const auto k = static_cast<std::uint64_t>(g.k);
  const bool nt = g.layout == GemmLayout::nt;
  const bool tn = g.layout == GemmLayout::tn;
  const cublasOperation_t trans_a = nt ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t trans_b = tn ? CUBLAS_OP_T : CUBLAS_OP_N;
  MYRIAD_CUBLAS_CHECK(cublasLtMatmulDescCreate(&d.op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  MYRIAD_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a));
  MYRIAD_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b));
  // Our B: [k, n] (nn, tn) is column-major n x k; [n, k] (nt) is column-major k x n.
  MYRIAD_CUBLAS_CHECK(
      nt ? cublasLtMatrixLayoutCreate(&d.a, CUDA_R_16BF, k, n, static_cast<int64_t>(k))
         : cublasLtMatrixLayoutCreate(&d.a, CUDA_R_16BF, n, k, static_cast<int64_t>(n)));
  // Our A: [m, k] (nn, nt) is column-major k x m; [k, m] (tn) is column-major m x k.
  MYRIAD_CUBLAS_CHECK(
      tn ? cublasLtMatrixLayoutCreate(&d.b, CUDA_R_16BF, m, k, static_cast<int64_t>(m))
         : cublasLtMatrixLayoutCreate(&d.b, CUDA_R_16BF, k, m, static_cast<int64_t>(k)));
  MYRIAD_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d.c, CUDA_R_16BF, n, m, static_cast<int64_t>(n)));
}

}  // namespace

struct GemmCuda::Plan {
  MatmulDescriptors d;
  cublasLtMatmulAlgo_t algo{};
};

GemmCuda::GemmCuda(std::size_t workspace_bytes) : workspace_bytes_(workspace_bytes) {
  cublasLtHandle_t h = nullptr;
  MYRIAD_CUBLAS_CHECK(cublasLtCreate(&h));
  handle_ = h;
  if (workspace_bytes_ > 0) {
    const cudaError_t status = cudaMalloc(&workspace_, workspace_bytes_);
    if (status != cudaSuccess) {
      (void)cublasLtDestroy(h);
      MYRIAD_CUDA_CHECK(status);
    }
  }
}

GemmCuda::~GemmCuda() {
  plans_.clear();
  if (workspace_ != nullptr) (void)cudaFree(workspace_);
  (void)cublasLtDestroy(lt(handle_));
}

std::string GemmCuda::can_implement(const GemmArguments& args) {
  if (args.m < 1 || args.n < 1 || args.k < 1) return "m, n and k must be at least 1";
  const std::int64_t most = std::numeric_limits<std::int32_t>::max();
  if (args.m > most || args.n > most || args.k > most) return "m, n and k must fit in 32 bits";
  return {};
}

const GemmCuda::Plan& GemmCuda::plan(const GemmArguments& args) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  auto& slot = plans_[Shape{args.m, args.n, args.k, args.layout}];
  if (slot != nullptr) return *slot;
  auto p = std::make_unique<Plan>();
  describe(args, p->d);
  MYRIAD_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&p->d.pref));
  MYRIAD_CUBLAS_CHECK(
      cublasLtMatmulPreferenceSetAttribute(p->d.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                           &workspace_bytes_, sizeof workspace_bytes_));
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  MYRIAD_CUBLAS_CHECK(cublasLtMatmulAlgoGetHeuristic(lt(handle_), p->d.op, p->d.a, p->d.b, p->d.c,
                                                     p->d.c, p->d.pref, 1, &heuristic, &found));
  if (found == 0) throw CublasError("gemm_cuda: cuBLASLt found no algorithm for these arguments");
  p->algo = heuristic.algo;
  slot = std::move(p);
  return *slot;
}

void GemmCuda::run(const GemmArguments& args, const Bf16* a, const Bf16* b, Bf16* c,
                   cudaStream_t stream) const {
  const std::string why = can_implement(args);
  if (!why.empty()) throw std::invalid_argument("gemm_cuda: " + why);
  const Plan& p = plan(args);
  MYRIAD_CUBLAS_CHECK(cublasLtMatmul(lt(handle_), p.d.op, &args.alpha, b, p.d.a, a, p.d.b,
                                     &args.beta, c, p.d.c, c, p.d.c, &p.algo, workspace_,
                                     workspace_bytes_, stream));
}

}  // namespace myriad::kernels::ops
