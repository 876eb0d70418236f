// What the GPU waits for the host (issue 38, "per-kernel launch and host
// overheads"). The host issues a layer's kernels one after another, each taking
// it DeviceProfile::host_launch_s (Python, PyTorch and Transformer Engine's
// module code, the driver's launch); the GPU runs them in order as they come.
//   - With nothing that stops the host, it runs ahead of the GPU and keeps a
//     queue of launches: a phase takes the longer of the GPU's time and the
//     host's, and the GPU waits max(0, host - gpu).
//   - Where the host waits for the GPU (Phase::host_sync: Megatron-Core's
//     dropless dispatcher copies the tokens per expert to the host before the
//     all-to-all), the queue is empty after the sync and the GPU idles until the
//     host issues the next kernel: a stretch from one sync to the next takes
//     max over k of (the host's time to issue items 1..k, then the GPU's time for
//     items k..n), at least the longer of the two, and up to their sum where the
//     kernels the host is slow to issue (many small ones: experts' GEMMs and
//     their fp8 casts) come before those the GPU is slow to run.
// Sources and the counts of launches: docs/notes/moe-host-overhead.md.
#pragma once

#include <span>

namespace myriad::sim {

// One kernel (or collective) in issue order: the host's time to issue it, the
// GPU's (exposed) time to run it.
struct Issued {
  double host = 0;
  double gpu = 0;
};

// A stretch the host starts issuing with the GPU idle and no launch queued:
// max over k of (sum of host up to and including item k) + (sum of gpu from item k).
// 0 for no items.
double synced_stretch(std::span<const Issued> items);

// The GPU's wait in a phase of `gpu` seconds whose launches take the host `host`
// seconds, the host never waiting for the GPU: max(0, host - gpu).
double unsynced_wait(double host, double gpu);

}  // namespace myriad::sim
