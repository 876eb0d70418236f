#include "sim/stage_split/pipeline_split.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <limits>
#include <stdexcept>

#include "models/plan/memory.hpp"
#include "models/plan/step_plan.hpp"
#include "sim/analytic/estimator.hpp"

namespace myriad::sim {
namespace {

std::string unit_name(int k, int layers) {
  if (k == 0) return "embedding";
  if (k == layers + 1) return "head";
  return fmt::format("layer {}", k - 1);
}

// Every op's device when unit k sits on stage stage_of[k].
std::vector<int> op_devices(const PipelineGraph& g, const std::vector<int>& stage_of) {
  std::vector<int> device(g.graph.nodes.size());
  for (int j = 0; j < g.micro_batches; ++j) {
    for (int k = 0; k < g.units(); ++k) {
      device[g.op(j, false, k)] = device[g.op(j, true, k)] = stage_of[k];
    }
  }
  return device;
}

// Counts as close to `counts` as multiples of v, each at least v, summing to
// `layers`: round each to the nearest multiple (at least v), then move v layers
// at a time, taking from the stage furthest above its count, giving to the one
// furthest below (the first on ties). Empty when the layers cannot make it.
std::vector<int> rounded_counts(const std::vector<int>& counts, int layers, int v) {
  const int stages = static_cast<int>(counts.size());
  if (layers % v != 0 || layers < stages * v) return {};
  std::vector<int> out(counts.size());
  int sum = 0;
  for (int k = 0; k < stages; ++k) {
    out[k] = std::max(v, (counts[k] + v / 2) / v * v);
    sum += out[k];
  }
  while (sum != layers) {
    int best = -1;
    for (int k = 0; k < stages; ++k) {
      const int gap = out[k] - counts[k];  // above its count when > 0
      if (sum > layers && out[k] > v && (best < 0 || gap > out[best] - counts[best])) best = k;
      if (sum < layers && (best < 0 || gap < out[best] - counts[best])) best = k;
    }
    out[best] += sum > layers ? -v : v;
    sum += sum > layers ? -v : v;
  }
  return out;
}

// Baechi's placement as stages (see the header).
void to_stages(const PipelineGraph& g, const models::scenario::Scenario& s, StagePlacement& out) {
  const int stages = g.devices.count;
  std::vector<int> rank(stages, -1);
  std::vector<int> stage_of(g.units());
  int used = 0;
  for (int k = 0; k < g.units(); ++k) {
    const int device = out.graph.device[g.op(0, false, k)];
    if (rank[device] < 0) rank[device] = used++;
    stage_of[k] = rank[device];
    if (k > 0 && stage_of[k] < stage_of[k - 1]) out.contiguous = false;
  }
  out.stages_used = used;
  std::vector<int> counts(used, 0);
  for (int k = 1; k <= g.layers; ++k) ++counts[stage_of[k]];
  // Stages the placement left empty: the slowest stage of two layers or more is
  // split in two, until there are as many as the pipeline's.
  std::vector<int> parent(used);
  for (int i = 0; i < used; ++i) parent[i] = i;
  while (static_cast<int>(counts.size()) < stages) {
    const int last = static_cast<int>(counts.size()) - 1;
    int slowest = -1;
    double most = -1;
    for (int i = 0, before = 0; i <= last; before += counts[i++]) {
      const double t = g.stage_seconds(before, counts[i], 1, i == 0, i == last);
      if (counts[i] >= 2 && t > most) {
        most = t;
        slowest = i;
      }
    }
    if (slowest < 0) break;
    const int half = counts[slowest] / 2;
    counts.insert(counts.begin() + slowest + 1, counts[slowest] - half);
    counts[slowest] = half;
    parent.insert(parent.begin() + slowest + 1, parent[slowest]);
    ++out.stages_added;
  }
  if (used < stages) {
    out.note += fmt::format(
        "; it used {} of the {} stages (earliest-start scheduling keeps an op beside its input "
        "whenever that stage is free, and a free stage a transfer away starts it later)",
        used, stages);
  }
  if (static_cast<int>(counts.size()) < stages) {
    out.note += fmt::format("; too few layers to fill {} stages", stages);
    return;
  }
  if (out.stages_added > 0) {
    out.note +=
        fmt::format("; completed by splitting the slowest stage {} times", out.stages_added);
  }
  const int v = s.parallelism.virtual_stages;
  out.stage_layers = rounded_counts(counts, g.layers, v);
  if (out.stage_layers.empty()) {
    out.note += fmt::format("; {} layers do not split into {} stages of multiples of {}", g.layers,
                            stages, v);
    return;
  }
  out.rounded = out.stage_layers != counts;
  const std::vector<int> laid = units_on_stages(g.layers, out.stage_layers);
  for (int k = 1; k <= g.layers; ++k) {
    out.layers_moved += parent[laid[k]] != stage_of[k] ? 1 : 0;
  }
  if (!out.contiguous) {
    out.note +=
        fmt::format("; not contiguous: laid out in order, {} layers moved", out.layers_moved);
  } else if (out.rounded) {
    out.note += fmt::format("; counts rounded to multiples of {} virtual stages, {} layers moved",
                            v, out.layers_moved);
  }
  if (parent[laid.back()] != stage_of.back()) out.note += "; the head moves to the last stage";
}

// Stage `stage`'s bytes on a GPU holding `layers` layers after `before`, v
// chunks a stage, as models::stage_memory counts them, with the allocator's
// fragmentation.
double stage_bytes(const PipelineGraph& g, int stage, int before, int layers, int v) {
  const models::PipelinePieces& p = g.pieces;
  const int last = g.devices.count - 1;
  const double in_flight = stage == last ? 1 : g.in_flight[stage];
  double bytes = g.over_layers(g.states_prefix, before, layers, v) +
                 g.over_layers(g.activations_prefix, before, layers, v) * in_flight;
  if (stage == 0) bytes += p.embedding.states + p.embedding.activations * in_flight;
  if (stage == last) bytes += p.head.states + p.head.activations;
  return bytes * (1 + g.fragmentation);
}

// The contiguous split minimising the slowest stage's time, in blocks of v
// layers, among those that fit (all of them when `memory` is false). Empty when
// none fits.
std::vector<int> balanced_split(const PipelineGraph& g, int v, bool memory,
                                double memory_fraction = 1) {
  const int stages = g.devices.count;
  const int blocks = g.layers / v;
  if (g.layers % v != 0 || blocks < stages) return {};
  constexpr double kNone = std::numeric_limits<double>::infinity();
  // best[k][b]: the slowest of stages 0..k holding b blocks; choice: stage k's blocks.
  std::vector<std::vector<double>> best(stages, std::vector<double>(blocks + 1, kNone));
  std::vector<std::vector<int>> choice(stages, std::vector<int>(blocks + 1, 0));
  // Stage `stage` holding the n blocks before block b.
  const auto stage_cost = [&](int stage, int n, int b) {
    const int before = (b - n) * v;
    if (memory && stage_bytes(g, stage, before, n * v, v) > memory_fraction * g.usable_bytes) {
      return kNone;
    }
    return g.stage_seconds(before, n * v, v, stage == 0, stage == stages - 1);
  };
  for (int b = 1; b <= blocks; ++b) {
    best[0][b] = stage_cost(0, b, b);
    choice[0][b] = b;
  }
  // Stage k's own cost grows with its blocks n and the stages before it hold
  // fewer, whose best cannot grow: the least of the larger of the two is where
  // they cross, found by bisection (a plan tries this for thousands of layouts).
  for (int k = 1; k < stages; ++k) {
    for (int b = k + 1; b <= blocks; ++b) {
      int lo = 1, hi = b - k;
      while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (stage_cost(k, mid, b) >= best[k - 1][b - mid]) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      for (const int n : {lo - 1, lo}) {
        if (n < 1) continue;
        const double t = std::max(best[k - 1][b - n], stage_cost(k, n, b));
        if (t < best[k][b]) {
          best[k][b] = t;
          choice[k][b] = n;
        }
      }
    }
  }
  if (best[stages - 1][blocks] == kNone) return {};
  std::vector<int> split(stages);
  for (int k = stages - 1, b = blocks; k >= 0; --k) {
    split[k] = choice[k][b] * v;
    b -= choice[k][b];
  }
  return split;
}

StagePlacement given_split(const PipelineGraph& g, StageSplit a, std::vector<int> split,
                           std::string note) {
  StagePlacement out;
  out.algorithm = a;
  out.stage_layers = std::move(split);
  out.stages_used = g.devices.count;
  out.graph = models::place::evaluate(g.graph, g.devices,
                                      op_devices(g, units_on_stages(g.layers, out.stage_layers)));
  out.note = std::move(note);
  return out;
}

}  // namespace

std::vector<int> units_on_stages(int layers, const std::vector<int>& stage_layers) {
  std::vector<int> stage_of(layers + 2, 0);
  int k = 1;
  for (int stage = 0; stage < static_cast<int>(stage_layers.size()); ++stage) {
    for (int n = 0; n < stage_layers[stage] && k <= layers; ++n) stage_of[k++] = stage;
  }
  stage_of.back() = static_cast<int>(stage_layers.size()) - 1;
  return stage_of;
}

double PipelineGraph::over_layers(const std::vector<double>& prefix, int before, int stage_layers,
                                  int v) const {
  // Chunk c holds its share of round c: layers c L / v + before / v onwards.
  // Chunks of uneven layers (embedding_as_layer) are counted as one contiguous
  // run, exact for one chunk a stage.
  if (layers % v != 0 || before % v != 0 || stage_layers % v != 0) v = 1;
  // Layers all alike: counted, not differenced (the split's ties stay exact).
  if (uniform_layers) return stage_layers * (prefix.size() > 1 ? prefix[1] : 0.0);
  const int round = layers / v;
  double sum = 0;
  for (int c = 0; c < v; ++c) {
    const int first = c * round + before / v;
    const int end = first + stage_layers / v;
    sum += prefix[static_cast<std::size_t>(end)] - prefix[static_cast<std::size_t>(first)];
  }
  return sum;
}

double PipelineGraph::stage_seconds(int before, int stage_layers, int v, bool first,
                                    bool last) const {
  const auto pass = [&](int k) { return forward_s[k] + backward_s[k]; };
  double t = over_layers(pass_prefix, before, stage_layers, v);
  if (first) t += pass(0);
  if (last) t += pass(units() - 1);
  return t;
}

const char* stage_split_name(StageSplit a) {
  switch (a) {
    case StageSplit::uniform:
      return "uniform";
    case StageSplit::m_topo:
      return "m-TOPO";
    case StageSplit::m_etf:
      return "m-ETF";
    case StageSplit::m_sct:
      return "m-SCT";
    case StageSplit::balanced:
      return "balanced";
  }
  return "?";
}

std::optional<StageSplit> parse_stage_algorithm(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (StageSplit a : kStageAlgorithms) {
    std::string name = stage_split_name(a);
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (name == lower) return a;
  }
  return std::nullopt;
}

PipelineGraph pipeline_units(const models::scenario::Scenario& s, const DeviceProfile& profile) {
  const int pp = s.parallelism.pp;
  if (pp < 2) {
    throw std::invalid_argument(
        "there is no pipeline to place: parallelism.pp is 1 (give pp >= 2, e.g. --set "
        "parallelism.pp=4)");
  }
  if (s.parallelism.recompute_layers > 0) {
    throw std::invalid_argument(fmt::format(
        "place prices every layer alike, but parallelism.recompute_layers {} recomputes the "
        "first layers of each stage's chunks, which depend on the split: place with "
        "parallelism.recompute full or none (--set parallelism.recompute_layers=0)",
        s.parallelism.recompute_layers));
  }
  std::optional<DeviceProfile> copy;  // only when the profile is not yet on this GPU
  const DeviceProfile& placed = is_on_hardware(profile, s.cluster.gpu)
                                    ? profile
                                    : copy.emplace(on_hardware(profile, s.cluster.gpu));
  const models::StepPlan plan = models::plan_step(s);
  const StageCosts costs = stage_costs(s, placed);
  PipelineGraph g;
  g.layers = s.model.layers;
  g.virtual_stages = s.parallelism.virtual_stages;
  g.micro_batches_in_step = plan.micro_batches;
  g.micro_batches =
      std::max(1, std::min(plan.micro_batches, kPipelineGraphMaxOps / (2 * g.units())));
  g.forward_s.assign(g.units(), costs.layer.forward);
  g.backward_s.assign(g.units(), costs.layer.backward);
  for (int k = 1; k <= g.layers; ++k) {  // an MoE model's dense layers
    if (s.model.is_moe_layer(k - 1) || !s.model.is_moe()) continue;
    g.forward_s[static_cast<std::size_t>(k)] = costs.dense_layer.forward;
    g.backward_s[static_cast<std::size_t>(k)] = costs.dense_layer.backward;
  }
  g.forward_s.front() = costs.embedding.forward;
  g.backward_s.front() = costs.embedding.backward;
  g.forward_s.back() = costs.head.forward;
  g.backward_s.back() = costs.head.backward;
  g.transfer_bytes = costs.pp_bytes_per_gpu;
  g.pieces = models::pipeline_pieces(s, plan);
  // The MTP modules' blocks run with the head, on the last stage, whatever the split.
  for (int j = 0; j < s.model.mtp_depth; ++j) {
    const bool dense = s.model.is_moe() && !s.model.is_moe_layer(s.model.layers + j);
    g.forward_s.back() += dense ? costs.dense_layer.forward : costs.layer.forward;
    g.backward_s.back() += dense ? costs.dense_layer.backward : costs.layer.backward;
    const models::PieceMemory& block = dense ? g.pieces.dense_layer : g.pieces.layer;
    g.pieces.head.states += block.states;
    g.pieces.head.activations += block.activations;
  }
  for (int stage = 0; stage < pp; ++stage) {
    g.in_flight.push_back(models::micro_batches_in_flight(s, plan, stage));
  }
  g.fragmentation = placed.memory_fragmentation;
  g.usable_bytes = s.cluster.gpu.hbm_bytes - placed.memory_reserved_bytes;
  const models::PipelinePieces& p = g.pieces;
  // A layer may go on any stage: it carries the stages' mean micro-batches in
  // flight (the last stage holds one), so that the graph's memory is the job's.
  double mean_in_flight = 1;
  for (int stage = 0; stage + 1 < pp; ++stage) mean_in_flight += g.in_flight[stage];
  mean_in_flight /= pp;
  g.unit_bytes.assign(g.units(), p.layer.states + p.layer.activations * mean_in_flight);
  const auto n = static_cast<std::size_t>(g.layers);
  g.pass_prefix.assign(n + 1, 0.0);
  g.states_prefix.assign(n + 1, 0.0);
  g.activations_prefix.assign(n + 1, 0.0);
  g.uniform_layers = !s.model.mixed();
  for (std::size_t k = 1; k <= n; ++k) {
    const bool dense = s.model.is_moe() && !s.model.is_moe_layer(static_cast<int>(k) - 1);
    const models::PieceMemory& piece = dense ? p.dense_layer : p.layer;
    if (dense) g.unit_bytes[k] = piece.states + piece.activations * mean_in_flight;
    g.pass_prefix[k] = g.pass_prefix[k - 1] + g.forward_s[k] + g.backward_s[k];
    g.states_prefix[k] = g.states_prefix[k - 1] + piece.states;
    g.activations_prefix[k] = g.activations_prefix[k - 1] + piece.activations;
  }
  g.unit_bytes.front() = p.embedding.states + p.embedding.activations * g.in_flight[0];
  g.unit_bytes.back() = p.head.states + p.head.activations;
  for (double& bytes : g.unit_bytes) bytes *= 1 + g.fragmentation;

  g.devices.count = pp;
  g.devices.memory_bytes = std::max(g.usable_bytes, 1.0);
  g.devices.latency_s = costs.pp_transfer.latency_s;
  g.devices.bandwidth_Bps = costs.pp_transfer.bandwidth_s > 0
                                ? g.transfer_bytes / costs.pp_transfer.bandwidth_s
                                : std::numeric_limits<double>::infinity();

  return g;
}

std::size_t pipeline_graph_least_ops(const models::scenario::Scenario& s) {
  return 2 * (static_cast<std::size_t>(std::max(s.model.layers, 0)) + 2);
}

PipelineGraph pipeline_graph(const models::scenario::Scenario& s, const DeviceProfile& profile) {
  PipelineGraph g = pipeline_units(s, profile);
  const int units = g.units();
  g.graph.nodes.resize(static_cast<std::size_t>(g.micro_batches) * 2 * units);
  for (int j = 0; j < g.micro_batches; ++j) {
    for (int k = 0; k < units; ++k) {
      for (const bool backward : {false, true}) {
        models::place::OpNode& node = g.graph.nodes[g.op(j, backward, k)];
        node.name = fmt::format("{} {} of micro-batch {}", unit_name(k, g.layers),
                                backward ? "backward" : "forward", j);
        node.compute_s = backward ? g.backward_s[k] : g.forward_s[k];
        node.memory_bytes = j == 0 && !backward ? g.unit_bytes[k] : 0;
        node.group = k;
      }
      if (k + 1 < units) {
        g.graph.edges.push_back({g.op(j, false, k), g.op(j, false, k + 1), g.transfer_bytes});
        g.graph.edges.push_back({g.op(j, true, k + 1), g.op(j, true, k), g.transfer_bytes});
      }
      // The activations a backward reads stay where its forward kept them.
      g.graph.edges.push_back({g.op(j, false, k), g.op(j, true, k), 0});
    }
  }
  return g;
}

std::vector<int> own_stage_layers(const models::scenario::Scenario& s) {
  std::vector<int> split(static_cast<std::size_t>(s.parallelism.pp));
  for (int k = 0; k < s.parallelism.pp; ++k) {
    split[static_cast<std::size_t>(k)] = models::stage_layers(s, k);
  }
  return split;
}

StagePlacement place_stages(const models::scenario::Scenario& s, const PipelineGraph& g,
                            StageSplit a) {
  const int stages = g.devices.count;
  const int v = s.parallelism.virtual_stages;
  switch (a) {
    case StageSplit::uniform: {
      std::vector<int> split = own_stage_layers(s);
      split.resize(static_cast<std::size_t>(stages));
      return given_split(g, a, split,
                         s.parallelism.uneven_stages() ? "the scenario's own uneven stages"
                                                       : "every stage the same layers");
    }
    case StageSplit::balanced: {
      std::vector<int> split = balanced_split(g, v, true);
      if (!split.empty()) {
        return given_split(g, a, split,
                           "contiguous layers minimising the slowest stage, every stage within "
                           "memory (dynamic programming)");
      }
      split = balanced_split(g, v, false);
      if (split.empty()) {
        StagePlacement out = place_stages(s, g, StageSplit::uniform);
        out.algorithm = a;
        out.stage_layers.clear();
        out.note = fmt::format("{} layers do not split into {} stages of multiples of {}", g.layers,
                               stages, v);
        return out;
      }
      return given_split(g, a, split,
                         "no split fits memory: contiguous layers minimising the slowest stage");
    }
    case StageSplit::m_topo:
    case StageSplit::m_etf:
    case StageSplit::m_sct: {
      const models::place::Placer baechi = a == StageSplit::m_topo  ? models::place::Placer::m_topo
                                           : a == StageSplit::m_etf ? models::place::Placer::m_etf
                                                                    : models::place::Placer::m_sct;
      StagePlacement out;
      out.algorithm = a;
      out.graph = models::place::place(g.graph, g.devices, baechi);
      out.note = out.graph.note;
      to_stages(g, s, out);
      return out;
    }
  }
  throw std::invalid_argument("place_stages: unknown algorithm");
}

std::vector<int> balanced_stage_layers(const models::scenario::Scenario& s,
                                       const DeviceProfile& profile, double memory_fraction) {
  if (s.parallelism.pp < 2) return {};
  return balanced_split(pipeline_units(s, profile), s.parallelism.virtual_stages, true,
                        memory_fraction);
}

models::scenario::Scenario with_stage_layers(models::scenario::Scenario s,
                                             const std::vector<int>& stage_layers) {
  if (own_stage_layers(s) == stage_layers) return s;
  auto& p = s.parallelism;
  p.stage_layers = stage_layers;
  p.first_stage_layers = 0;
  p.last_stage_layers = 0;
  p.embedding_as_layer = false;
  p.loss_as_layer = false;
  p.pipeline_layout.clear();
  p.layout_layers.clear();
  // Set here, not by a file: the resolved scenario writes it out and says so.
  s.origins["parallelism.stage_layers"] = models::scenario::Location{"<myriad place>", 0, 0};
  return s;
}

}  // namespace myriad::sim
