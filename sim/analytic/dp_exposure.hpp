// Exposed data-parallel time when its traffic overlaps the step (overlap.dp),
// as Megatron-LM schedules it: the closed form of the analytic engine, which
// the step engine plays as actors (sim/step/step_engine.cpp).
#pragma once

#include <span>

namespace myriad::sim {

// What hides data-parallel traffic (overlap.dp): the first stage's schedule, which
// starts the step and ends it.
struct DpWindows {
  double forward = 0;        // one chunk's forward of one micro-batch
  double backward = 0;       // one chunk's backward (and recomputation) of one micro-batch
  double gather_stride = 0;  // from one chunk's first forward to the next's
  double reduce_stride = 0;  // from one chunk's last backward to the previous chunk's
  double buckets = 1;        // gradient buckets per chunk
  double stages = 1;         // pipeline stages as slow as the slowest
  // Where the schedule puts them (interleaved, from its longest path): chunk k's
  // first forward from chunk 0's, and its last backward's end from chunk 0's
  // (<= 0). Empty: k strides.
  std::span<const double> gather_at;
  std::span<const double> reduce_at;
};

// Exposed data-parallel time with overlap, as Megatron-LM overlaps it (for any
// schedule), on one link that carries one collective after another.
// Parameters are gathered chunk by chunk from the step's start: chunk 0's first
// bucket before anything, its others beside its first forward; chunk k's before
// its first forward, k strides in. Gradients are reduced chunk by chunk as the
// last micro-batch's backwards make them: chunk k's (k > 0) once its last
// backward ends, k strides before the last; chunk 0's bucket by bucket from the
// end of its backward's first bucket, its last bucket after the backward. What
// the step waits for is exposed; the rest hides beside compute, whose kernels
// lose `share` of their rate to it. Every stage reduces beside its own last
// backward, and the last micro-batch's backward passes through them all in turn:
// that slowdown is paid once a stage (the step engine plays the same schedule).
// What data-parallel traffic costs the step: the time it waits for the link, and
// the compute that traffic beside it slows, on the stage that ends the step
// (compute) and on the others, reaching it as waits (bubble).
struct DpCost {
  double exposed = 0;
  double compute = 0;
  double bubble = 0;
};

DpCost exposed_dp(double gather, double reduce, double v, const DpWindows& w, double share);

}  // namespace myriad::sim
