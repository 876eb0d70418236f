#include "models/scenario/physical_bounds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "models/scenario/checker.hpp"
#include "models/scenario/reliability_checks.hpp"
#include "models/scenario/units.hpp"

namespace myriad::models::scenario {
namespace {

// Why each floor is where it is, for the message.
constexpr const char* kLinkReason =
    "no training cluster has a link slower than 1 Gbit/s Ethernet (today's NICs carry 100 to "
    "800 Gbit/s); a sanity floor, set far below any real one";
constexpr const char* kStorageReason =
    "a job's storage is faster than a tenth of one hard disk (100 to 250 MB/s); a sanity floor, "
    "set far below any real one";
constexpr const char* kMemoryReason =
    "every accelerator's memory is faster than one DDR4 channel (25 GB/s), HBM 100 times "
    "more; a sanity floor, set far below any real one";

void check_floor(const Scenario& s, const Location& file, Diagnostics& d, const std::string& key,
                 double value, double floor, const char* reason) {
  // Zero and negative values are refused by the checks of each section already.
  if (!(value > 0) || value >= floor) return;
  d.error(written_at(s, key, file), key,
          fmt::format("expected a bandwidth of at least {}, found {}: {}",
                      format_human(floor, Dimension::bandwidth),
                      format_human(value, Dimension::bandwidth), reason));
}

void check_bandwidths(const Scenario& s, const Location& file, Diagnostics& d) {
  const ClusterSpec& c = s.cluster;
  check_floor(s, file, d, "cluster.nic_bandwidth", c.nic_bw_Bps, kMinLinkBandwidth_Bps,
              kLinkReason);
  check_floor(s, file, d, "cluster.gpu.nvlink_bandwidth", c.gpu.nvlink_bw_Bps,
              kMinLinkBandwidth_Bps, kLinkReason);
  check_floor(s, file, d, "cluster.gpu.hbm_bandwidth", c.gpu.hbm_bw_Bps, kMinMemoryBandwidth_Bps,
              kMemoryReason);
  for (std::size_t i = 0; i < c.network.tiers.size(); ++i) {
    // A derived port bandwidth is the NIC's, judged there.
    const std::string key = fmt::format("cluster.network.tiers[{}].port_bandwidth", i);
    if (written(s, key)) {
      check_floor(s, file, d, key, c.network.tiers[i].port_bw_Bps, kMinLinkBandwidth_Bps,
                  kLinkReason);
    }
  }
  // Copies to host memory and to peers go over links; storage has a floor of its own.
  for (std::size_t i = 0; i < s.policies.size(); ++i) {
    const PolicySpec& p = s.policies[i];
    const std::string path = fmt::format("policies[{}]", i);
    check_floor(s, file, d, path + ".host_copy_bandwidth", p.host_copy_bw_Bps,
                kMinLinkBandwidth_Bps, kLinkReason);
    check_floor(s, file, d, path + ".host_memory_bandwidth", p.host_memory_bw_Bps,
                kMinLinkBandwidth_Bps, kLinkReason);
    if (written(s, path + ".peer_bandwidth")) {
      check_floor(s, file, d, path + ".peer_bandwidth", p.peer_bw_Bps, kMinLinkBandwidth_Bps,
                  kLinkReason);
    }
    check_floor(s, file, d, path + ".storage_write_bandwidth", p.storage_write_bw_Bps,
                kMinStorageBandwidth_Bps, kStorageReason);
    check_floor(s, file, d, path + ".storage_read_bandwidth", p.storage_read_bw_Bps,
                kMinStorageBandwidth_Bps, kStorageReason);
  }
}

void check_capacity_factor(const Scenario& s, const Location& file, Diagnostics& d) {
  const MoeSpec& moe = s.model.moe;
  const double floor = min_capacity_factor(s);
  if (!s.model.is_moe() || !(moe.capacity_factor > 0) || !(floor > 0)) return;
  if (moe.capacity_factor >= floor) return;
  const double tokens = static_cast<double>(s.parallelism.micro_batch) * s.model.seq_length;
  d.error(written_at(s, "model.moe.capacity_factor", file), "model.moe.capacity_factor",
          fmt::format("expected 0 (dropless) or at least {:.3g}, found {:g}: an expert would hold "
                      "{:.3g} of a micro-batch's tokens (factor x top_k x micro_batch x "
                      "seq_length / experts = {:g} x {} x {:g} / {}), less than one, so every "
                      "token would be dropped",
                      floor, moe.capacity_factor,
                      moe.capacity_factor * moe.top_k * tokens / moe.active_experts(),
                      moe.capacity_factor, moe.top_k, tokens, moe.active_experts()));
}

// Why no rate may pass once an hour a node, for the message.
constexpr const char* kFailureReason =
    "failing more often than once an hour, no job makes progress (a restart alone takes 5 to "
    "20 min: Kokolis et al. HPCA'25); the worst published fleets see 3 to 20 failures per 1000 "
    "node-days (Llama 3, arXiv:2407.21783)";
constexpr const char* kStragglerReason =
    "slowing more often than once an hour, a node is never healthy and the job always runs at "
    "a straggler's pace; the worst published fleets see 3 to 20 failures of any kind per 1000 "
    "node-days (Llama 3, arXiv:2407.21783)";

void check_rate(const Scenario& s, const Location& file, Diagnostics& d, const std::string& key,
                double per_1000_days, const std::string& unit, const std::string& found,
                const char* reason = kFailureReason) {
  if (!(per_1000_days > kMaxEventsPer1000NodeDays)) return;
  d.error(written_at(s, key, file), key,
          fmt::format("expected at most {:g} per 1000 {}-days (once an hour), found {}: {}",
                      kMaxEventsPer1000NodeDays, unit, found, reason));
}

void check_fault_rates(const Scenario& s, const Location& file, Diagnostics& d) {
  constexpr double kThousandDays_s = 1000.0 * 86400;
  // The given processes; the Llama 3 mix after them needs no checking.
  const std::size_t mix = s.faults.llama3_mix_added ? llama3_failure_mix_size() : 0;
  double highest = 0;  // per 1000 domain-days, of any process
  std::string highest_unit = "node";
  for (const FailureProcessSpec& p : s.faults.processes) {
    if (p.rate_per_domain_s() * kThousandDays_s > highest) {
      highest = p.rate_per_domain_s() * kThousandDays_s;
      highest_unit = domain_name(p.domain);
    }
  }
  for (std::size_t i = 0; i + mix < s.faults.processes.size(); ++i) {
    const FailureProcessSpec& p = s.faults.processes[i];
    const std::string path = fmt::format("faults.processes[{}]", i);
    const double rate = p.rate_per_domain_s() * kThousandDays_s;
    const std::string unit(domain_name(p.domain));
    if (p.per_component_hour > 0) {
      check_rate(s, file, d, path + ".per_component_hour", rate, unit,
                 fmt::format("{:g} per component-hour x {} components_per_node = {:.4g}",
                             p.per_component_hour, p.components_per_node, rate));
    } else {
      const std::string key =
          p.per_1000_domain_days > 0 ? ".per_1000_domain_days" : ".per_1000_node_days";
      check_rate(s, file, d, path + key, rate, unit, fmt::format("{:g}", rate));
    }
  }
  // Scaled past the bound by rate_scale alone.
  if (highest <= kMaxEventsPer1000NodeDays &&
      s.faults.rate_scale * highest > kMaxEventsPer1000NodeDays) {
    check_rate(s, file, d, "faults.rate_scale", s.faults.rate_scale * highest, highest_unit,
               fmt::format("rate_scale {:g} x the highest process's {:.4g} = {:.4g}",
                           s.faults.rate_scale, highest, s.faults.rate_scale * highest));
  }
  for (std::size_t i = 0; i < s.faults.stragglers.size(); ++i) {
    const double rate = s.faults.stragglers[i].per_1000_node_days;
    check_rate(s, file, d, fmt::format("faults.stragglers[{}].per_1000_node_days", i), rate, "node",
               fmt::format("{:g}", rate), kStragglerReason);
  }
}

}  // namespace

double min_capacity_factor(const Scenario& s) {
  const MoeSpec& moe = s.model.moe;
  const double slots =
      static_cast<double>(moe.top_k) * s.parallelism.micro_batch * s.model.seq_length;
  return slots > 0 && moe.active_experts() > 0 ? moe.active_experts() / slots : 0;
}

void check_physical_bounds(const Scenario& s, const Location& file, Diagnostics& d) {
  check_bandwidths(s, file, d);
  check_capacity_factor(s, file, d);
  check_fault_rates(s, file, d);
}

void check_layout_bounds(const Scenario& s, const Location& file, Diagnostics& d) {
  check_capacity_factor(s, file, d);
}

}  // namespace myriad::models::scenario
