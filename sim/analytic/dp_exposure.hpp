// Exposed data-parallel time when its traffic overlaps the step (overlap.dp) on
// a schedule of one model chunk a stage (1F1B, or one stage), as Megatron-LM
// schedules it: the closed form of the analytic engine. An interleaved schedule
// plays its stages' data-parallel streams pass by pass instead
// (pipeline_with_dp); both follow dp_stream.hpp.
#pragma once

namespace myriad::sim {

// What hides data-parallel traffic (overlap.dp): the first stage's schedule, which
// starts the step and ends it.
struct DpWindows {
  double forward = 0;   // the first forward of one micro-batch
  double backward = 0;  // the last backward (and recomputation) of one micro-batch
  double buckets = 1;   // gradient buckets
  double stages = 1;    // pipeline stages as slow as the slowest
};

// Exposed data-parallel time with overlap, on one link that carries one
// collective after another. The first bucket of parameters is gathered before
// anything, the others beside the first forward, which waits for them. The
// gradients are reduced as the last micro-batch's backward makes them: all
// buckets but the last from the end of the backward's first bucket, the last
// after it. What the step waits for is exposed; the rest hides beside compute,
// whose kernels lose `share` of their rate to it. Every stage reduces beside its
// own last backward, and the last micro-batch's backward passes through them all
// in turn: that slowdown is paid once a stage as slow as the slowest (the step
// engine plays the same schedule).
// What data-parallel traffic costs the step: the time it waits for the link, and
// the compute that traffic beside it slows, on the stage that ends the step
// (compute) and on the others, reaching it as waits (bubble).
struct DpCost {
  double exposed = 0;
  double compute = 0;
  double bubble = 0;
};

DpCost exposed_dp(double gather, double reduce, const DpWindows& w, double share);

}  // namespace myriad::sim
