#include "sim/stage_split/op_grain.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "models/transformer/layer_program.hpp"
#include "sim/cost/compute_cost.hpp"

namespace myriad::sim {
namespace {

using models::Op;
using models::OpClass;

// One unit's pieces: per forward op, its time forward and backward (cost model,
// before scaling to the unit), its weight elements and the tensor it hands on.
struct UnitPieces {
  std::vector<std::string> names;
  std::vector<double> forward, backward, weights, out;
};

double output_bytes(const Op& op) {
  switch (op.cls) {
    case OpClass::gemm: {
      const double elems =
          op.gemm.batch * (op.gemm.m * op.gemm.k + op.gemm.k * op.gemm.n + op.gemm.m * op.gemm.n);
      const double elem = elems > 0 ? op.bytes / elems : 0;
      return op.gemm.m * op.gemm.n * op.gemm.batch * elem;
    }
    case OpClass::attention:
      return op.bytes / 4;
    case OpClass::elementwise:
    case OpClass::optimizer:
      return op.bytes / 2;
  }
  return 0;
}

// A GEMM against a weight (not attention's scores or context, whose operands are
// both activations).
bool holds_weights(const Op& op) {
  return op.cls == OpClass::gemm && std::string_view(op.name).rfind("attention.", 0) != 0;
}

// The number of backward ops models::backward_of makes for forward op `op`: none
// for an fp8 cast, a GEMM's input and weight gradients (after a cast of the
// output gradient in fp8), one otherwise.
int backward_ops_of(const Op& op) {
  if (op.name == "fp8.cast") return 0;
  if (op.cls == OpClass::gemm) return op.fp8 ? 3 : 2;
  return 1;
}

UnitPieces unit_pieces(const models::LayerProgram& lp, const DeviceProfile& profile,
                       const std::string& prefix) {
  const auto seconds = [&](const Op& op) { return compute_cost(op, profile).time_s; };
  UnitPieces u;
  const std::vector<Op>& fwd = lp.forward.ops;
  for (const Op& op : fwd) {
    u.names.push_back(prefix + std::string(op.name));
    u.forward.push_back(seconds(op));
    u.weights.push_back(holds_weights(op) ? op.gemm.k * op.gemm.n * op.gemm.batch : 0);
    u.out.push_back(output_bytes(op));
  }
  u.backward.assign(fwd.size(), 0);
  // backward_of walks the forward in reverse: mirror it.
  std::size_t b = 0;
  for (std::size_t i = fwd.size(); i-- > 0;) {
    for (int n = backward_ops_of(fwd[i]); n > 0; --n) {
      if (b >= lp.backward.ops.size()) {
        throw std::logic_error("op grain: the backward program is shorter than its forward");
      }
      u.backward[i] += seconds(lp.backward.ops[b++]);
    }
  }
  if (b != lp.backward.ops.size()) {
    throw std::logic_error("op grain: the backward program does not mirror its forward");
  }
  // Recomputation re-runs forward ops before the backward: each joins the piece of
  // its name (the last piece when none has it).
  for (const Op& op : lp.recompute.ops) {
    std::size_t at = fwd.size() - 1;
    for (std::size_t i = 0; i < fwd.size(); ++i) {
      if (fwd[i].name == op.name) {
        at = i;
        break;
      }
    }
    u.backward[at] += seconds(op);
  }
  return u;
}

// Scales `parts` to add up to `total` (evenly when they add up to nothing).
void scale_to(std::vector<double>& parts, double total) {
  double sum = 0;
  for (const double p : parts) sum += p;
  for (double& p : parts) {
    p = sum > 0 ? p * total / sum : total / static_cast<double>(parts.size());
  }
}

// Stage numbers by first appearance along the pieces, contiguity and layers cut.
void describe(const OpGrainGraph& g, OpGrainPlacement& out) {
  std::vector<int> rank(g.devices.count, -1);
  out.piece_stage.assign(g.pieces(), 0);
  int used = 0;
  for (int k = 0; k < g.pieces(); ++k) {
    const int device = out.graph.device[g.op(0, false, k)];
    if (rank[device] < 0) rank[device] = used++;
    out.piece_stage[k] = rank[device];
    if (k > 0 && out.piece_stage[k] < out.piece_stage[k - 1]) out.contiguous = false;
  }
  out.stages_used = used;
  std::vector<int> first_stage(g.layers + 2, -1);
  std::vector<bool> cut(g.layers + 2, false);
  for (int k = 0; k < g.pieces(); ++k) {
    const int unit = g.piece_unit[k];
    if (first_stage[unit] < 0) first_stage[unit] = out.piece_stage[k];
    cut[unit] = cut[unit] || out.piece_stage[k] != first_stage[unit];
  }
  for (int unit = 1; unit <= g.layers; ++unit) out.layers_cut += cut[unit] ? 1 : 0;
}

}  // namespace

OpGrainSize op_grain_size(const models::scenario::Scenario& s) {
  const models::ShardShape sh = models::shard_shape(s);
  const std::size_t layer = models::transformer_layer(s.model, sh).forward.ops.size();
  const std::size_t ends = models::embedding(s.model, sh).forward.ops.size() +
                           models::lm_head_and_loss(s.model, sh).forward.ops.size();
  // The MTP modules' blocks count as layers (with the head).
  const auto layers = static_cast<std::size_t>(std::max(s.model.stack_layers(), 0));
  if (!s.model.mixed()) return {2 * (ends + layers * layer), layer};
  // An MoE model's dense layers have ops of their own.
  const std::size_t dense =
      models::transformer_layer(s.model, sh, models::LayerKind::dense).forward.ops.size();
  const auto moe = static_cast<std::size_t>(s.model.moe_layers_in(0, s.model.stack_layers()));
  return {2 * (ends + moe * layer + (layers - moe) * dense), std::max(layer, dense)};
}

OpGrainGraph op_grain_graph(const models::scenario::Scenario& s, const DeviceProfile& profile,
                            const PipelineGraph& units) {
  std::optional<DeviceProfile> copy;
  const DeviceProfile& placed = is_on_hardware(profile, s.cluster.gpu)
                                    ? profile
                                    : copy.emplace(on_hardware(profile, s.cluster.gpu));
  const models::ShardShape sh = models::shard_shape(s);
  const UnitPieces embedding = unit_pieces(models::embedding(s.model, sh), placed, "embedding ");
  const UnitPieces layer = unit_pieces(models::transformer_layer(s.model, sh), placed, "");
  const UnitPieces dense =
      s.model.mixed()
          ? unit_pieces(models::transformer_layer(s.model, sh, models::LayerKind::dense), placed,
                        "")
          : layer;
  UnitPieces head = unit_pieces(models::lm_head_and_loss(s.model, sh), placed, "head ");
  // The MTP modules' blocks go with the head (pipeline_units prices them there).
  for (int j = 0; j < s.model.mtp_depth; ++j) {
    const bool block_dense = s.model.is_moe() && !s.model.is_moe_layer(s.model.layers + j);
    const UnitPieces& block = block_dense ? dense : layer;
    for (std::size_t i = 0; i < block.names.size(); ++i) {
      head.names.push_back(fmt::format("head mtp {} {}", j, block.names[i]));
      head.forward.push_back(block.forward[i]);
      head.backward.push_back(block.backward[i]);
      head.weights.push_back(block.weights[i]);
      head.out.push_back(block.out[i]);
    }
  }
  const double frag = 1 + units.fragmentation;
  const models::PipelinePieces& mem = units.pieces;

  OpGrainGraph g;
  g.devices = units.devices;
  g.layers = units.layers;
  g.micro_batches_in_step = units.micro_batches_in_step;
  for (int unit = 0; unit < units.units(); ++unit) {
    const bool is_embedding = unit == 0;
    const bool is_head = unit == units.units() - 1;
    const bool is_dense = !is_embedding && !is_head && !s.model.is_moe_layer(unit - 1);
    UnitPieces u = is_embedding ? embedding : is_head ? head : is_dense ? dense : layer;
    if (!is_embedding && !is_head) {
      for (std::string& name : u.names) name = fmt::format("layer {} {}", unit - 1, name);
    }
    scale_to(u.forward, units.forward_s[unit]);
    scale_to(u.backward, units.backward_s[unit]);
    const double states = (is_embedding ? mem.embedding.states
                           : is_head    ? mem.head.states
                           : is_dense   ? mem.dense_layer.states
                                        : mem.layer.states) *
                          frag;
    const double activations = std::max(0.0, units.unit_bytes[unit] - states);
    std::vector<double> state_share = u.weights;
    if (is_embedding) {
      state_share.assign(u.weights.size(), 0);
      state_share.front() = 1;  // the table sits on the lookup
    }
    scale_to(state_share, states);
    std::vector<double> activation_share = u.out;
    scale_to(activation_share, activations);
    for (std::size_t i = 0; i < u.names.size(); ++i) {
      g.piece_names.push_back(u.names[i]);
      g.piece_unit.push_back(unit);
      g.forward_s.push_back(u.forward[i]);
      g.backward_s.push_back(u.backward[i]);
      g.piece_bytes.push_back(state_share[i] + activation_share[i]);
      // The last piece of a unit hands on what the pipeline sends.
      g.out_bytes.push_back(i + 1 == u.names.size() ? units.transfer_bytes : u.out[i]);
    }
  }

  const int pieces = g.pieces();
  g.micro_batches =
      std::max(1, std::min(g.micro_batches_in_step, kPipelineGraphMaxOps / (2 * pieces)));
  g.graph.nodes.resize(static_cast<std::size_t>(g.micro_batches) * 2 * pieces);
  for (int j = 0; j < g.micro_batches; ++j) {
    for (int k = 0; k < pieces; ++k) {
      for (const bool backward : {false, true}) {
        models::place::OpNode& node = g.graph.nodes[g.op(j, backward, k)];
        node.name = fmt::format("{} {} of micro-batch {}", g.piece_names[k],
                                backward ? "backward" : "forward", j);
        node.compute_s = backward ? g.backward_s[k] : g.forward_s[k];
        node.memory_bytes = j == 0 && !backward ? g.piece_bytes[k] : 0;
        node.group = k;
      }
      if (k + 1 < pieces) {
        g.graph.edges.push_back({g.op(j, false, k), g.op(j, false, k + 1), g.out_bytes[k]});
        g.graph.edges.push_back({g.op(j, true, k + 1), g.op(j, true, k), g.out_bytes[k]});
      }
      g.graph.edges.push_back({g.op(j, false, k), g.op(j, true, k), 0});
    }
  }
  return g;
}

OpGrainPlacement place_ops(const OpGrainGraph& g, StageSplit a) {
  OpGrainPlacement out;
  out.algorithm = a;
  switch (a) {
    case StageSplit::m_topo:
      out.graph = models::place::place(g.graph, g.devices, models::place::Placer::m_topo);
      break;
    case StageSplit::m_etf:
      out.graph = models::place::place(g.graph, g.devices, models::place::Placer::m_etf);
      break;
    case StageSplit::m_sct:
      out.graph = models::place::place(g.graph, g.devices, models::place::Placer::m_sct);
      break;
    case StageSplit::uniform:
    case StageSplit::balanced:
      throw std::invalid_argument(
          fmt::format("place_ops: {} is a layer split (split_on_ops)", stage_split_name(a)));
  }
  out.note = out.graph.note;
  describe(g, out);
  return out;
}

OpGrainPlacement split_on_ops(const OpGrainGraph& g, const std::vector<int>& stage_layers,
                              StageSplit a) {
  const std::vector<int> unit_stage = units_on_stages(g.layers, stage_layers);
  std::vector<int> device(g.graph.nodes.size());
  for (int j = 0; j < g.micro_batches; ++j) {
    for (int k = 0; k < g.pieces(); ++k) {
      device[g.op(j, false, k)] = device[g.op(j, true, k)] = unit_stage[g.piece_unit[k]];
    }
  }
  OpGrainPlacement out;
  out.algorithm = a;
  out.graph = models::place::evaluate(g.graph, g.devices, std::move(device));
  out.note = fmt::format("layers {} on the stages, each layer's ops on its layer's stage",
                         fmt::join(stage_layers, " "));
  describe(g, out);
  return out;
}

std::vector<std::string> stage_ranges(const OpGrainGraph& g, const OpGrainPlacement& p) {
  std::vector<std::string> out(p.stages_used);
  for (int stage = 0; stage < p.stages_used; ++stage) {
    int first = -1, last = -1, count = 0;
    for (int k = 0; k < g.pieces(); ++k) {
      if (p.piece_stage[k] != stage) continue;
      if (first < 0) first = k;
      last = k;
      ++count;
    }
    if (first < 0) continue;
    out[stage] = first == last ? g.piece_names[first]
                               : fmt::format("{} .. {}", g.piece_names[first], g.piece_names[last]);
    if (count != last - first + 1) {
      out[stage] += fmt::format(" ({} of the {} ops between)", count, last - first + 1);
    }
  }
  return out;
}

}  // namespace myriad::sim
