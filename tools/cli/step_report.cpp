#include "tools/cli/step_report.hpp"
#include "models/plan/pipeline_schedule.hpp"
#include "models/plan/rank_layout.hpp"
#include "models/scenario/run_title.hpp"
#include "models/transformer/model_stats.hpp"
#include "sim/cost/comm_cost.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <utility>
#include <vector>

#include "tools/cli/report_table.hpp"
#include "tools/cli/verb_support.hpp"

namespace myriad::cli {
namespace {

// Each tier's up ports out of service (cluster.network.tiers[i].uplinks_down).
std::vector<int> uplinks_down(const models::scenario::NetworkSpec& network) {
  std::vector<int> out;
  for (const auto& tier : network.tiers) out.push_back(tier.uplinks_down);
  return out;
}

std::string describe_breakdown_part(const std::string& name) {
  if (name == "compute") return "compute";
  if (name == "bubble") return "pipeline bubble";
  if (name == "optimizer") return "optimizer step";
  if (name == "offload") return "waits for activation offload";
  if (name == "host") return "waits for the host to launch kernels";
  return "exposed " + name + " communication";
}

// "experts: 32 of FFN 14336, top-3 ..., ep 8 (etp 1) inside the node; ...".
std::string moe_line(const models::scenario::Scenario& s, const sim::MoeSummary& m) {
  const auto& moe = s.model.moe;
  const auto& p = s.parallelism;
  std::string line = fmt::format("  experts: {} of FFN {}, top-{}", moe.active_experts(),
                                 moe.expert_ffn_hidden, moe.top_k);
  if (moe.shared_experts > 0) line += fmt::format(" + {} shared", moe.shared_experts);
  if (s.model.mixed()) {
    line += fmt::format(" in {} of {} layers (the others dense, FFN {})", s.model.moe_layers(),
                        s.model.layers, s.model.ffn_hidden);
  }
  if (moe.prune.experts > 0) line += fmt::format(" ({} pruned)", moe.prune.experts);
  if (moe.prune.pattern == models::scenario::Sparsity::two_four) line += ", weights 2:4 sparse";
  if (moe.prune.pattern == models::scenario::Sparsity::unstructured) {
    line += fmt::format(", weights {:.0f} % zero{}", 100 * moe.prune.sparsity,
                        moe.prune.sparse_kernel ? " (sparse kernel)" : " (dense kernels)");
  }
  line += moe.capacity_factor > 0
              ? fmt::format(
                    ", capacity {:g} (padded: {:.1f} % of slots padding, {:.1f} % of "
                    "routed tokens dropped)",
                    moe.capacity_factor, 100 * m.padded, 100 * m.dropped)
              : ", dropless";
  line += fmt::format("; ep {} (etp {})", p.ep, p.etp);
  if (!m.dispatch.empty()) {
    using models::scenario::WirePrecision;
    const bool dispatch_fp8 = s.training.all_to_all_precision == WirePrecision::fp8;
    const bool combine_fp8 = s.training.combine_precision == WirePrecision::fp8;
    std::string wire;
    if (m.dispatch == "all-to-all" && (dispatch_fp8 || combine_fp8)) {
      wire = dispatch_fp8 == combine_fp8 ? " in fp8"
             : dispatch_fp8              ? " (dispatch in fp8, combine in bf16)"
                                         : " (dispatch in bf16, combine in fp8)";
    }
    line += fmt::format(" by {}{}{}", m.dispatch, wire,
                        m.dispatch_inside_node ? " inside the node" : " across nodes");
    if (moe.max_nodes_per_token > 0 && !m.dispatch_inside_node && m.dispatch == "all-to-all") {
      // A token's copies that cross the network, as the cost model counts them,
      // against every copy on its own ((nodes - 1) / nodes of them).
      const models::GroupSpan g = models::group_span(models::GroupKind::ep, s);
      models::Collective two_hop;
      two_hop.hop_nodes = std::min(moe.max_nodes_per_token, moe.top_k);
      two_hop.hop_copies = moe.top_k;
      const double nodes = g.nodes;
      line += fmt::format(
          ", two-hop: a token on at most {} of {} nodes, {:.3g} copies across the network "
          "where {:.3g} would cross one by one",
          std::min(moe.max_nodes_per_token, g.nodes), g.nodes,
          sim::two_hop_shares(two_hop, g).network * moe.top_k, moe.top_k * (nodes - 1) / nodes);
    }
  }
  line += fmt::format("; busiest expert rank {:.2f}x the mean", m.imbalance);
  if (moe.skew != models::scenario::RouterSkew::uniform) {
    line += moe.skew == models::scenario::RouterSkew::zipf
                ? fmt::format(" (Zipf {:g} router skew)", moe.zipf_exponent)
                : std::string(" (measured histogram)");
  }
  return line;
}

// "multi-token prediction: depth 1 (1 MoE block, ...) on the last stage, ...".
// The job's groups of more than one rank, with how they sit on nodes.
std::vector<std::pair<models::GroupKind, models::GroupSpan>> job_groups(
    const models::scenario::Scenario& s) {
  std::vector<std::pair<models::GroupKind, models::GroupSpan>> out;
  for (const auto g : {models::GroupKind::tp, models::GroupKind::cp, models::GroupKind::ep,
                       models::GroupKind::dp, models::GroupKind::pp}) {
    const models::GroupSpan span = models::group_span(g, s);
    if (span.size > 1) out.emplace_back(g, span);
  }
  return out;
}

// Which of the job's groups stay inside one node's NVLink domain and which span
// nodes: "groups: tp 8 inside a node of 8 GPUs (NVLink); dp 128 across 16 nodes".
std::string groups_line(const models::scenario::Scenario& s) {
  std::vector<std::string> inside;
  std::vector<std::string> across;
  for (const auto& [g, span] : job_groups(s)) {
    const std::string name = fmt::format("{} {}", models::group_name(g), span.size);
    if (span.nodes <= 1) {
      inside.push_back(name);
    } else if (span.per_node > 1) {
      across.push_back(
          fmt::format("{} across {} nodes ({} a node)", name, span.nodes, span.per_node));
    } else {
      across.push_back(fmt::format("{} across {} nodes", name, span.nodes));
    }
  }
  if (inside.empty() && across.empty()) return {};
  std::string line = "  groups: ";
  if (!inside.empty()) {
    line += fmt::format("{} inside a node of {} GPUs (NVLink)", fmt::join(inside, ", "),
                        s.cluster.gpus_per_node);
  }
  if (!across.empty()) {
    line += (inside.empty() ? "" : "; ") + fmt::format("{}", fmt::join(across, ", "));
  }
  return line + "\n";
}

std::string mtp_line(const models::scenario::Scenario& s) {
  const int depth = s.model.mtp_depth;
  const int moe_blocks = s.model.moe_layers_in(s.model.layers, s.model.stack_layers());
  const std::string blocks =
      moe_blocks == depth ? fmt::format("{} MoE block{}", depth, depth > 1 ? "s" : "")
      : moe_blocks == 0   ? fmt::format("{} dense block{}", depth, depth > 1 ? "s" : "")
                        : fmt::format("{} MoE and {} dense blocks", moe_blocks, depth - moe_blocks);
  return fmt::format(
      "  multi-token prediction: depth {} ({}, projections and the LM head again) on the last "
      "stage, {:.1f}B parameters besides the model's",
      depth, blocks, models::param_counts(s.model).mtp / 1e9);
}

// What DualPipe's or combined 1F1B's F&B passes hide of the expert all-to-alls,
// or "" without them.
std::string pairs_line(models::scenario::Schedule schedule, const sim::MoeSummary& moe) {
  if (!(moe.a2a_exposed_unpaired_s > 0) || moe.a2a_hidden_s == 0) return "";
  const char* who = schedule == models::scenario::Schedule::dualpipe ? "DualPipe" : "Combined 1F1B";
  const double hidden = moe.a2a_hidden_s;
  if (hidden > 0) {
    return fmt::format(
        "  {}'s F&B passes hide {} of the {} of expert all-to-alls the critical stage's "
        "passes leave exposed one after another ({}), behind the other pass's compute\n\n",
        who, seconds(hidden), seconds(moe.a2a_exposed_unpaired_s),
        percent(hidden / moe.a2a_exposed_unpaired_s));
  }
  return fmt::format(
      "  {}'s F&B passes cost {} more than their passes one after another: the "
      "communication kernels' share of the compute rate outweighs the expert all-to-alls they "
      "hide ({} exposed one after another)\n\n",
      who, seconds(-hidden), seconds(moe.a2a_exposed_unpaired_s));
}

}  // namespace

std::string growth_text(const models::scenario::Scenario& s, const sim::GrowthPhase& g,
                        const sim::StepReport& r) {
  const sim::LayoutMetrics own = sim::metrics_of(s, r);
  const sim::LayoutMetrics grown = sim::with_growth(own, g);
  const bool priced = s.cluster.price_per_gpu_hour > 0;
  const auto& p = g.small.parallelism;
  std::string out = fmt::format(
      "growth (what-if): grown from {}, saving {} of the model's own training\n  (source of "
      "the saving: {})\n",
      g.from, percent(g.saved_fraction, 0), g.source);
  std::vector<std::string> headers = {"", "days", "GPU-hours"};
  if (priced) headers.emplace_back("cost");
  Table t(headers, "lrrr");
  const auto row = [&](const std::string& what, const sim::LayoutMetrics& m) {
    std::vector<std::string> cells = {what, fmt::format("{:.1f}", m.days), si_count(m.gpu_hours)};
    if (priced) cells.push_back(fmt::format("${}", si_count(m.cost)));
    t.add(cells);
  };
  row(fmt::format("{}, {} tokens ({}, fastest of {} layouts)", g.from,
                  si_count(g.small.training.tokens), sim::layout_text(p), g.layouts),
      g.metrics);
  sim::LayoutMetrics rest = own;
  rest.days = grown.days - g.metrics.days;
  rest.gpu_hours = grown.gpu_hours - g.metrics.gpu_hours;
  rest.cost = grown.cost - g.metrics.cost;
  row(fmt::format("{}, {} of {} tokens", s.model.preset.empty() ? "the model" : s.model.preset,
                  percent(1 - g.saved_fraction, 0), si_count(s.training.tokens)),
      rest);
  t.add_rule();
  row("in all, grown", grown);
  row("without growth", own);
  sim::LayoutMetrics saved = own;
  saved.days = own.days - grown.days;
  saved.gpu_hours = own.gpu_hours - grown.gpu_hours;
  saved.cost = own.cost - grown.cost;
  row(fmt::format("saved ({} of the time)", percent(saved.days / own.days)), saved);
  out += t.str();
  if (saved.days < 0) {
    out +=
        "  growing costs more than it saves here: the small model's training outweighs the "
        "saving\n";
  }
  return out;
}

nlohmann::json growth_json(const models::scenario::Scenario& s, const sim::GrowthPhase& g,
                           const sim::StepReport& r) {
  const sim::LayoutMetrics own = sim::metrics_of(s, r);
  const sim::LayoutMetrics grown = sim::with_growth(own, g);
  const auto& p = g.small.parallelism;
  return {{"from", g.from},
          {"saved_fraction", g.saved_fraction},
          {"source", g.source},
          {"small",
           {{"tokens", g.small.training.tokens},
            {"layout",
             {{"tp", p.tp},
              {"pp", p.pp},
              {"virtual_stages", p.virtual_stages},
              {"cp", p.cp},
              {"dp", p.dp},
              {"micro_batch", p.micro_batch},
              {"zero", p.zero}}},
            {"layouts_searched", g.layouts},
            {"metrics", sim::metrics_to_json(g.metrics)}}},
          {"grown", sim::metrics_to_json(grown)},
          {"without_growth", sim::metrics_to_json(own)},
          {"saved_days", own.days - grown.days},
          {"saved_gpu_hours", own.gpu_hours - grown.gpu_hours}};
}

namespace {

// The memory table, with what is offloaded to the host, whether it fits, and
// a warning where little headroom is left.
std::string memory_text(const sim::StepReport& r) {
  std::string out;
  Table mem({"memory per GPU (most loaded stage)", "size"}, "lr");
  mem.add({"weights", gibibytes(r.memory.weights)});
  mem.add({"gradients", gibibytes(r.memory.gradients)});
  mem.add({"optimizer states", gibibytes(r.memory.optimizer)});
  mem.add({"activations", gibibytes(r.memory.activations)});
  mem.add({"allocator fragmentation", gibibytes(r.memory_fragmentation)});
  mem.add_rule();
  mem.add({"needed", gibibytes(r.memory_needed())});
  mem.add({fmt::format("usable: {} less {} reserved", capacity(r.memory_capacity),
                       gibibytes(r.memory_reserved)),
           gibibytes(r.memory_usable())});
  out += mem.str();
  if (r.memory.offloaded > 0) {
    out += fmt::format("  offloaded to host memory: {} of activations, of {} a GPU may use\n",
                       gibibytes(r.memory.offloaded), gibibytes(r.host_memory_capacity));
  }
  if (!r.fits && r.memory_needed() <= r.memory_usable()) {
    out += fmt::format(
        "  DOES NOT FIT: the offloaded activations are {} over the host memory a GPU may use "
        "(cluster.gpu.host_memory)\n",
        gibibytes(r.memory.offloaded - r.host_memory_capacity));
  } else if (!r.fits) {
    out += fmt::format("  DOES NOT FIT: {} over the usable {}; {} dominate\n",
                       gibibytes(r.memory_needed() - r.memory_usable()),
                       gibibytes(r.memory_usable()), r.memory.dominant());
  } else if (r.memory_needed() > sim::kMemoryWarningFraction * r.memory_usable()) {
    out += fmt::format(
        "  warning: {} of usable memory: above {}, little headroom for allocator spikes\n",
        percent(r.memory_needed() / r.memory_usable()), percent(sim::kMemoryWarningFraction));
  }
  return out;
}

// A rail-only fabric's line: what crosses NVLink to change rail, and the groups
// whose nodes hold them on different rails (for a search, where they sit in each
// layout).
std::string rail_only_line(const models::scenario::Scenario& s, bool layouts_vary) {
  constexpr const char* kWhat =
      "  network: rail-only (cluster.network.topology): no tier joins the rails, so what an "
      "all-to-all sends to another rail of another node crosses NVLink first";
  if (layouts_vary) {
    return fmt::format(
        "{}; in a layout whose groups sit on different rails in different nodes, each step of "
        "their rings across nodes crosses NVLink too\n",
        kWhat);
  }
  std::vector<std::string> off;
  for (const models::GroupKind g :
       {models::GroupKind::tp, models::GroupKind::cp, models::GroupKind::ep, models::GroupKind::dp,
        models::GroupKind::pp}) {
    const models::GroupSpan span = models::group_span(g, s);
    if (span.nodes > 1 && !span.rails_match) off.emplace_back(models::group_name(g));
  }
  return fmt::format(
      "{}{}\n", kWhat,
      off.empty() ? std::string("; every group sits on the same rails in each node it spans")
                  : fmt::format("; the {}{}{} groups sit on different rails in different "
                                "nodes: each step of their rings across nodes crosses NVLink too",
                                fmt::join(off.begin(), off.end() - 1, ", "),
                                off.size() > 1 ? " and " : "", off.back()));
}

}  // namespace

std::string network_lines(const models::scenario::Scenario& s, bool layouts_vary) {
  const models::scenario::NetworkSpec& net = s.cluster.network;
  std::string out;
  if (net.topology == models::scenario::Topology::rail_only) {
    out += rail_only_line(s, layouts_vary);
  }
  if (net.in_network_reduction == models::scenario::InNetworkReduction::sharp) {
    out += fmt::format(
        "  network: all-reduces and reduce-scatters across nodes reduce in the switches (SHARP) "
        "where that is faster than rings and the switches have a streaming aggregation tree for "
        "each communicator (they run {}; algorithm sharp below)\n",
        net.sharp_trees == models::scenario::SharpTrees::per_switch ? "one a switch"
                                                                    : "one a port");
  }
  if (net.planes_down > 0) {
    out += fmt::format(
        "  network: {} of {} planes down: each NIC keeps {} of its bandwidth "
        "(cluster.network.planes_down)\n",
        net.planes_down, net.planes,
        percent(static_cast<double>(net.planes - net.planes_down) / net.planes));
  }
  for (std::size_t i = 0; i < net.tiers.size(); ++i) {
    const auto& tier = net.tiers[i];
    if (tier.uplinks_down <= 0) continue;
    out += fmt::format(
        "  network: {} of the {:.0f} up ports of each {} switch down: its subtrees' uplinks carry "
        "{} of their bandwidth (cluster.network.tiers[{}].uplinks_down)\n",
        tier.uplinks_down, models::scenario::up_ports(net, i),
        tier.name.empty() ? fmt::format("tier-{}", i) : tier.name,
        percent(models::scenario::uplinks_in_service(net, i)), i);
  }
  return out;
}

namespace {

// The fabric's settings a report was priced with (top-level keys of its JSON).
nlohmann::json network_json(const models::scenario::NetworkSpec& net) {
  return {{"topology", models::name_in(models::scenario::kTopologyNames, net.topology)},
          {"in_network_reduction",
           models::name_in(models::scenario::kInNetworkReductionNames, net.in_network_reduction)},
          {"load_balancing",
           models::name_in(models::scenario::kLoadBalancingNames, net.load_balancing)},
          {"qps_per_connection", net.qps_per_connection},
          {"planes", net.planes},
          {"planes_down", net.planes_down},
          {"uplinks_down", uplinks_down(net)}};
}

// What the GPUs wait for the host, or "" when they do not.
std::string host_line(const sim::StepReport& r) {
  double waits = 0;
  for (const auto& part : r.breakdown) {
    if (part.name == "host") waits = part.seconds;
  }
  if (!(waits > 0) || !(r.host.launch_s > 0)) return "";
  return fmt::format(
      "  host: a layer issues {:.0f} kernels and collectives forward and {:.0f} backward, each "
      "taking the host {:.1f} us (the profile's host_launch_s){}: the GPUs wait {} a step\n\n",
      r.host.layer_forward, r.host.layer_backward, r.host.launch_s * 1e6,
      r.host.synced ? "; dropless routing makes the host wait for the token counts before each "
                      "dispatch, so it cannot run ahead of the GPU"
                    : "",
      seconds(waits));
}

}  // namespace

std::string step_report_text(const models::scenario::Scenario& s, const sim::DeviceProfile& profile,
                             const sim::StepReport& r) {
  const auto& p = s.parallelism;
  std::string out = fmt::format("{}\n", models::scenario::run_title(s));
  const std::string schedule =
      models::named_schedule(p.schedule)
          ? fmt::format("{}{}", models::name_in(models::scenario::kScheduleNames, p.schedule),
                        p.delay_wgrad_compute ? " with delayed weight gradients" : "")
          : std::string{};
  out += fmt::format(
      "  {} x {}, tp {}{} pp {}{} cp {} ep {} dp {}; {} {} of {} x {} tokens\n", s.cluster.gpus,
      s.cluster.gpu.name, p.tp, p.sp ? " (sp)" : "", p.pp,
      p.virtual_stages > 1 ? fmt::format(" (v {}{})", p.virtual_stages,
                                         schedule.empty() ? std::string{} : ", " + schedule)
      : schedule.empty()   ? std::string{}
                           : fmt::format(" ({})", schedule),
      p.cp, p.ep, p.dp, p.micro_batches(), p.micro_batches() == 1 ? "micro-batch" : "micro-batches",
      p.micro_batch, s.model.seq_length);
  out += groups_line(s);
  if (r.moe.present) out += moe_line(s, r.moe) + "\n";
  if (s.model.mtp_depth > 0) out += mtp_line(s) + "\n";
  out += network_lines(s, false);
  out += profile_line(profile) + "\n";
  Table headline({"", ""}, "lr");
  headline.add({"step time", seconds(r.step_time_s)});
  headline.add(
      {fmt::format("MFU (model FLOPs / {} peak)", r.headline_peak()), percent(r.headline_mfu())});
  if (r.mfu_fp8 > 0) headline.add({"MFU against the bf16 peak", percent(r.mfu)});
  headline.add({r.mfu_fp8 > 0 ? "HFU (with recomputation, bf16 peak)" : "HFU (with recomputation)",
                percent(r.hfu)});
  headline.add({"tokens/s", si_count(r.tokens_per_s)});
  headline.add({fmt::format("days for {} tokens", si_count(s.training.tokens)),
                fmt::format("{:.1f}", r.days_to_target)});
  out += headline.str() + "\n";
  Table parts({"step time breakdown", "time", "share"}, "lrr");
  for (const auto& part : r.breakdown) {
    if (std::abs(part.seconds) <= 1e-12 * r.step_time_s) continue;  // none, or rounding
    parts.add({describe_breakdown_part(part.name), seconds(part.seconds),
               percent(part.seconds / r.step_time_s)});
  }
  out += parts.str() + "\n";
  out += pairs_line(p.schedule, r.moe);
  out += host_line(r);

  for (const auto& note : r.network_notes) out += "  network: " + note + "\n";
  if (!r.network_notes.empty()) out += "\n";
  out += memory_text(r);
  out += "\n";
  Table comms({"collective", "kind", "group", "ranks", "nodes", "size", "algorithm", "busbw",
               "time", "per step"},
              "lllrrrlrrr");
  for (const auto& c : r.collectives) {
    comms.add({c.name, c.kind, c.group, std::to_string(c.ranks), std::to_string(c.nodes),
               fmt::format("{:.1f} MB", c.bytes / 1e6),
               std::string(models::algorithm_name(c.cost.algorithm)),
               fmt::format("{:.0f} GB/s", c.cost.busbw_Bps / 1e9), seconds(c.cost.time_s),
               fmt::format("{:.0f}", c.per_step)});
  }
  out += comms.str() + "\n";
  Table ops(
      {"compute op (critical stage)", "class", "time", "efficiency", "bound", "per step", "total"},
      "llrrlrr");
  for (const auto& op : r.ops) {
    ops.add({op.name, op.cls, seconds(op.time_s), percent(op.efficiency),
             op.memory_bound ? "memory" : "compute", fmt::format("{:.0f}", op.per_step),
             seconds(op.time_s * op.per_step)});
  }
  out += ops.str();
  return out;
}

nlohmann::json step_report_json(const models::scenario::Scenario& s,
                                const sim::DeviceProfile& profile, const sim::StepReport& r) {
  nlohmann::json breakdown = nlohmann::json::object();
  for (const auto& part : r.breakdown) breakdown[part.name] = part.seconds;
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& [g, span] : job_groups(s)) {
    groups.push_back({{"group", models::group_name(g)},
                      {"size", span.size},
                      {"nodes", span.nodes},
                      {"per_node", span.per_node}});
  }
  nlohmann::json collectives = nlohmann::json::array();
  for (const auto& c : r.collectives) {
    collectives.push_back({{"name", c.name},
                           {"kind", c.kind},
                           {"group", c.group},
                           {"ranks", c.ranks},
                           {"nodes", c.nodes},
                           {"bytes", c.bytes},
                           {"algorithm", models::algorithm_name(c.cost.algorithm)},
                           {"busbw_Bps", c.cost.busbw_Bps},
                           {"time_s", c.cost.time_s},
                           {"per_step", c.per_step}});
  }
  nlohmann::json out = {
      {"scenario", s.file},
      {"profile", profile.file},
      {"profile_device", profile.device},
      {"profile_borrowed", profile.borrowed()},
      {"nvlink_algorithm", sim::nvlink_algorithm_note(profile)},
      {"step_time_s", r.step_time_s},
      {"mfu", r.mfu},
      {"hfu", r.hfu},
      {"mfu_fp8_peak", r.mfu_fp8},
      {"tokens_per_s", r.tokens_per_s},
      {"days_to_target", r.days_to_target},
      {"model_flops_per_step", r.model_flops},
      {"hardware_flops_per_step", r.hardware_flops},
      {"breakdown", breakdown},
      {"memory_per_gpu_bytes", r.memory.total()},
      {"memory",
       {{"weights", r.memory.weights},
        {"gradients", r.memory.gradients},
        {"optimizer", r.memory.optimizer},
        {"activations", r.memory.activations},
        {"offloaded", r.memory.offloaded},
        {"host_capacity", r.host_memory_capacity},
        {"fragmentation", r.memory_fragmentation},
        {"needed", r.memory_needed()},
        {"capacity", r.memory_capacity},
        {"reserved", r.memory_reserved},
        {"usable", r.memory_usable()},
        {"fits", r.fits}}},
      {"groups", groups},
      {"network_notes", r.network_notes},
      {"moe", r.moe.present
                  ? nlohmann::json{{"imbalance", r.moe.imbalance},
                                   {"dropped", r.moe.dropped},
                                   {"padded", r.moe.padded},
                                   {"dispatch", r.moe.dispatch},
                                   {"dispatch_inside_node", r.moe.dispatch_inside_node},
                                   {"a2a_exposed_unpaired_s", r.moe.a2a_exposed_unpaired_s},
                                   {"a2a_hidden_s", r.moe.a2a_hidden_s}}
                  : nlohmann::json(nullptr)},
      {"host", r.host.launch_s > 0
                   ? nlohmann::json{{"launch_s", r.host.launch_s},
                                    {"layer_forward_launches", r.host.layer_forward},
                                    {"layer_backward_launches", r.host.layer_backward},
                                    {"synced", r.host.synced}}
                   : nlohmann::json(nullptr)},
      {"collectives", collectives}};
  out.update(network_json(s.cluster.network));
  return out;
}

std::string fit_remedies_text(const sim::StepReport& r,
                              const std::vector<sim::FitRemedy>& remedies) {
  if (remedies.empty())
    return "  no single change of recomputation, activation offload, ZeRO or micro-batch saves "
           "memory\n";
  std::string out;
  for (const auto& m : remedies) {
    out += fmt::format("  {} {}--set {}={}: needs {}, step {} ({:+.1f} %)\n",
                       m.fits() ? "fits with" : "still over with",
                       m.with.empty() ? "" : "--set " + m.with + " ", m.key, m.value,
                       gibibytes(m.memory_needed), seconds(m.step_time_s),
                       100 * (m.step_time_s / r.step_time_s - 1));
  }
  return out;
}

nlohmann::json fit_remedies_json(const std::vector<sim::FitRemedy>& remedies) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : remedies) {
    out.push_back({{"key", m.key},
                   {"value", m.value},
                   {"with", m.with},
                   {"memory_needed_bytes", m.memory_needed},
                   {"fits", m.fits()},
                   {"step_time_s", m.step_time_s}});
  }
  return out;
}

}  // namespace myriad::cli
