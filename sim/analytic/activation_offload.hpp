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
//
// The host link may carry the GPU's network traffic too
// (cluster.gpu.host_link_carries_network): a PCIe GPU reaches host memory and,
// by GPUDirect RDMA through its PCIe switch, its NIC over its one x16 link
// ("each H100 GPU in the system is connected to an NVIDIA CX-7 Infiniband 400
// NDR NIC through a PCIe Gen5x16 connection", NVIDIA's DGX-H100 architecture
// note, mlcommons/inference_results_v3.1). What a pass's collectives send over
// the NICs then crosses the same link, in the same direction as its copies out
// (the GPU's sends) and back (its receives, as much: rings and all-to-alls move
// as much each way). The link moves both no faster than their sum over its
// rate, whoever it serves first, so a copy beside a pass takes the link for its
// bytes and the pass's network bytes (network_bytes_per_gpu). This is the least
// the pass can take: it does not count the collectives' own slowing where they
// are exposed, nor the PCIe switch's uplink that two GPUs of a DGX may share
// (not published). The pipeline's sends between passes and the data-parallel
// collectives outside the layers (ZeRO-1 and 2's, at the step's ends) are not
// counted beside the copies.
#pragma once

#include <span>

#include "models/scenario/scenario.hpp"
#include "models/transformer/layer_program.hpp"
#include "sim/analytic/pipeline_makespan.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

// One layer of the sequence: its passes' times, the activations it keeps and
// the bytes its passes' collectives move over the GPU's host link each way
// besides (network_bytes_per_gpu; 0 where the link carries no network traffic).
struct OffloadLayer {
  double forward_s = 0;
  double backward_s = 0;
  double bytes = 0;
  double network_forward = 0;
  double network_backward = 0;
};

// What one GPU sends (and as much receives) over its NICs for a phase's
// collectives: those whose group spans nodes. A ring collective over n ranks,
// k of them in a node, sends busbw_factor(kind, n) x bytes from each rank over
// the ring, which leaves each node once: over the node's k ranks, that divided
// by k each (NCCL's channels spread it over the NICs). An all-to-all sends
// (n - k) / n of its bytes to other nodes, a two-hop one its network share
// (two_hop_shares). The scenario gives the groups' spans.
double network_bytes_per_gpu(const models::Phase& phase, const models::scenario::Scenario& s);

// The network bytes of a layer's passes, forward and backward (with its
// recomputation), where the scenario's host link carries them; 0 otherwise.
struct LayerNetworkBytes {
  double forward = 0;
  double backward = 0;
};
LayerNetworkBytes layer_network_bytes(const models::LayerProgram& lp,
                                      const models::scenario::Scenario& s);

// The waits a micro-batch's forward and backward take when the first `offloaded`
// of `layers` (0 <= offloaded < layers.size()) go to the host at `to_host_Bps`
// and come back at `to_device_Bps` (PassTimes' forward and backward; the rest 0).
// Throws std::invalid_argument on an offloaded count out of range or a rate <= 0.
PassTimes offload_stall(std::span<const OffloadLayer> layers, int offloaded, double to_host_Bps,
                        double to_device_Bps);

// The stall for a scenario's model layers (model.layers, each of its kind: `moe`
// for an MoE model's MoE layers, `dense` for the others; MTP blocks stay on the
// GPU) at the profile's achieved host-link rates, beside the network bytes of
// each kind's layer program (`moe_program`, `dense_program`, as the passes);
// zero without offload.
PassTimes offload_stall(const models::scenario::Scenario& s, const DeviceProfile& profile,
                        const PassTimes& moe, const PassTimes& dense,
                        const models::LayerProgram& moe_program,
                        const models::LayerProgram& dense_program);

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
// forward) and max(0, bytes / rate - backward), the layer's network bytes added
// to its copies' where the link carries them. (Megatron-Core lets a forward run
// ahead of its copies, holding their tensors on the GPU until they have left;
// charging the wait instead keeps one layer's copies on the GPU, which is what
// models::stage_memory counts.) The copies take no SMs. Returns a layer's
// waits as PassTimes (forward, backward and offload, their sum), given its
// passes; zero without it.
PassTimes module_offload_stall(const models::scenario::Scenario& s, const DeviceProfile& profile,
                               const PassTimes& layer, models::LayerKind kind,
                               const models::LayerProgram& program);

}  // namespace myriad::sim
