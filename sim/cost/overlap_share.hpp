// What communication overlapping compute takes from it: its kernels occupy SMs
// that the GEMMs beside it would otherwise use, so compute beside it runs at
// (1 - share) of its rate, share = the SMs the communication kernels hold over the
// GPU's SMs (issue 38: physics, not a fitted factor).
//
// - NCCL runs a collective on its channels, one thread block (one SM) a channel:
//   the profile's nccl_channels (DeviceProfile::overlap_compute_share is
//   nccl_channels / sms). Data-parallel, context-parallel and expert-parallel
//   collectives, and tensor-parallel ones that are not pipelined by userbuffers.
// - Tensor-parallel collectives overlapped chunk by chunk (overlap.tp) run as
//   Transformer Engine's userbuffers run them in Megatron's recipes: all-gathers
//   by ring exchange or bulk copies on 1-2 SMs, reduce-scatters pipelined or bulk
//   on 24 SMs. Source: the userbuffers configurations NVIDIA ships for H100
//   (NeMo/Megatron-Bridge, e.g. Llama 3.1 405B fp8 TP 8 CP 2 and Llama 3 70B TP 4):
//   qkv_fprop, fc1_fprop, proj_dgrad, fc2_dgrad by ring_exchange (num_sm 1 by
//   default), qkv_dgrad and fc1_dgrad bulk on 2 SMs, proj_fprop pipelined and
//   qkv_wgrad bulk on 24 (fc1_wgrad bulk on 2, taken as 24 like the others).
#pragma once

#include "models/plan/collective.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim {

// SMs a tensor-parallel all-gather and reduce-scatter take under userbuffers.
inline constexpr double kUserbuffersAllGatherSms = 2;
inline constexpr double kUserbuffersReduceScatterSms = 24;

// The share of the compute rate `c`'s kernels take while it overlaps compute
// chunk by chunk, on `p`'s SMs; at most 1.
double overlap_share(const models::Collective& c, const DeviceProfile& p);

}  // namespace myriad::sim
