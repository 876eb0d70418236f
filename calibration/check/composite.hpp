// Composite workloads for `myriad calibrate check`: built from the same kernels
// the grid measured, at sizes the grid did not, then predicted by the cost
// models from a fitted profile and timed for real.
//   program  the layer the model describes (models/transformer/layer_program):
//            each op of one rank's forward and backward run by the CPU kernel of
//            its family, predicted from the model's own op descriptors (at fp32:
//            twice the model's bf16 traffic), so that a change to the model
//            changes what the check runs and predicts;
//   dp       a layer written out by hand (LayerNorm, GeLU, its tensors passed
//            from op to op) on each of `ranks` threads at once, then a ring
//            all-reduce of its weight gradients on the thread executor (fp32);
//   cuda     the hand-written layer's CUDA kernels in order, on one GPU.
// The prediction sums the cost model's time of every op descriptor (and of the
// collective, with the fitted transport latency): what the analytic engine does.
// Ranks that compute at once on one host (the dp step's threads) each take the
// fitted concurrent slowdown longer: on a GPU cluster each rank has its own
// device, on the CPU backend they share this machine's cores.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "calibration/measure/cases.hpp"
#include "models/scenario/model_spec.hpp"
#include "models/transformer/layer_program.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::calibration {

struct LayerDims {
  std::int64_t batch = 1;
  std::int64_t seq = 0;
  std::int64_t hidden = 0;
  std::int64_t heads = 0;
  std::int64_t ffn = 0;
  [[nodiscard]] std::int64_t tokens() const { return batch * seq; }
};

struct CompositeWork {
  std::vector<models::Op> ops;  // compute on one rank, in order
  std::vector<Row> rows;        // also priced, as calibration rows: kernels or collectives
  Instance instance;            // runs everything once
  int ranks_on_host = 1;        // ranks computing `ops` at once on this host
};

// What a fitted profile records beyond sim::DeviceProfile (its provenance) and
// the prediction needs.
struct FittedTerms {
  double latency_per_step_s = 0;   // provenance.transport: per ring step
  int concurrent_threads = 1;      // provenance.host: threads measured at once
  double concurrent_slowdown = 1;  // each one's time then, against alone
};

struct Composite {
  Row row;  // kind "composite"
  std::function<CompositeWork()> build;
  // The work's descriptors alone (ops, rows, ranks; no buffers, no device), for
  // predicting it where it cannot run; empty: build() is cheap enough.
  std::function<CompositeWork()> describe;
  [[nodiscard]] CompositeWork descriptors() const { return describe ? describe() : build(); }
};

// The composite as a case of the runner: each pass builds it afresh.
Case timing_case(const Composite& c);

// The dp step's hand-written layer, its op descriptors alone (no buffers): for
// tests against models/.
std::vector<models::Op> layer_ops(const LayerDims& d);

// The model's layer program as a composite (see above). Throws
// std::invalid_argument for a shard it cannot run on one rank (tp, cp or ep > 1,
// unfused attention, fp8, recomputation) or an op without a CPU kernel (MoE's).
Composite program_composite(const models::scenario::ModelSpec& m, const models::ShardShape& sh);
// Its predicted ops: the layer program's forward and backward at fp32.
std::vector<models::Op> program_ops(const models::scenario::ModelSpec& m,
                                    const models::ShardShape& sh);
Composite dp_composite(const LayerDims& d, int ranks);
std::vector<Composite> cpu_composites(Grid grid);
// The layer on the GPU: the CUDA kernels of the grid in the layer's order (bf16
// GEMMs, norms, attention and GeLU; fp32 residual adds), each on its own buffers,
// timed as one sequence by CUDA events. Throws without CUDA; without a device,
// only build() throws (their descriptors predict them anywhere).
std::vector<Composite> cuda_composites(Grid grid);

// Throws std::runtime_error when the work has more ranks on the host than the
// profile measured threads at once.
double predict_composite(const CompositeWork& work, const sim::DeviceProfile& profile,
                         const FittedTerms& terms);

}  // namespace myriad::calibration
