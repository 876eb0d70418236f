// The SimGrid settings every Myriad simulation runs with, set from code so
// that no scenario can forget them.
#pragma once

#include <string>

namespace myriad::sim {

// Applies Myriad's SimGrid configuration. Call before the platform is built.
//   network/model:CM02 and network/crosstraffic:0 make a ring's simulated time
//     equal alpha-beta (the default LV08 multiplies latency by 13.01 and
//     bandwidth by 0.97: +334% on a ring all-reduce, measured on SimGrid 3.32);
//   network/TCP-gamma:0 removes a TCP window cap that slows fast links 13-16%;
//   contexts/guard-size:0 lets more than ~32k actors start (vm.max_map_count);
//   contexts/stack-size (KiB; default 8 MiB): actors play straight-line code a
//     few calls deep. 1 MiB up to kSmallStackActors rank groups: every replica
//     of Llama 3 405B on 16,384 GPUs (2,048 actors) peaked at 1.2 GB in 2.8 s
//     with 8 MiB stacks, 278 MB in 1.7 s with 1 MiB; 128 KiB stacks cost more
//     there (1,024 GPUs, every replica: 167 MB against 123 MB), as they come from
//     the heap, zeroed (2026-11-29). Past it, 128 KiB: every replica of GPT-3 on
//     12,288 GPUs (1,536 rank groups, each with helpers for overlapped traffic)
//     ran out of a 4 GB address space at start with 1 MiB stacks and with
//     256 KiB, and finished with 128 KiB (2.09 GB peak RSS, 2026-12-01);
//   with `sanitizer_safe`, thread contexts: ASan reports false positives with
//     the default raw contexts.
//     Helpers count: every replica of GPT-3 175B on 4,096 GPUs at 1:3 (512
//     rank groups, each starting 20 helpers for overlapped data-parallel
//     traffic) peaked at 3.7 GB with 1 MiB stacks, 0.8 GB with 128 KiB, and ran
//     18 s against 15 s (2026-12-01);
//   network/optim:Full and cpu/optim:Full: SimGrid's default lazy updates round
//     the shares of identical flows apart (every replica of a 1,024-GPU step at
//     1:3, 16 replicas alike: their waits at one stage spread over 2e-5 s, the
//     step 5e-6 from what full updates give; the 4,096-GPU benchmark with its
//     oversubscription written 3:1 rather than 1:3, 4e-5), so that equivalent
//     ways of playing a step (classes of replicas, every replica) disagreed by
//     more than their arithmetic. With full updates they agree to 1e-12. The
//     cost, measured 2026-12-02: none on one replica per stage or on classes
//     (GPT-3 175B on 12,288 GPUs at 1:3 with stragglers: 3.30 s against 3.16 s,
//     the noise of a shared machine), 35 % on every replica one by one at 12,288
//     GPUs (13.4 s against 9.9 s);
// `rank_groups`: the actors the simulation runs, helpers included (0: few).
void apply_engine_config(bool sanitizer_safe = false, int rank_groups = 0);
constexpr int kSmallStackActors = 1024;

// SimGrid's version, e.g. "3.32".
std::string simgrid_version();

}  // namespace myriad::sim
