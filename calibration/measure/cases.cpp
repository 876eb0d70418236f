#include "calibration/measure/cases.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <thread>

#include "models/random/random_stream.hpp"

namespace myriad::calibration {

Grid parse_grid(const std::string& name) {
  if (name == "small") return Grid::small;
  if (name == "full") return Grid::full;
  throw std::invalid_argument(fmt::format("grid: expected small or full, found '{}'", name));
}

namespace {

using models::splitmix64;

void fill_range(float* out, std::size_t begin, std::size_t end, std::uint64_t key) {
  for (std::size_t i = begin; i < end; ++i) {
    // The top 24 bits: exact in a float, uniform over [0, 2^24).
    const auto bits = static_cast<float>(splitmix64(key ^ splitmix64(i)) >> 40U);
    out[i] = bits * (2.0F / 16777216.0F) - 1.0F;
  }
}

}  // namespace

void uniform_fill(float* out, std::size_t n, std::uint64_t seed) {
  const std::uint64_t key = splitmix64(seed);
  constexpr std::size_t kPerThread = std::size_t{1} << 22;
  const std::size_t threads =
      std::clamp<std::size_t>(n / kPerThread, 1, std::max(1U, std::thread::hardware_concurrency()));
  if (threads == 1) {
    fill_range(out, 0, n, key);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads);
  for (std::size_t t = 0; t < threads; ++t) {
    pool.emplace_back(fill_range, out, n * t / threads, n * (t + 1) / threads, key);
  }
  for (auto& th : pool) th.join();
}

std::vector<float> uniform_floats(std::size_t n, std::uint64_t seed) {
  std::vector<float> v(n);
  uniform_fill(v.data(), n, seed);
  return v;
}

const char* grid_name(Grid g) { return g == Grid::small ? "small" : "full"; }

kernels::ops::AttentionShape grid_attention_shape(std::int64_t heads, std::int64_t seq,
                                                  std::int64_t head_dim) {
  kernels::ops::AttentionShape s;
  s.batch = 1;
  s.q_heads = heads;
  s.kv_heads = heads;
  s.seq = seq;
  s.head_dim = head_dim;
  return s;
}

nlohmann::json grid_attention_arguments(const kernels::ops::AttentionShape& s,
                                        const std::string& dtype) {
  return {{"batch", s.batch},       {"heads", s.q_heads}, {"seq", s.seq},
          {"head_dim", s.head_dim}, {"causal", s.causal}, {"dtype", dtype}};
}

Row kernel_row(std::string name, std::string family, const models::Op& op, bool backward,
               nlohmann::json arguments) {
  Row r;
  r.name = std::move(name);
  r.kind = RowKind::kernel;
  r.family = std::move(family);
  r.op_class = op.cls;
  r.flops = op.flops;
  r.bytes = backward && op.backward_bytes > 0 ? op.backward_bytes : op.bytes;
  r.gemm = op.gemm;
  r.backward = backward;
  r.arguments = std::move(arguments);
  return r;
}

const char* layout_name(kernels::ops::GemmLayout layout) {
  switch (layout) {
    case kernels::ops::GemmLayout::nn:
      return "nn";
    case kernels::ops::GemmLayout::nt:
      return "nt";
    case kernels::ops::GemmLayout::tn:
      return "tn";
  }
  return "nn";
}

}  // namespace myriad::calibration
