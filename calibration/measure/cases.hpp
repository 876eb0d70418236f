// What a calibration run measures: a list of cases, each a result row to fill
// (name, family, FLOPs and bytes from the op descriptor, arguments) and a way to
// set the kernel or collective up on real buffers. Preparing allocates and
// fills the inputs; `run` is one iteration (what is timed); `check` runs once
// more on known inputs and says whether the result is right.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibration/measure/rows.hpp"
#include "kernels/ops/attention_shape.hpp"
#include "kernels/ops/gemm_arguments.hpp"

namespace myriad::calibration {

struct Instance {
  std::function<void()> run;
  std::function<std::string()> check;  // "pass", or what was wrong
  // Devices time themselves: the seconds `iterations` runs take by the device's
  // own clock (CUDA events). Empty: the host clock times `run` (Google Benchmark).
  std::function<double(int iterations)> timed;
};

struct Case {
  Row row;  // times and check left empty
  std::function<Instance()> prepare;
};

enum class Grid { small, full };

Grid parse_grid(const std::string& name);  // throws std::invalid_argument naming the choices
const char* grid_name(Grid g);

// Uniform inputs in [-1, 1): element i depends on (seed, i) alone (SplitMix64
// of the pair), so several threads fill large buffers and the values are the
// same whatever their number. The GPU grid's inputs reach gigabytes a pass,
// which std::mt19937 took minutes of host time to draw.
void uniform_fill(float* out, std::size_t n, std::uint64_t seed);
std::vector<float> uniform_floats(std::size_t n, std::uint64_t seed);

// A kernel's row from its op descriptor (the backward's bytes when it has them).
// The attention the grids time: one sequence, as many key-value heads as query
// heads, causal, no window.
kernels::ops::AttentionShape grid_attention_shape(std::int64_t heads, std::int64_t seq,
                                                  std::int64_t head_dim);
// Such an attention's row arguments: batch, heads, seq, head_dim, causal, dtype.
nlohmann::json grid_attention_arguments(const kernels::ops::AttentionShape& s,
                                        const std::string& dtype);

Row kernel_row(std::string name, std::string family, const models::Op& op, bool backward,
               nlohmann::json arguments);
// "nn", "nt" or "tn".
const char* layout_name(kernels::ops::GemmLayout layout);

// Every CPU kernel (kernels/ops) over a grid of shapes, and the ring, tree and
// hierarchical collectives on the thread executor over sizes and rank counts;
// first the two ceilings (a large copy, a large GEMM).
std::vector<Case> cpu_cases(Grid grid);

// The CUDA backend's kernels (bf16 GEMMs through cuBLASLt, the fp32 kernels of
// kernels/ops) on the first GPU, sized for an H100/H200; ceilings a 1 GiB
// device-to-device copy and an 8192^3 bf16 GEMM. Throws std::runtime_error when
// built without CUDA or when no device is present.
std::vector<Case> cuda_cases(Grid grid);
// Whether this build has the CUDA backend.
bool cuda_backend_built();

}  // namespace myriad::calibration
