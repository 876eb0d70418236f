// Activation offload (parallelism.offload_layers) on a pipeline of one stage, as
// Transformer Engine's default schedule plays it (get_cpu_offload_context; its
// CPU offloading guide, docs/features/other_optimizations/cpu_offloading) and
// Megatron-LM runs it (--cpu-offloading, --cpu-offloading-num-layers):
//   - the first N of a micro-batch's L layers send their activations to host
//     memory, one copy after another on the link's device-to-host direction; a
//     layer's copy starts with its forward (tensors go as they are saved) and
//     cannot end before that forward does;
//   - at most L - N layers' activations are on the GPU at once: layer j's forward
//     waits for layer j - (L - N)'s copy to have left; in backward (last layer
//     first) each layer done frees room for the next offloaded layer's copy back
//     (host to device), and an offloaded layer's backward waits for its copy.
// The copies run on the copy engines: they take no SMs (no compute slows
// beside them) and a sliver of HBM bandwidth, not counted. What the waits add to
// a micro-batch's forward and backward is the stall; both engines add it to the
// stage's passes (StageCosts::offload).
#pragma once

#include <span>

#include "models/scenario/scenario.hpp"
#include "models/transformer/layer_program.hpp"
#include "sim/analytic/pipeline_makespan.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

// One layer of the sequence: its passes' times and the activations it keeps.
struct OffloadLayer {
  double forward_s = 0;
  double backward_s = 0;
  double bytes = 0;
};

// The waits a micro-batch's forward and backward take when the first `offloaded`
// of `layers` (0 <= offloaded < layers.size()) go to the host at `to_host_Bps`
// and come back at `to_device_Bps` (PassTimes' forward and backward; the rest 0).
// Throws std::invalid_argument on an offloaded count out of range or a rate <= 0.
PassTimes offload_stall(std::span<const OffloadLayer> layers, int offloaded, double to_host_Bps,
                        double to_device_Bps);

// The stall for a scenario's model layers (model.layers, each of its kind: `moe`
// for an MoE model's MoE layers, `dense` for the others; MTP blocks stay on the
// GPU) at the profile's achieved host-link rates; zero without offload.
PassTimes offload_stall(const models::scenario::Scenario& s, const DeviceProfile& profile,
                        const PassTimes& moe, const PassTimes& dense);

// Fine-grained activation offload (parallelism.offload_modules, Megatron-Core's
// --fine-grained-activation-offloading, megatron/core/pipeline_parallel/
// fine_grained_activation_offload.py): in every layer, what the listed modules
// keep for backward (models::layer_offloaded_bytes) goes to the host on a copy
// stream of its own once each module's forward is done, and comes back on
// another one module ahead of its backward (a module's reload is issued as the
// module after it starts its backward, and waits for its own copy out). So a
// layer's copies out run beside its forward and its copies back beside the
// backward of the layer after it: a pass of many layers waits, per layer, for
// what the link takes beyond the compute beside it, max(0, bytes / rate -
// forward) and max(0, bytes / rate - backward). (Megatron-Core lets a forward run
// ahead of its copies, holding their tensors on the GPU until they have left;
// charging the wait instead keeps one layer's copies on the GPU, which is what
// models::stage_memory counts.) The copies take no SMs. Returns a layer's
// waits as PassTimes (forward, backward and offload, their sum), given its
// passes; zero without it.
PassTimes module_offload_stall(const models::scenario::Scenario& s, const DeviceProfile& profile,
                               const PassTimes& layer, models::LayerKind kind);

}  // namespace myriad::sim
