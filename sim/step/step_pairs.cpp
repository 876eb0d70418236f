// The step engine's F&B passes (DualPipe's, combined 1F1B's): each phase of
// sim/analytic/pair_passes.hpp played with its all-to-alls as flows.
#include <algorithm>
#include <array>
#include <vector>

#include "sim/analytic/pair_passes.hpp"
#include "sim/step/step_actors.hpp"

XBT_LOG_EXTERNAL_DEFAULT_CATEGORY(myriad_step);

namespace myriad::sim::step_detail {
namespace {

// The expert all-to-alls of layer `layer` that an F&B pass's phase runs, as flows
// where a kind plays them (`play`; else only counted); returns their priced time.
double pair_layer_a2a(StepState& p, int row, int stage, const PairPhase& phase,
                      const std::array<int, 2>& layers, int layer, bool play) {
  double priced = 0;
  for (const bool forward : {true, false}) {
    if (layer >= layers[forward ? 0U : 1U]) continue;
    for (const auto& a2a : p.pair_a2a) {
      if (of_forward(a2a.part) != forward || !phase.runs(a2a.part) || a2a.kinds.empty()) continue;
      for (const int k : a2a.kinds) {
        if (play) {
          p.traffic[static_cast<std::size_t>(k)]->play(p, row, stage, a2a.comm, Played::in_pair);
        }
      }
      priced += a2a.comm.cost.time_s;
    }
  }
  return priced;
}

// An F&B pass (pair_passes.hpp), phase by phase as both engines describe it, each
// phase layer by layer: a phase is priced on the chunks' sums, and the rule is
// the same on any split of its compute and all-to-alls in like proportions, so
// it is played as slices, one a layer (as many as the layers of the passes whose
// all-to-alls it runs), each the share of the phase that the all-to-alls it
// plays as flows are of all it plays (equal shares where layers are alike, or
// where none are flows). In a slice, its share of the phase's compute (slowed by
// the rank group's straggler factor, and by the share of the compute rate the
// all-to-alls' kernels take while they run) beside one layer's all-to-alls, as
// flows where a kind of layer traffic plays them, and then what its share of
// the phase's priced all-to-all time holds beyond them (the all-to-alls of layers
// priced whole: dense layers, partial recomputation); the slice ends when both
// have, and where nothing contends takes its share of the phase's priced time.
// Played by each member of an expert group in the same order, so the group's
// exchanges meet; spread over the layers as they run, not all at the phase's
// start, they meet the pipeline transfers and data-parallel traffic as often as
// they would.
}  // namespace

void run_pair(StepState& p, int row, int stage, const StepTask& t, double slow) {
  const PairPhases phases = pair_phases(
      p.program.schedule, p.program.chunk_passes(stage, t.pass.chunk),
      p.program.chunk_passes(stage, t.pair.chunk), p.program.overlap_share, p.program.delay_wgrad);
  const std::array<int, 2> layers = {p.program.main_layers(stage, t.pass.chunk),
                                     p.program.main_layers(stage, t.pair.chunk)};
  std::vector<double> weights;
  for (int i = 0; i < phases.count; ++i) {
    const PairPhase& phase = phases.phase[static_cast<std::size_t>(i)];
    const int slices =
        std::max({1, phase.runs_forward() ? layers[0] : 0, phase.runs_backward() ? layers[1] : 0});
    weights.assign(static_cast<std::size_t>(slices), 1.0 / slices);
    double flows = 0;
    for (int l = 0; l < slices; ++l) {
      weights[static_cast<std::size_t>(l)] = pair_layer_a2a(p, row, stage, phase, layers, l, false);
      flows += weights[static_cast<std::size_t>(l)];
    }
    for (double& w : weights) w = flows > 0 ? w / flows : 1.0 / slices;
    const double start = sg4::Engine::get_clock();
    for (int l = 0; l < slices; ++l) {
      const double w = weights[static_cast<std::size_t>(l)];
      sg4::ActorPtr side;
      if (phase.a2a > 0) {
        side = beside("pair-a2a", [&p, row, stage, &phase, &layers, l, w] {
          const double share = phase.a2a * w;
          // Rounding aside, nothing is left where every all-to-all is a flow.
          const double rest = share - pair_layer_a2a(p, row, stage, phase, layers, l, true);
          if (rest > 1e-12 * share) sg4::this_actor::sleep_for(rest);
        });
      }
      compute_for(p, (slow * phase.compute + p.program.overlap_share * phase.a2a) * w);
      if (side) side->join();
    }
    XBT_DEBUG("stage %d: F&B phase %d took %.6g s: %.6g s of compute beside %.6g s of all-to-alls",
              stage, i, sg4::Engine::get_clock() - start, phase.compute, phase.a2a);
  }
}

}  // namespace myriad::sim::step_detail
