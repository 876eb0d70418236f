// The `faults` and `policies` sections, described once (see schema.hpp).
// Every default that is a number about the world names its source here, so that
// `myriad explain faults` and `myriad explain policies` show it.
#include "models/scenario/scenario_schema.hpp"

namespace myriad::models::scenario {
namespace {

using D = Default;

std::vector<std::pair<std::string, Component>> component_choices() {
  return {{"gpu", Component::gpu},          {"hbm", Component::hbm},   {"nic", Component::nic},
          {"switch", Component::switch_},   {"link", Component::link}, {"host", Component::host},
          {"software", Component::software}};
}

std::vector<std::pair<std::string, Domain>> domain_choices() {
  return {{"node", Domain::node},    {"leaf", Domain::leaf},   {"pod", Domain::pod},
          {"rack", Domain::rack},    {"plane", Domain::plane}, {"spine", Domain::spine},
          {"uplink", Domain::uplink}};
}

Schema<FailureProcessSpec> make_failure_process_schema() {
  Schema<FailureProcessSpec> s(
      "One failure process, running independently on every node in service. Give the rate "
      "either per 1000 node-days or per component-hour.");
  s.choice("component", &FailureProcessSpec::component, component_choices(), D::required(),
           "what fails")
      .choice("domain", &FailureProcessSpec::domain, domain_choices(), D::value("node"),
              "what one failure takes down: its node, or every node under one leaf switch, "
              "pod (second-tier switch group) or rack (faults.nodes_per_rack); nodes are "
              "numbered job first, then spares, so a domain of spares takes only spares; or "
              "one plane of a multi-plane fabric (cluster.network.planes of 2 or more), which "
              "stops no node: the job runs on at (planes - down) / planes of its NICs' "
              "bandwidth until the plane is repaired, and waits when every plane is down; or "
              "one switch above the leaves (spine, of tier `tier`: each switch of the tier "
              "below it loses its up port to it) or one up port of a switch (uplink, of tier "
              "`tier`: a cable or the port at either end), which stop no node either: the job "
              "runs on at the pace of the switch that lost the most up ports "
              "(cluster.network.tiers[i].uplinks_down) until it is repaired, and waits while "
              "some switch has none left; a spine or uplink process runs one clock over all "
              "its switches or ports (exponential lifetimes only)")
      .quantity("per_1000_node_days", &FailureProcessSpec::per_1000_node_days, Dimension::count,
                D::none(),
                "failures per 1000 node-days (Meta's unit: Kokolis et al. HPCA'25); at most "
                "24,000, once an hour")
      .quantity("per_component_hour", &FailureProcessSpec::per_component_hour, Dimension::count,
                D::none(),
                "failures per component-hour, times components_per_node; at most once an hour "
                "a node in all")
      .quantity(
          "per_1000_domain_days", &FailureProcessSpec::per_1000_domain_days, Dimension::count,
          D::none(),
          "a leaf, pod, rack, plane, spine or uplink process: failures per 1000 days of one "
          "such domain (a spine: one switch; an uplink: one up port); at most 24,000, once an "
          "hour")
      .integer("components_per_node", &FailureProcessSpec::components_per_node, {1, 1 << 16},
               D::value("1"), "components of this kind in a node (for per_component_hour)")
      .choice("distribution", &FailureProcessSpec::distribution,
              {{"exponential", Lifetime::exponential}, {"weibull", Lifetime::weibull}},
              D::value("exponential"),
              "time between failures of one node; weibull with the same mean as the rate")
      .quantity("shape", &FailureProcessSpec::shape, Dimension::count, D::value("1"),
                "Weibull shape k: below 1 infant mortality, above 1 wear-out")
      .boolean("replace_node", &FailureProcessSpec::replace_node,
               D::derived("= false for software, true otherwise"),
               "the node leaves for repair; false restarts the job on the same nodes")
      .integer("tier", &FailureProcessSpec::tier, {0, 16},
               D::derived("= 1 for spine, 0 for uplink"),
               "spine and uplink: the tier (0: leaves) whose switch (spine, 1 or above) or up "
               "port (uplink, below the top) fails")
      .text("source", &FailureProcessSpec::source, D::none(), "where the rate comes from");
  return s;
}

Schema<InjectedEventSpec> make_injected_event_schema() {
  Schema<InjectedEventSpec> s(
      "One event at a given time, the same in every seed and policy: a failure of a node "
      "(`node: 17`) or of a domain (`domain: leaf, id: 3`), or a node running slow "
      "(`node: 17, slowdown: 1.5, until: 9h`). Nodes and domains are numbered from 0 over the "
      "job's nodes.");
  s.quantity("at", &InjectedEventSpec::at_s, Dimension::time, D::required(),
             "when, from the start of the campaign")
      .integer("node", &InjectedEventSpec::node, {0, 1 << 30}, D::none(),
               "the node (the same as domain: node, id: N)")
      .choice("domain", &InjectedEventSpec::domain, domain_choices(), D::value("node"),
              "what fails: a node, every node of one leaf, pod or rack, or one plane of a "
              "multi-plane fabric (its NIC ports), one switch above the leaves (spine) or one "
              "up port (uplink): for the last three the job runs on slower until it is repaired")
      .integer("id", &InjectedEventSpec::id, {0, 1 << 30}, D::none(),
               "the domain's index (spine: the switch's, uplink: the port's, over the tier's)")
      .integer("tier", &InjectedEventSpec::tier, {0, 16}, D::derived("= 1 for spine, 0 for uplink"),
               "spine and uplink: the switch's tier")
      .choice("component", &InjectedEventSpec::component, component_choices(),
              D::derived("= gpu for a node, switch for a leaf, pod, plane or spine, link for an "
                         "uplink, host for a rack"),
              "what fails, for the counts by component")
      .boolean("replace_node", &InjectedEventSpec::replace_node,
               D::derived("= false for software, true otherwise"),
               "its nodes leave for repair; false restarts the job on the same nodes")
      .quantity("repair", &InjectedEventSpec::repair_s, Dimension::time,
                D::derived("= a draw of the policy's repair_time"), "how long its nodes stay out")
      .quantity("slowdown", &InjectedEventSpec::slowdown, Dimension::count, D::none(),
                "a slow node instead of a failure: its step time factor, at least 1")
      .quantity("until", &InjectedEventSpec::until_s, Dimension::time, D::none(),
                "when a slow node recovers");
  return s;
}

Schema<StragglerProcessSpec> make_straggler_schema() {
  Schema<StragglerProcessSpec> s(
      "A node running slow for a while (a GPU at lower clocks, a degraded link, a NIC "
      "flapping). A synchronous job runs at its slowest rank's pace.");
  s.text("name", &StragglerProcessSpec::name, D::none(), "a label for reports")
      .quantity("per_1000_node_days", &StragglerProcessSpec::per_1000_node_days, Dimension::count,
                D::required(), "onsets per 1000 node-days; at most 24,000, once an hour")
      .quantity("duration", &StragglerProcessSpec::duration_s, Dimension::time, D::required(),
                "mean duration (exponentially distributed)")
      .quantity("slowdown", &StragglerProcessSpec::slowdown, Dimension::count, D::required(),
                "step time factor while it lasts, at least 1: 1.1 is 10% slower")
      .choice("component", &StragglerProcessSpec::component,
              {{"gpu", Component::gpu}, {"link", Component::link}}, D::value("gpu"),
              "what runs slow in `myriad simulate`: gpu (the node's compute takes slowdown "
              "times longer) or link (its NICs carry 1/slowdown of their bandwidth); "
              "`campaign` applies slowdown to the step time either way");
  return s;
}

// The blocking part of a checkpoint: what each GPU copies to host memory, how
// fast, and the coordination around it (docs/campaign.md gives the sources).
void add_snapshot_keys(Schema<PolicySpec>& p) {
  p.quantity("host_copy_bandwidth", &PolicySpec::host_copy_bw_Bps, Dimension::bandwidth,
             D::value("25GB/s"),
             "GPU to pinned host memory, per GPU (PCIe Gen4 x16 in practice): the blocking "
             "snapshot copies what checkpoint_snapshot gives each GPU at this rate, or at "
             "its share of host_memory_bandwidth when that is less; at least 1 Gbps (a "
             "sanity floor)")
      .quantity("host_memory_bandwidth", &PolicySpec::host_memory_bw_Bps, Dimension::bandwidth,
                D::value("614GB/s"),
                "per node: what host memory takes from all of the node's GPUs copying at once "
                "(a DGX H100's two Xeon 8480C, eight DDR5-4800 channels each: 2 x 8 x 38.4 "
                "GB/s, the datasheet peak); at least 1 Gbps (a sanity floor)")
      .choice("checkpoint_snapshot", &PolicySpec::checkpoint_snapshot,
              {{"balanced", CheckpointSnapshot::balanced}, {"held", CheckpointSnapshot::held}},
              D::value("balanced"),
              "what each GPU copies to host memory at a checkpoint: balanced, its share of the "
              "checkpoint (weights replicated over data-parallel replicas split among them, "
              "its optimizer shard; Megatron-LM's fully parallel save, on by default), or "
              "held, all the weights and optimizer state it holds (PyTorch DCP's default "
              "asynchronous stager copies the whole local state; DCP's default deduplication "
              "gives all replicated weights to the first replica, which then copies as much)")
      .quantity("checkpoint_coordination", &PolicySpec::checkpoint_coordination_s, Dimension::time,
                D::value("2s"),
                "blocking per checkpoint besides the copy: save planning, metadata exchange "
                "and the barrier that ends it, software costs no bandwidth sets (an "
                "assumption from MegaScale, NSDI'24: the blocking stage takes 'a few seconds' "
                "on more than 10,000 GPUs, of which the copy is under 0.3 s; docs/campaign.md)");
}

}  // namespace

const Schema<FaultsSpec>& faults_schema() {
  static const Schema<FaultsSpec> s = [] {
    Schema<FaultsSpec> f(
        "What fails over days of training. Without `processes`, the failure mix of Llama 3 "
        "405B on 16,384 H100 (arXiv:2407.21783 Table 5; scenarios/validation/"
        "failures_llama3.csv): 3.79 unexpected interruptions per 1000 node-days.");
    f.section_list("processes", &FaultsSpec::processes, make_failure_process_schema(),
                   D::derived("the Llama 3 mix"))
        .boolean("llama3_mix", &FaultsSpec::llama3_mix,
                 D::derived("= true without processes, false with them"),
                 "run the Llama 3 failure mix: with `processes`, true adds it to them (a leaf "
                 "switch process on top of the usual failures); without, false runs no random "
                 "failures (only injected, replayed and straggler events)")
        .section_list("stragglers", &FaultsSpec::stragglers, make_straggler_schema(), D::none())
        .quantity("rate_scale", &FaultsSpec::rate_scale, Dimension::count, D::value("1"),
                  "multiplies the rate of every failure process (2: twice as many failures, a "
                  "what-if for `campaign --vary faults.rate_scale=0.5,1,2`); injected and "
                  "replayed events stay as they are")
        .integer("nodes_per_rack", &FaultsSpec::nodes_per_rack, {1, 1 << 20}, D::value("4"),
                 "nodes sharing one rack's power, for domain: rack (four 8-GPU nodes per "
                 "rack as in a DGX H100 SuperPOD; an assumption, set it from the floor plan)")
        .section_list("events", &FaultsSpec::events, make_injected_event_schema(), D::none())
        .text("replay", &FaultsSpec::replay, D::none(),
              "a CSV file of a real cluster's failures, relative to the scenario: a header "
              "`time,component,id,duration` (and optionally `domain`), then one failure a row; "
              "time and duration with units (10h, 36000s), duration how long its nodes stay "
              "out (empty: a repair_time draw); played in every seed alongside the random "
              "processes");
    return f;
  }();
  return s;
}

const Schema<PolicySpec>& policy_schema() {
  static const Schema<PolicySpec> s = [] {
    Schema<PolicySpec> p(
        "How the job detects failures, recovers and checkpoints. Defaults follow MegaScale "
        "(NSDI'24): detection plus diagnosis under 10 minutes, communicator init under 30 s on "
        "more than 10,000 GPUs; scenarios/validation/reliability_facts.md.");
    p.text("name", &PolicySpec::name, D::derived("policy<index>"), "a label for reports")
        .quantity("detection", &PolicySpec::detection_s, Dimension::time, D::value("5min"),
                  "heartbeat timeout until a failure is noticed (MegaScale: detection plus "
                  "diagnosis under 10 min)")
        .quantity("diagnosis", &PolicySpec::diagnosis_s, Dimension::time, D::value("5min"),
                  "locating the faulty node after detection")
        .integer("hot_spares", &PolicySpec::hot_spares, {0, 1 << 20}, D::value("0"),
                 "idle nodes that replace a failed one at once")
        .quantity("repair_time", &PolicySpec::repair_s, Dimension::time, D::value("4h"),
                  "mean time to repair or replace a node, exponentially distributed "
                  "(an assumption: no published figure)")
        .choice("no_spare", &PolicySpec::no_spare,
                {{"wait_for_repair", NoSpare::wait_for_repair}, {"shrink", NoSpare::shrink}},
                D::value("wait_for_repair"),
                "without a spare: wait for a repair, or evict the node and restart with "
                "fewer data-parallel replicas")
        .quantity("job_start", &PolicySpec::job_start_s, Dimension::time, D::value("3min"),
                  "scheduling and process start on restart (Kokolis et al.: restarts take "
                  "5-20 min in all)")
        .quantity("communicator_init", &PolicySpec::communicator_init_s, Dimension::time,
                  D::value("30s"), "collective communicator setup (MegaScale: under 30 s)")
        .quantity("warmup", &PolicySpec::warmup_s, Dimension::time, D::value("2min"),
                  "first steps after a restart: compilation, caches, data loader")
        .choice("checkpoint_rule", &PolicySpec::checkpoint_rule,
                {{"fixed", CheckpointRule::fixed},
                 {"young", CheckpointRule::young},
                 {"daly", CheckpointRule::daly}},
                D::derived("= fixed when checkpoint_interval is given, else young"),
                "checkpoint interval: fixed, Young's sqrt(2 C M) or Daly's refinement, with C "
                "the blocking cost and M the job's mean time between failures")
        .quantity("checkpoint_interval", &PolicySpec::checkpoint_interval_s, Dimension::time,
                  D::none(), "compute time between checkpoints (fixed rule)")
        .quantity("checkpoint_size", &PolicySpec::checkpoint_bytes, Dimension::bytes,
                  D::derived("= parameters x (2 B of bf16 weights + optimizer bytes)"),
                  "bytes of one checkpoint");
    add_snapshot_keys(p);
    p.quantity("storage_write_bandwidth", &PolicySpec::storage_write_bw_Bps, Dimension::bandwidth,
               D::value("273GB/s"),
               "aggregate write to storage (Megatron SC'21: 273 GB/s saving 13.8 TB); at least "
               "10 MB/s (a sanity floor)")
        .quantity("storage_read_bandwidth", &PolicySpec::storage_read_bw_Bps, Dimension::bandwidth,
                  D::value("1TB/s"),
                  "aggregate read on restart (Megatron SC'21: 1 TB/s peak); at least 10 MB/s (a "
                  "sanity floor)")
        .boolean("async_upload", &PolicySpec::async_upload, D::value("true"),
                 "upload to storage in the background (MegaScale two-stage); false blocks "
                 "until it is durable")
        .choice("upload_overlap", &PolicySpec::upload_overlap,
                {{"block", UploadOverlap::block},
                 {"skip", UploadOverlap::skip},
                 {"queue", UploadOverlap::queue}},
                D::value("block"),
                "a checkpoint due while the previous one still uploads: block training until "
                "the upload ends (Megatron-LM's and PyTorch DCP's asynchronous save wait for "
                "the previous save), skip it, or stage it and queue its upload (one waits; a "
                "newer one replaces it)")
        .quantity("storage_background_load", &PolicySpec::storage_background_load,
                  Dimension::fraction, D::value("0"),
                  "share of the storage bandwidth other jobs take; the job's checkpoint writes "
                  "and reads get the rest")
        .quantity("upload_slowdown", &PolicySpec::upload_slowdown, Dimension::fraction,
                  D::value("0"),
                  "how much slower training steps run while an upload is in flight (host "
                  "memory, PCIe and front-end network shared with it): 0.05 is 5 % slower; 0 "
                  "leaves training alone (an assumption: not measured)")
        .boolean("in_memory", &PolicySpec::in_memory, D::value("false"),
                 "also keep each checkpoint in a peer host's memory (Gemini, SOSP'23): job "
                 "positions pair across the halves of the job (k with k + N/2) and hold each "
                 "other's shard; a failure "
                 "rolls back to it and loads from the peer, unless the failed node's peer lost "
                 "its memory too since the last checkpoint: then to the last one in storage")
        .quantity("peer_bandwidth", &PolicySpec::peer_bw_Bps, Dimension::bandwidth,
                  D::derived("= cluster.nic_bandwidth x cluster.nics_per_node"),
                  "per node, host to peer host, for in-memory checkpoints; at least 1 Gbps (a "
                  "sanity floor)")
        .integer("persistent_every", &PolicySpec::persistent_every, {0, 1 << 30},
                 D::derived("= the fewest checkpoints that span one upload"),
                 "with in_memory: every Nth checkpoint also goes to storage (Gemini keeps a "
                 "remote copy for failures that take both memory copies)")
        .choice("straggler_action", &PolicySpec::straggler_action,
                {{"tolerate", StragglerAction::tolerate}, {"evict", StragglerAction::evict}},
                D::value("tolerate"), "a slow node: run at its pace, or evict it and restart")
        .integer("straggler_detect_steps", &PolicySpec::straggler_detect_steps, {1, 1 << 20},
                 D::value("10"), "slow steps before a straggler is evicted");
    return p;
  }();
  return s;
}

}  // namespace myriad::models::scenario
