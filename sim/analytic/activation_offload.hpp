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

}  // namespace myriad::sim
