// A pass's times as both engines price them (PassTimes): a model chunk's
// forward and backward for one micro-batch, and where its expert all-to-alls sit.
#pragma once

#include "models/plan/pipeline_schedule.hpp"

namespace myriad::sim {

// What the step engine plays, priced as the analytic engine prices it: per
// micro-batch, the forward and the backward (with recomputation) time of one
// layer, the embedding and the LM head, their tensor-, context- and
// expert-parallel collectives' exposed time included.
struct PassTimes {
  double forward = 0;
  double backward = 0;
  // Of backward: the weight gradients' GEMMs, which a zero-bubble schedule runs
  // in a pass of their own (the rest is its input-gradient pass).
  double weight = 0;
  // The expert all-to-alls in forward and backward: whole, and the part of
  // `forward` and `backward` they leave exposed. DualPipe's F&B pass hides one
  // pass's behind the other's compute (fb_time).
  double a2a_forward = 0;
  double a2a_backward = 0;
  double a2a_exposed_forward = 0;
  double a2a_exposed_backward = 0;
  // Of forward and backward: the GPU's waits for the host to issue its kernels
  // (host_wait.hpp).
  double host = 0;
  // Where the expert all-to-alls split a pass (PhaseTime::ep_inner, ep_first):
  // of forward, the experts' compute between the dispatch and the combine and the
  // dispatch's time; of backward, the experts' between the combine's mirror and
  // the dispatch's, and the combine's mirror's time.
  double inner_forward = 0;
  double inner_backward = 0;
  double a2a_first_forward = 0;
  double a2a_first_backward = 0;
  // Of inner_backward, the experts' weight gradients (PhaseTime::ep_inner_weight).
  double inner_weight = 0;
  // Of forward and backward: the GPU's waits for fine-grained activation
  // offload's copies (activation_offload.hpp, module_offload_stall).
  double offload = 0;
  PassTimes& operator+=(const PassTimes& o) {
    forward += o.forward;
    backward += o.backward;
    weight += o.weight;
    a2a_forward += o.a2a_forward;
    a2a_backward += o.a2a_backward;
    a2a_exposed_forward += o.a2a_exposed_forward;
    a2a_exposed_backward += o.a2a_exposed_backward;
    host += o.host;
    inner_forward += o.inner_forward;
    inner_backward += o.inner_backward;
    a2a_first_forward += o.a2a_first_forward;
    a2a_first_backward += o.a2a_first_backward;
    inner_weight += o.inner_weight;
    offload += o.offload;
    return *this;
  }
  [[nodiscard]] PassTimes scaled(double k) const {
    return {forward * k,
            backward * k,
            weight * k,
            a2a_forward * k,
            a2a_backward * k,
            a2a_exposed_forward * k,
            a2a_exposed_backward * k,
            host * k,
            inner_forward * k,
            inner_backward * k,
            a2a_first_forward * k,
            a2a_first_backward * k,
            inner_weight * k,
            offload * k};
  }
  [[nodiscard]] double of(const models::PipelineTask& t) const {
    if (t.forward) return forward;
    switch (t.part) {
      case models::PassPart::whole:
        return backward;
      case models::PassPart::input:
        return backward - weight;
      case models::PassPart::weight:
        return weight;
    }
    return backward;
  }
};
}  // namespace myriad::sim
