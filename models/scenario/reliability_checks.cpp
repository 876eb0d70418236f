#include "models/scenario/reliability_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <stdexcept>
#include <variant>

#include "models/scenario/checker.hpp"
#include "models/scenario/fabric_checks.hpp"
#include "models/scenario/fabric_domains.hpp"
#include "models/scenario/scenario_schema.hpp"
#include "models/scenario/text_file.hpp"
#include "models/scenario/units.hpp"

namespace myriad::models::scenario {
namespace {

constexpr double kMinWeibullShape = 0.05;
constexpr double kMaxWeibullShape = 20;

}  // namespace
namespace {

// Where a key was written; a defaulted key is reported at the scenario file.
FailureProcessSpec llama3_process(Component c, int count, const char* rows) {
  // 54 days x 2,048 nodes = 110,592 node-days in the snapshot.
  constexpr double kThousandNodeDays = 54.0 * 2048.0 / 1000.0;
  FailureProcessSpec p;
  p.component = c;
  p.per_1000_node_days = count / kThousandNodeDays;
  p.replace_node = c != Component::software;
  p.source =
      fmt::format("Llama 3 (arXiv:2407.21783 Table 5): {} of 419 interruptions ({})", count, rows);
  return p;
}

void derive_policy(Scenario& s, std::size_t i) {
  const std::string path = fmt::format("policies[{}]", i);
  PolicySpec& p = s.policies[i];
  if (!given(s, path + ".name")) {
    p.name = fmt::format("policy{}", i);
    set_derived(s, path + ".name");
  }
  if (!given(s, path + ".checkpoint_rule")) {
    p.checkpoint_rule =
        given(s, path + ".checkpoint_interval") ? CheckpointRule::fixed : CheckpointRule::young;
    set_derived(s, path + ".checkpoint_rule");
  }
  if (!given(s, path + ".peer_bandwidth")) {
    p.peer_bw_Bps = nic_bw_in_service(s.cluster) * s.cluster.nics_per_node;
    set_derived(s, path + ".peer_bandwidth");
  }
}

Component default_component(Domain d) {
  switch (d) {
    case Domain::node:
      return Component::gpu;
    case Domain::leaf:
    case Domain::pod:
    case Domain::plane:
    case Domain::spine:
      return Component::switch_;
    case Domain::uplink:
      return Component::link;
    case Domain::rack:
      return Component::host;
  }
  return Component::gpu;
}

// `node: N` is domain node, id N; the component and replace_node follow the
// domain when not given. `prefix` is "" for replayed events (no keys).
void derive_events(Scenario& s, std::vector<InjectedEventSpec>& events, const std::string& prefix) {
  for (std::size_t i = 0; i < events.size(); ++i) {
    auto& e = events[i];
    const std::string path = fmt::format("{}[{}]", prefix, i);
    if (e.node >= 0) {
      e.domain = Domain::node;
      e.id = e.node;
    }
    if (is_fabric_port(e.domain) && e.tier < 0) {
      e.tier = default_fabric_tier(e.domain);
      if (!prefix.empty()) set_derived(s, path + ".tier");
    }
    if (prefix.empty()) continue;
    if (!given(s, path + ".component")) {
      e.component = default_component(e.domain);
      set_derived(s, path + ".component");
    }
    if (!given(s, path + ".replace_node")) {
      e.replace_node = e.component != Component::software;
      set_derived(s, path + ".replace_node");
    }
  }
}

void check_process_rates(const Scenario& s, const Location& file, Diagnostics& d) {
  // The given processes; the Llama 3 mix after them needs no checking.
  const std::size_t mix = s.faults.llama3_mix_added ? llama3_failure_mix_size() : 0;
  for (std::size_t i = 0; i + mix < s.faults.processes.size(); ++i) {
    const auto& p = s.faults.processes[i];
    const std::string path = fmt::format("faults.processes[{}]", i);
    check_fabric_domain(s, path, p.domain, p.tier, p.replace_node, file, d);
    if (is_fabric_port(p.domain) && p.distribution != Lifetime::exponential) {
      d.error(
          written_at(s, path + ".distribution", file), path + ".distribution",
          fmt::format("a {} process runs one clock over all its {}: exponential lifetimes "
                      "only",
                      domain_name(p.domain), p.domain == Domain::spine ? "switches" : "up ports"));
    }
    const bool per_node = given(s, path + ".per_1000_node_days");
    const bool per_comp = given(s, path + ".per_component_hour");
    const bool per_domain = given(s, path + ".per_1000_domain_days");
    if (p.domain == Domain::node) {
      if (per_domain) {
        d.error(
            written_at(s, path + ".per_1000_domain_days", file), path + ".per_1000_domain_days",
            "for domain: leaf, pod, rack or plane; a node process's rate is per_1000_node_days or "
            "per_component_hour");
      } else if (per_node == per_comp) {
        d.error(written_at(s, path + ".component", file), path,
                per_node ? "give the rate once: per_1000_node_days or per_component_hour, not both"
                         : "missing rate: give per_1000_node_days or per_component_hour");
      }
      continue;
    }
    const auto domain = std::string(domain_name(p.domain));
    if (per_node || per_comp) {
      d.error(
          written_at(s, path + (per_node ? ".per_1000_node_days" : ".per_component_hour"), file),
          path,
          fmt::format("a {} process's rate is per_1000_domain_days: failures per 1000 "
                      "days of one {}",
                      domain, domain));
    } else if (!per_domain) {
      d.error(written_at(s, path + ".domain", file), path,
              fmt::format("missing rate: give per_1000_domain_days (failures per 1000 days of "
                          "one {})",
                          domain));
    }
    if (domain_nodes(s, p.domain) == 0 && !is_fabric_port(p.domain)) {
      d.error(written_at(s, path + ".domain", file), path + ".domain",
              fmt::format("the cluster defines no {} domains: {}", domain,
                          p.domain == Domain::pod     ? "pods need cluster.network with two tiers"
                          : p.domain == Domain::plane ? "planes need cluster.network.planes of 2 "
                                                        "or more (one plane down is the whole "
                                                        "network: a leaf or pod failure)"
                                                      : "leaves need cluster.network's tiers"));
    }
    if (p.domain == Domain::plane && !p.replace_node) {
      d.error(written_at(s, path + ".replace_node", file), path + ".replace_node",
              "a plane is out until it is repaired: replace_node false (or component "
              "software) does not apply to domain plane");
    }
  }
}

void check_events(const Scenario& s, const std::vector<InjectedEventSpec>& events,
                  const std::string& prefix, const Location& file, Diagnostics& d) {
  const int job_nodes = s.cluster.nodes();
  for (std::size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    const std::string path = fmt::format("{}[{}]", prefix, i);
    // A replayed row is reported at its line; a given event at its keys.
    const auto where = [&](const std::string& key) {
      if (prefix.empty()) {
        Location l;
        l.file = e.where;
        return l;
      }
      return written_at(s, path + (key.empty() ? ".at" : key), file);  // the event: its `at`
    };
    const std::string name = prefix.empty() ? e.where : path;
    const bool has_node = prefix.empty() ? e.domain == Domain::node : given(s, path + ".node");
    const bool has_id = prefix.empty() ? e.domain != Domain::node : given(s, path + ".id");
    if (!prefix.empty()) {
      if (has_node == has_id) {
        d.error(where(""), path,
                has_node
                    ? "give node or id, not both (node: N is domain: node, id: N)"
                    : "say what: node: N, or domain: leaf|pod|rack|plane|spine|uplink with id: N");
        continue;
      }
      if (has_node && given(s, path + ".domain") && e.domain != Domain::node) {
        d.error(where(".domain"), path + ".domain",
                "node: N names a node; a domain's failure takes id: N");
        continue;
      }
    }
    const auto domain = std::string(domain_name(e.domain));
    if (!prefix.empty()) check_fabric_domain(s, path, e.domain, e.tier, e.replace_node, file, d);
    if (is_fabric_port(e.domain)) {
      check_fabric_event(s, e, path, prefix, name, where, d);
      continue;
    }
    const int count = domain_count(s, e.domain);
    if (count == 0) {
      d.error(where(".domain"), name,
              fmt::format("the cluster defines no {} domains{}", domain,
                          e.domain == Domain::plane ? ": planes need cluster.network.planes of 2 "
                                                      "or more"
                                                    : ""));
      continue;
    }
    if (e.id >= count) {
      d.error(
          where(has_node ? ".node" : ".id"), name,
          e.domain == Domain::plane
              ? fmt::format("plane {} does not exist: the fabric has {} (0 to {})", e.id, count,
                            count - 1)
              : fmt::format("{} {} does not exist: the job's {} nodes make {} of them (0 to {})",
                            domain, e.id, job_nodes, count, count - 1));
    }
    if (e.domain == Domain::plane && !e.replace_node) {
      d.error(where(".replace_node"), path + ".replace_node",
              "a plane is out until it is repaired: replace_node false (or component software) "
              "does not apply to domain plane");
    }
    if (e.at_s < 0) {
      d.error(where(".at"), name, "an event's time must be 0 or later");
    }
    const bool slow = prefix.empty() ? false : given(s, path + ".slowdown");
    const bool until = prefix.empty() ? false : given(s, path + ".until");
    if (slow) {
      if (e.domain != Domain::node) {
        d.error(where(".slowdown"), path + ".slowdown", "a slow event names one node: node: N");
      }
      if (e.slowdown < 1) {
        d.error(where(".slowdown"), path + ".slowdown",
                fmt::format("a slowdown multiplies the step time and is at least 1, found {:g}",
                            e.slowdown));
      }
      if (!until) {
        d.error(where(""), path, "a slow node needs until: when it recovers");
      } else if (e.until_s <= e.at_s) {
        d.error(where(".until"), path + ".until",
                fmt::format("expected a time after at ({:g} s), found {:g} s", e.at_s, e.until_s));
      }
      for (const char* key : {".repair", ".component", ".replace_node"}) {
        if (written(s, path + key)) {
          d.error(where(key), path + key, "applies to failures; this event is a slow node");
        }
      }
    } else if (until) {
      d.error(where(".until"), path + ".until",
              "applies to a slow node (with slowdown); a failure lasts its repair");
    }
  }
}

}  // namespace

std::string_view domain_name(Domain d) {
  switch (d) {
    case Domain::node:
      return "node";
    case Domain::leaf:
      return "leaf";
    case Domain::pod:
      return "pod";
    case Domain::rack:
      return "rack";
    case Domain::plane:
      return "plane";
    case Domain::spine:
      return "spine";
    case Domain::uplink:
      return "uplink";
  }
  return "node";
}

int domain_nodes(const Scenario& s, Domain d) {
  const ClusterSpec& c = s.cluster;
  const auto& tiers = c.network.tiers;
  const auto down = [&](std::size_t i) { return down_ports(c.network, i, nic_port_bw(c)); };
  switch (d) {
    case Domain::node:
      return 1;
    case Domain::rack:
      return s.faults.nodes_per_rack;
    case Domain::plane:
      return c.network.planes >= 2 ? c.nodes() : 0;
    case Domain::spine:
    case Domain::uplink:  // every node's pace; 0 without the tier's switches or up ports
      return fabric_units(c, d, default_fabric_tier(d)) > 0 ? c.nodes() : 0;
    case Domain::leaf:
    case Domain::pod: {
      if (tiers.empty()) return 0;
      // Rail-optimized: a leaf takes one NIC of each of its nodes (losing one rail
      // stops the node's ranks); otherwise all of a node's NICs.
      const double per_node = c.network.rail_optimized ? 1 : std::max(1, c.nics_per_node);
      const double leaf = std::max(1.0, std::floor(down(0) / per_node));
      if (d == Domain::leaf) return static_cast<int>(std::min<double>(leaf, c.nodes()));
      if (tiers.size() < 2) return 0;
      return static_cast<int>(std::min<double>(leaf * down(1), c.nodes()));
    }
  }
  return 0;
}

int domain_count(const Scenario& s, Domain d) {
  if (d == Domain::plane) return s.cluster.network.planes >= 2 ? s.cluster.network.planes : 0;
  if (is_fabric_port(d)) {
    return static_cast<int>(std::min<long long>(fabric_units(s.cluster, d, default_fabric_tier(d)),
                                                std::numeric_limits<int>::max()));
  }
  const int span = domain_nodes(s, d);
  return span > 0 ? (s.cluster.nodes() + span - 1) / span : 0;
}

std::vector<FailureProcessSpec> llama3_failure_mix() {
  return {
      llama3_process(Component::gpu, 196,
                     "faulty GPU 148, SRAM 19, system processor 17, SDC 6, thermal 6"),
      llama3_process(Component::hbm, 72, "HBM3 memory"),
      llama3_process(Component::software, 63, "software bug 54, NCCL watchdog 7, dependency 2"),
      llama3_process(Component::switch_, 35, "network switch or cable"),
      llama3_process(Component::host, 46,
                     "host maintenance 32, SSD 3, power 3, chassis 2, IO board 2, CPU 2, "
                     "memory 2"),
      llama3_process(Component::nic, 7, "NIC"),
  };
}

std::size_t llama3_failure_mix_size() {
  static const std::size_t size = llama3_failure_mix().size();
  return size;
}

void derive_reliability(Scenario& s) {
  const bool processes_given = given(s, "faults.processes");
  if (!given(s, "faults.llama3_mix")) {
    s.faults.llama3_mix = !processes_given;
    set_derived(s, "faults.llama3_mix");
  }
  if (!processes_given) set_derived(s, "faults.processes");
  if (s.faults.llama3_mix && !s.faults.llama3_mix_added) {
    s.faults.llama3_mix_added = true;
    // After the given processes, so that their indices (and keys) stay theirs.
    const std::size_t first = s.faults.processes.size();
    for (auto& p : llama3_failure_mix()) s.faults.processes.push_back(std::move(p));
    for (std::size_t i = first; i < s.faults.processes.size(); ++i) {
      for (const char* key : {"component", "domain", "per_1000_node_days", "components_per_node",
                              "distribution", "shape", "replace_node", "source"}) {
        set_derived(s, fmt::format("faults.processes[{}].{}", i, key));
      }
    }
  }
  for (std::size_t i = 0; i < s.faults.processes.size(); ++i) {
    auto& p = s.faults.processes[i];
    const std::string key = fmt::format("faults.processes[{}].replace_node", i);
    if (!given(s, key)) {
      p.replace_node = p.component != Component::software;
      set_derived(s, key);
    }
    const std::string tier = fmt::format("faults.processes[{}].tier", i);
    if (is_fabric_port(p.domain) && !given(s, tier)) {
      p.tier = default_fabric_tier(p.domain);
      set_derived(s, tier);
    }
  }
  derive_events(s, s.faults.events, "faults.events");
  derive_events(s, s.faults.replayed, "");
  if (s.policies.empty()) {
    // The schema's defaults, applied to an empty mapping; they parse (schema tests).
    Diagnostics ignored;
    ParseContext ctx{ignored, s.origins, false};
    PolicySpec p;
    policy_schema().parse(ConfigNode::map(default_location()), "policies[0]", p, ctx);
    p.name = "default";  // reports label it: no spares, wait for repair, a worst case
    set_derived(s, "policies[0].name");
    s.policies.push_back(p);
  }
  for (std::size_t i = 0; i < s.policies.size(); ++i) derive_policy(s, i);
}

void check_reliability(const Scenario& s, const Location& file, Diagnostics& d) {
  if (!(s.faults.rate_scale >= 0) || !std::isfinite(s.faults.rate_scale)) {
    d.error(written_at(s, "faults.rate_scale", file), "faults.rate_scale",
            fmt::format("expected a factor of 0 or more, found {:g}", s.faults.rate_scale));
  }
  check_process_rates(s, file, d);
  check_events(s, s.faults.events, "faults.events", file, d);
  check_events(s, s.faults.replayed, "", file, d);
  for (std::size_t i = 0; i < s.faults.processes.size(); ++i) {
    const auto& p = s.faults.processes[i];
    const std::string path = fmt::format("faults.processes[{}]", i);
    // Below 0.05 the Weibull scale underflows to 0 and failures come at dt = 0
    // (a campaign that never ends); above 20 it is a fixed lifetime.
    if (p.shape < kMinWeibullShape || p.shape > kMaxWeibullShape) {
      d.error(written_at(s, path + ".shape", file), path + ".shape",
              fmt::format("expected a Weibull shape in [{:g}, {:g}], found {:g}", kMinWeibullShape,
                          kMaxWeibullShape, p.shape));
    } else if (p.distribution == Lifetime::exponential && given(s, path + ".shape") &&
               p.shape != 1) {
      d.error(written_at(s, path + ".shape", file), path + ".shape",
              "shape applies to the weibull distribution only; exponential has shape 1");
    }
  }
  for (std::size_t i = 0; i < s.faults.stragglers.size(); ++i) {
    const auto& g = s.faults.stragglers[i];
    const std::string path = fmt::format("faults.stragglers[{}]", i);
    if (g.duration_s <= 0) {
      d.error(written_at(s, path + ".duration", file), path + ".duration",
              "a straggler's duration must be above 0");
    }
    if (g.slowdown < 1) {
      d.error(written_at(s, path + ".slowdown", file), path + ".slowdown",
              fmt::format("a slowdown multiplies the step time and is at least 1, found {}; "
                          "1.1 is 10% slower",
                          g.slowdown));
    }
  }
  const int nodes = s.cluster.gpus / s.cluster.gpus_per_node;
  for (std::size_t i = 0; i < s.policies.size(); ++i) {
    const auto& p = s.policies[i];
    const std::string path = fmt::format("policies[{}]", i);
    for (std::size_t j = 0; j < i; ++j) {
      if (s.policies[j].name == p.name) {
        d.error(written_at(s, path + ".name", file), path + ".name",
                fmt::format("'{}' names policies[{}] already; names must differ", p.name, j));
      }
    }
    const bool has_interval = given(s, path + ".checkpoint_interval");
    if (p.checkpoint_rule == CheckpointRule::fixed && !has_interval) {
      d.error(written_at(s, path + ".checkpoint_rule", file), path + ".checkpoint_rule",
              "the fixed rule needs checkpoint_interval");
    }
    if (p.checkpoint_rule != CheckpointRule::fixed && has_interval) {
      d.error(written_at(s, path + ".checkpoint_interval", file), path + ".checkpoint_interval",
              "an interval is only used by checkpoint_rule: fixed; the young and daly rules "
              "derive it from the failure rate");
    }
    if (has_interval && p.checkpoint_interval_s <= 0) {
      d.error(written_at(s, path + ".checkpoint_interval", file), path + ".checkpoint_interval",
              "the interval must be above 0");
    }
    for (const auto& [key, value] : {std::pair{".host_copy_bandwidth", p.host_copy_bw_Bps},
                                     std::pair{".host_memory_bandwidth", p.host_memory_bw_Bps},
                                     std::pair{".storage_write_bandwidth", p.storage_write_bw_Bps},
                                     std::pair{".storage_read_bandwidth", p.storage_read_bw_Bps},
                                     std::pair{".peer_bandwidth", p.peer_bw_Bps}}) {
      // A derived peer bandwidth is zero only with a zero NIC rate, reported there.
      const auto origin = s.origins.find(path + key);
      const bool written = origin != s.origins.end() && origin->second.in_file();
      if (value <= 0 && (key != std::string(".peer_bandwidth") || written)) {
        d.error(written_at(s, path + key, file), path + key, "a bandwidth must be above 0");
      }
    }
    if (p.storage_background_load > 0.99) {
      d.error(written_at(s, path + ".storage_background_load", file),
              path + ".storage_background_load",
              fmt::format("other jobs cannot take all of the storage bandwidth: expected at most "
                          "0.99, found {:g}",
                          p.storage_background_load));
    }
    if (written(s, path + ".persistent_every") && !p.in_memory) {
      d.error(written_at(s, path + ".persistent_every", file), path + ".persistent_every",
              "applies to in_memory checkpoints only; every other checkpoint goes to storage");
    }
    if (written(s, path + ".upload_overlap") && !p.async_upload) {
      d.error(written_at(s, path + ".upload_overlap", file), path + ".upload_overlap",
              "applies to asynchronous uploads only; with async_upload: false every checkpoint "
              "blocks until it is in storage");
    }
    if (p.hot_spares > nodes) {
      d.warning(written_at(s, path + ".hot_spares", file), path + ".hot_spares",
                fmt::format("{} spare nodes for a job of {} nodes", p.hot_spares, nodes));
    }
    if (p.repair_s <= 0 && p.hot_spares == 0 && p.no_spare == NoSpare::wait_for_repair) {
      d.error(written_at(s, path + ".repair_time", file), path + ".repair_time",
              "must be above 0 (without spares the job waits for it)");
    }
  }
}

}  // namespace myriad::models::scenario
