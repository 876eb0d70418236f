#include "sim/cost/compute_cost.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "sim/cost/attention_shape.hpp"

namespace myriad::sim {
namespace {

// The best of the library's tiles for this shape: partial tiles compute padding,
// and a partial last wave leaves SMs idle. A tile's efficiency, its relative
// throughput times padding times the last wave's fill, is relative x m n batch /
// (tile area x waves x SMs): tiles are compared by relative / (area x waves),
// cross-multiplied, and the best one divided out once.
// ceil(x) of a tile or wave count, x >= 0 (std::ceil takes a dozen instructions
// where the build may not assume SSE4.1's roundsd).
double ceil_count(double x) {
  if (!(x < 0x1p62)) return std::ceil(x);
  const auto t = static_cast<double>(static_cast<std::int64_t>(x));
  return t < x ? t + 1 : t;
}

double wave_efficiency(const models::GemmShape& g, const DeviceProfile& p) {
  const double size = g.m * g.n * g.batch;
  if (!(size > 0)) return 0;
  double best_num = 0;  // the best tile's relative
  double best_den = 1;  // and its area x waves
  for (const auto& tile : p.gemm_tiles) {
    const double tiles = ceil_count(g.m / tile.m) * ceil_count(g.n / tile.n) * g.batch;
    const double den = tile.m * tile.n * ceil_count(tiles / p.sms);
    if (tile.relative * best_den > best_num * den) {
      best_num = tile.relative;
      best_den = den;
    }
  }
  return best_num * (size / p.sms) / best_den;
}

}  // namespace

ComputeCost compute_cost(const models::Op& op, const DeviceProfile& p) {
  if (op.cls == models::OpClass::gemm && op.pieces > 1) {
    // One piece of m / pieces rows, run `pieces` times: each a kernel of its own
    // shape (its waves over the SMs), reading the whole B each time.
    const auto& g = op.gemm;
    models::Op piece = op;
    piece.pieces = 1;
    piece.gemm.m = g.m / op.pieces;
    piece.flops = op.flops / op.pieces;
    const double whole = g.m * g.k + g.k * g.n + g.m * g.n;
    const double part = piece.gemm.m * g.k + g.k * g.n + piece.gemm.m * g.n;
    piece.bytes = whole > 0 ? op.bytes * part / whole : 0;
    ComputeCost c = compute_cost(piece, p);
    c.time_s *= op.pieces;
    return c;
  }
  const bool streaming =
      op.cls == models::OpClass::elementwise || op.cls == models::OpClass::optimizer;
  std::array<char, 64> family{};
  const double stream_Bps =
      p.hbm_bw_Bps * (streaming && !p.memory_bound_efficiency.empty()
                          ? memory_efficiency_of(p, models::kernel_family(op, family))
                          : p.memory_efficiency);
  const double memory_s = op.bytes / stream_Bps;
  ComputeCost c;
  double peak = p.bf16_flops;
  double compute_s = 0;
  switch (op.cls) {
    case models::OpClass::gemm: {
      const double base = op.fp8 ? p.gemm_fp8_efficiency : p.gemm_efficiency;
      peak = op.fp8 ? p.fp8_flops : p.bf16_flops;
      const double depth = op.gemm.k / (op.gemm.k + p.gemm_k_half);
      compute_s = op.flops / (peak * base * wave_efficiency(op.gemm, p) * depth);
      if (op.grouped && p.grouped_gemm_efficiency > 0) compute_s /= p.grouped_gemm_efficiency;
      // Pruned weights: 2:4 at twice the dense peak, unstructured on the work kept,
      // both at the profile's sparse-kernel efficiency relative to dense GEMMs.
      if (op.sparse == models::SparseKernel::two_four) {
        compute_s /= 2 * p.sparse_gemm_efficiency;
      } else if (op.sparse == models::SparseKernel::unstructured) {
        compute_s *= op.kept / p.sparse_gemm_efficiency;
      }
      break;
    }
    case models::OpClass::attention:
      compute_s = op.flops / (p.bf16_flops * attention_efficiency(op, p));
      break;
    case models::OpClass::elementwise:
    case models::OpClass::optimizer:
      break;
  }
  compute_s /= p.sustained_clock;
  c.memory_bound = memory_s >= compute_s;
  // Fixed per-kernel costs, at the op's share of the layers (1 but for an averaged layer).
  c.time_s = std::max(memory_s, compute_s) + op.share * p.kernel_overhead_s;
  if (op.cls == models::OpClass::gemm) c.time_s += op.share * p.gemm_latency_s;
  c.efficiency = op.flops > 0 ? op.flops / (c.time_s * peak) : 0;
  return c;
}

}  // namespace myriad::sim
