#include "kernels/ops/gemm.hpp"

#include <Eigen/Core>
#include <stdexcept>
#include <vector>

namespace myriad::kernels::ops {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const RowMatrix>;

std::size_t elems(std::int64_t rows, std::int64_t cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

void check(const GemmArguments& args, std::size_t a, std::size_t b, std::size_t c) {
  const std::string why = gemm_can_implement(args, a, b, c);
  if (!why.empty()) throw std::invalid_argument("gemm: " + why);
}

std::vector<float> widen(std::span<const Bf16> x) {
  std::vector<float> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) out[i] = x[i].to_float();
  return out;
}

}  // namespace

std::string gemm_can_implement(const GemmArguments& args, std::size_t a_size, std::size_t b_size,
                               std::size_t c_size) {
  if (args.m < 1 || args.n < 1 || args.k < 1) return "m, n and k must be at least 1";
  if (a_size != elems(args.m, args.k)) return "A must hold m*k elements";
  if (b_size != elems(args.k, args.n)) return "B must hold k*n elements";
  if (c_size != elems(args.m, args.n)) return "C must hold m*n elements";
  return {};
}

void gemm_cpu(const GemmArguments& args, std::span<const float> a, std::span<const float> b,
              std::span<float> c) {
  check(args, a.size(), b.size(), c.size());
  const bool ta = args.layout == GemmLayout::tn;
  const bool tb = args.layout == GemmLayout::nt;
  const ConstMap ma(a.data(), ta ? args.k : args.m, ta ? args.m : args.k);  // stored A
  const ConstMap mb(b.data(), tb ? args.n : args.k, tb ? args.k : args.n);  // stored B
  Eigen::Map<RowMatrix> mc(c.data(), args.m, args.n);                       // [m, n]
  RowMatrix prod(args.m, args.n);
  if (ta) {
    prod.noalias() = ma.transpose() * mb;
  } else if (tb) {
    prod.noalias() = ma * mb.transpose();
  } else {
    prod.noalias() = ma * mb;
  }
  if (args.beta == 0.0F) {
    mc = args.alpha * prod;
  } else {
    mc = args.alpha * prod + args.beta * mc;
  }
}

void gemm_cpu(const GemmArguments& args, std::span<const Bf16> a, std::span<const Bf16> b,
              std::span<Bf16> c) {
  check(args, a.size(), b.size(), c.size());
  const std::vector<float> fa = widen(a);
  const std::vector<float> fb = widen(b);
  std::vector<float> fc(c.size(), 0.0F);
  if (args.beta != 0.0F) fc = widen(c);
  gemm_cpu(args, fa, fb, fc);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = Bf16::from_float(fc[i]);
}

models::Op gemm_op(const GemmArguments& args, double elem_bytes) {
  return models::make_gemm("gemm", static_cast<double>(args.m), static_cast<double>(args.n),
                           static_cast<double>(args.k), 1.0, elem_bytes, false);
}

}  // namespace myriad::kernels::ops
