#include "models/scenario/reliability_checks.hpp"

#include <fmt/format.h>

#include "models/scenario/scenario_schema.hpp"

namespace myriad::scenario {
namespace {

constexpr double kMinWeibullShape = 0.05;
constexpr double kMaxWeibullShape = 20;

}  // namespace
namespace {

bool given(const Scenario& s, const std::string& key) {
  return s.origins.find(key) != s.origins.end();
}

// Written in the scenario (not a default, not derived).
bool written(const Scenario& s, const std::string& key) {
  const auto it = s.origins.find(key);
  return it != s.origins.end() && it->second.in_file();
}

void set_derived(Scenario& s, const std::string& key) { s.origins[key] = derived_location(); }

// Where a key was written; a defaulted key is reported at the scenario file.
Location at(const Scenario& s, const std::string& key, const Location& file) {
  const auto it = s.origins.find(key);
  return it != s.origins.end() && it->second.in_file() ? it->second : file;
}

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
    p.peer_bw_Bps = s.cluster.nic_bw_Bps * s.cluster.nics_per_node;
    set_derived(s, path + ".peer_bandwidth");
  }
}

}  // namespace

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

void derive_reliability(Scenario& s) {
  if (!given(s, "faults.processes")) {
    s.faults.processes = llama3_failure_mix();
    set_derived(s, "faults.processes");
    for (std::size_t i = 0; i < s.faults.processes.size(); ++i) {
      for (const char* key : {"component", "per_1000_node_days", "components_per_node",
                              "distribution", "shape", "replace_node", "source"}) {
        set_derived(s, fmt::format("faults.processes[{}].{}", i, key));
      }
    }
  }
  for (std::size_t i = 0; i < s.faults.processes.size(); ++i) {
    const std::string key = fmt::format("faults.processes[{}].replace_node", i);
    if (!given(s, key)) {
      auto& p = s.faults.processes[i];
      p.replace_node = p.component != Component::software;
      set_derived(s, key);
    }
  }
  if (s.policies.empty()) {
    // The schema's defaults, applied to an empty mapping; they parse (schema tests).
    Diagnostics ignored;
    ParseContext ctx{ignored, s.origins, false};
    PolicySpec p;
    policy_schema().parse(ConfigNode::map(default_location()), "policies[0]", p, ctx);
    s.policies.push_back(p);
  }
  for (std::size_t i = 0; i < s.policies.size(); ++i) derive_policy(s, i);
}

void check_reliability(const Scenario& s, const Location& file, Diagnostics& d) {
  for (std::size_t i = 0; i < s.faults.processes.size(); ++i) {
    const auto& p = s.faults.processes[i];
    const std::string path = fmt::format("faults.processes[{}]", i);
    const bool per_node = given(s, path + ".per_1000_node_days");
    const bool per_comp = given(s, path + ".per_component_hour");
    if (per_node == per_comp && s.origins.at("faults.processes").in_file()) {
      d.error(at(s, path + ".component", file), path,
              per_node ? "give the rate once: per_1000_node_days or per_component_hour, not both"
                       : "missing rate: give per_1000_node_days or per_component_hour");
    }
    // Below 0.05 the Weibull scale underflows to 0 and failures come at dt = 0
    // (a campaign that never ends); above 20 it is a fixed lifetime.
    if (p.shape < kMinWeibullShape || p.shape > kMaxWeibullShape) {
      d.error(at(s, path + ".shape", file), path + ".shape",
              fmt::format("expected a Weibull shape in [{:g}, {:g}], found {:g}", kMinWeibullShape,
                          kMaxWeibullShape, p.shape));
    } else if (p.distribution == Lifetime::exponential && given(s, path + ".shape") &&
               p.shape != 1) {
      d.error(at(s, path + ".shape", file), path + ".shape",
              "shape applies to the weibull distribution only; exponential has shape 1");
    }
  }
  for (std::size_t i = 0; i < s.faults.stragglers.size(); ++i) {
    const auto& g = s.faults.stragglers[i];
    const std::string path = fmt::format("faults.stragglers[{}]", i);
    if (g.duration_s <= 0) {
      d.error(at(s, path + ".duration", file), path + ".duration",
              "a straggler's duration must be above 0");
    }
    if (g.slowdown < 1) {
      d.error(at(s, path + ".slowdown", file), path + ".slowdown",
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
        d.error(at(s, path + ".name", file), path + ".name",
                fmt::format("'{}' names policies[{}] already; names must differ", p.name, j));
      }
    }
    const bool has_interval = given(s, path + ".checkpoint_interval");
    if (p.checkpoint_rule == CheckpointRule::fixed && !has_interval) {
      d.error(at(s, path + ".checkpoint_rule", file), path + ".checkpoint_rule",
              "the fixed rule needs checkpoint_interval");
    }
    if (p.checkpoint_rule != CheckpointRule::fixed && has_interval) {
      d.error(at(s, path + ".checkpoint_interval", file), path + ".checkpoint_interval",
              "an interval is only used by checkpoint_rule: fixed; the young and daly rules "
              "derive it from the failure rate");
    }
    if (has_interval && p.checkpoint_interval_s <= 0) {
      d.error(at(s, path + ".checkpoint_interval", file), path + ".checkpoint_interval",
              "the interval must be above 0");
    }
    for (const auto& [key, value] : {std::pair{".host_copy_bandwidth", p.host_copy_bw_Bps},
                                     std::pair{".storage_write_bandwidth", p.storage_write_bw_Bps},
                                     std::pair{".storage_read_bandwidth", p.storage_read_bw_Bps},
                                     std::pair{".peer_bandwidth", p.peer_bw_Bps}}) {
      // A derived peer bandwidth is zero only with a zero NIC rate, reported there.
      const auto origin = s.origins.find(path + key);
      const bool written = origin != s.origins.end() && origin->second.in_file();
      if (value <= 0 && (key != std::string(".peer_bandwidth") || written)) {
        d.error(at(s, path + key, file), path + key, "a bandwidth must be above 0");
      }
    }
    if (p.storage_background_load > 0.99) {
      d.error(at(s, path + ".storage_background_load", file), path + ".storage_background_load",
              fmt::format("other jobs cannot take all of the storage bandwidth: expected at most "
                          "0.99, found {:g}",
                          p.storage_background_load));
    }
    if (written(s, path + ".persistent_every") && !p.in_memory) {
      d.error(at(s, path + ".persistent_every", file), path + ".persistent_every",
              "applies to in_memory checkpoints only; every other checkpoint goes to storage");
    }
    if (written(s, path + ".upload_overlap") && !p.async_upload) {
      d.error(at(s, path + ".upload_overlap", file), path + ".upload_overlap",
              "applies to asynchronous uploads only; with async_upload: false every checkpoint "
              "blocks until it is in storage");
    }
    if (p.hot_spares > nodes) {
      d.warning(at(s, path + ".hot_spares", file), path + ".hot_spares",
                fmt::format("{} spare nodes for a job of {} nodes", p.hot_spares, nodes));
    }
    if (p.repair_s <= 0 && p.hot_spares == 0 && p.no_spare == NoSpare::wait_for_repair) {
      d.error(at(s, path + ".repair_time", file), path + ".repair_time",
              "must be above 0 (without spares the job waits for it)");
    }
  }
}

}  // namespace myriad::scenario
