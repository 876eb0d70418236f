#include "sim/analytic/activation_offload.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "models/plan/memory.hpp"
#include "models/plan/rank_layout.hpp"
#include "sim/cost/comm_cost.hpp"

namespace myriad::sim {

PassTimes offload_stall(std::span<const OffloadLayer> layers, int offloaded, double to_host_Bps,
                        double to_device_Bps) {
  const int count = static_cast<int>(layers.size());
  if (offloaded < 0 || offloaded >= count) {
    throw std::invalid_argument(fmt::format(
        "offload_stall: 0 to {} offloaded layers expected, found {}", count - 1, offloaded));
  }
  if (!(to_host_Bps > 0) || !(to_device_Bps > 0)) {
    throw std::invalid_argument("offload_stall: positive host-link rates expected");
  }
  PassTimes stall;
  if (offloaded == 0) return stall;
  const int kept = count - offloaded;  // layers' activations the GPU may hold at once
  const auto at = [&](int i) -> const OffloadLayer& { return layers[static_cast<std::size_t>(i)]; };
  thread_local std::vector<double> copied;  // when each offloaded layer's copy is done
  copied.assign(static_cast<std::size_t>(offloaded), 0.0);

  // Forward, first layer first.
  double t = 0;
  double link = 0;
  double work = 0;
  for (int j = 0; j < count; ++j) {
    double start = t;
    const int making_room = j - kept;  // its copy must have left before layer j starts
    if (making_room >= 0) start = std::max(start, copied[static_cast<std::size_t>(making_room)]);
    const double end = start + at(j).forward_s;
    if (j < offloaded) {
      const double from = std::max(start, link);
      link = std::max(from + (at(j).bytes + at(j).network_forward) / to_host_Bps, end);
      copied[static_cast<std::size_t>(j)] = link;
    }
    work += at(j).forward_s;
    t = end;
  }
  stall.forward = t - work;

  // Backward, last layer first: the r-th layer done frees room for layer
  // offloaded - r's copy back.
  t = 0;
  link = 0;
  work = 0;
  for (int j = count - 1; j >= 0; --j) {
    double start = t;
    if (j < offloaded) start = std::max(start, copied[static_cast<std::size_t>(j)]);
    const double end = start + at(j).backward_s;
    const int back = offloaded - (count - j);  // the offloaded layer this one makes room for
    if (back >= 0) {
      // Beside the next backward (layers alike: the reloaded one's network bytes).
      link = std::max(end, link) + (at(back).bytes + at(back).network_backward) / to_device_Bps;
      copied[static_cast<std::size_t>(back)] = link;
    }
    work += at(j).backward_s;
    t = end;
  }
  stall.backward = t - work;
  return stall;
}

double network_bytes_per_gpu(const models::Phase& phase, const models::scenario::Scenario& s) {
  double sent = 0;
  for (const models::Collective& c : phase.comms) {
    const models::GroupSpan g = models::group_span(c.group, s);
    if (g.nodes <= 1 || c.bytes <= 0) continue;
    const double n = g.size;
    if (c.kind == models::CollectiveKind::all_to_all) {
      const double two_hop = two_hop_shares(c, g).network;
      sent += c.bytes * (two_hop > 0 ? two_hop : (n - g.per_node) / n);
    } else {
      sent += models::busbw_factor(c.kind, n) * c.bytes / g.per_node;
    }
  }
  return sent;
}

LayerNetworkBytes layer_network_bytes(const models::LayerProgram& lp,
                                      const models::scenario::Scenario& s) {
  if (!s.cluster.gpu.host_link_carries_network) return {};
  return {network_bytes_per_gpu(lp.forward, s),
          network_bytes_per_gpu(lp.backward, s) + network_bytes_per_gpu(lp.recompute, s)};
}

PassTimes offload_stall(const models::scenario::Scenario& s, const DeviceProfile& profile,
                        const PassTimes& moe, const PassTimes& dense,
                        const models::LayerProgram& moe_program,
                        const models::LayerProgram& dense_program) {
  const int n = s.parallelism.offload_layers;
  if (n <= 0) return {};
  const auto& m = s.model;
  const double moe_bytes = models::layer_activation_bytes(s, models::LayerKind::moe);
  const double dense_bytes = models::layer_activation_bytes(s, models::LayerKind::dense);
  const LayerNetworkBytes moe_network = layer_network_bytes(moe_program, s);
  const LayerNetworkBytes dense_network = layer_network_bytes(dense_program, s);
  // An MoE model's layer pass is its MoE layer's (its dense layers' is `dense`); a
  // dense model's is `moe`'s too, the model's only kind.
  thread_local std::vector<OffloadLayer> layers;
  layers.clear();
  for (int i = 0; i < m.layers; ++i) {
    const bool routed = !m.is_moe() || m.is_moe_layer(i);
    const bool as_moe = routed || !m.mixed();
    const PassTimes& pass = as_moe ? moe : dense;
    const LayerNetworkBytes& network = as_moe ? moe_network : dense_network;
    layers.push_back({pass.forward, pass.backward, routed ? moe_bytes : dense_bytes,
                      network.forward, network.backward});
  }
  const double link = s.cluster.gpu.host_link_bw_Bps;
  return offload_stall(layers, n, link * profile.device_to_host_efficiency,
                       link * profile.host_to_device_efficiency);
}

PassTimes module_offload_stall(const models::scenario::Scenario& s, const DeviceProfile& profile,
                               const PassTimes& layer, models::LayerKind kind,
                               const models::LayerProgram& program) {
  PassTimes stall;
  if (s.parallelism.offload_modules.empty()) return stall;
  const double bytes = models::layer_offloaded_bytes(s, kind);
  const LayerNetworkBytes network = layer_network_bytes(program, s);
  const double link = s.cluster.gpu.host_link_bw_Bps;
  // The link's time for the copies and the network bytes beside them, beyond
  // the pass (which the network bytes alone cannot make longer than they are).
  const auto wait = [bytes](double beside, double rate, double pass) {
    return std::max(0.0, (bytes + beside) / rate - std::max(pass, beside / rate));
  };
  stall.forward = wait(network.forward, link * profile.device_to_host_efficiency, layer.forward);
  stall.backward = wait(network.backward, link * profile.host_to_device_efficiency, layer.backward);
  stall.offload = stall.forward + stall.backward;
  return stall;
}

}  // namespace myriad::sim
