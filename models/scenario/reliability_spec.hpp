// What goes wrong over days of training (`faults`) and what the job does about
// it (`policies`). Rates and recovery times carry their sources in the schema's
// help text (scenario_schema.cpp) and in scenarios/validation/.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace myriad::models::scenario {

enum class Component { gpu, hbm, nic, switch_, link, host, software };
enum class Lifetime { exponential, weibull };
// What one failure takes down: a node (its GPUs, NICs, host), or every node
// under one leaf switch, one pod (second-tier switch group) or one rack (its
// power distribution), or one plane of a multi-plane fabric (cluster.network
// .planes): no node stops; every NIC loses its port on that plane until it is
// repaired. Or, stopping no node either, one switch of tier `tier` (>= 1)
// above the leaves (spine: every switch of the tier below it loses its up port
// to it), or one up port of a switch of tier `tier` (uplink: its cable, or the
// port at either end); models/scenario/fabric_domains.hpp places them. Nodes
// are numbered in order: job nodes, then spares.
enum class Domain { node, leaf, pod, rack, plane, spine, uplink };

// One failure process, running independently on every domain in service (every
// node, for node processes).
struct FailureProcessSpec {
  Component component = Component::gpu;
  Domain domain = Domain::node;
  double per_1000_node_days = 0;    // rate form 1; 0 when not given
  double per_component_hour = 0;    // rate form 2, times components_per_node
  double per_1000_domain_days = 0;  // a leaf, pod or rack process's rate
  int components_per_node = 1;
  Lifetime distribution = Lifetime::exponential;
  double shape = 1;          // Weibull shape k; 1 is exponential
  bool replace_node = true;  // the node leaves for repair (false: restart in place)
  int tier = -1;             // spine and uplink: the tier (-1: default_fabric_tier)
  std::string source;

  // Failures per second of one domain (one node, for node processes).
  [[nodiscard]] double rate_per_domain_s() const {
    constexpr double kDay = 86400.0;
    constexpr double kHour = 3600.0;
    return (per_1000_node_days + per_1000_domain_days) / (1000.0 * kDay) +
           per_component_hour * components_per_node / kHour;
  }
};

// One event at a given time, the same in every seed and policy: a failure of a
// node or a domain, or a node running slow from `at` to `until`.
struct InjectedEventSpec {
  double at_s = 0;
  double until_s = 0;  // a slow node's end; 0 for a failure
  Domain domain = Domain::node;
  int id = -1;          // the node's or the domain's index
  int node = -1;        // shorthand for domain node, id
  double slowdown = 0;  // > 0: a slow node (step time factor), not a failure
  Component component = Component::gpu;
  bool replace_node = true;
  double repair_s = 0;  // how long its nodes stay out; 0: the policy's repair_time draw
  int tier = -1;        // spine and uplink: the tier (-1: default_fabric_tier)
  std::string where;    // file:line, for the event log of a replayed event
};

// A node running slow for a while: a GPU at lower clocks, a degraded link, a
// flapping NIC. The slowest rank sets a synchronous job's pace.
struct StragglerProcessSpec {
  std::string name;
  double per_1000_node_days = 0;  // onsets
  double duration_s = 0;          // mean, exponentially distributed
  double slowdown = 1;            // step time factor while it lasts
  // What runs slow, for the step engine: a GPU (compute takes `slowdown` times
  // longer) or a link (the node's NICs carry 1/slowdown of their bandwidth).
  // The campaign engine applies `slowdown` to the step time either way.
  Component component = Component::gpu;
};

struct FaultsSpec {
  std::vector<FailureProcessSpec> processes;  // the given ones first, then the Llama 3 mix
  bool llama3_mix = true;                     // the Llama 3 mix runs (beside given processes)
  bool llama3_mix_added = false;              // it is in `processes` (derivation runs once)
  std::vector<StragglerProcessSpec> stragglers;
  double rate_scale = 1;                    // multiplies every process's failure rate
  int nodes_per_rack = 4;                   // the rack (power) domain
  std::vector<InjectedEventSpec> events;    // given in the scenario
  std::string replay;                       // a CSV of a real cluster's failures
  std::vector<InjectedEventSpec> replayed;  // its rows, loaded with the scenario
};

// Nodes in one domain of this kind on the scenario's cluster (leaf and pod from
// cluster.network's tiers, rack from faults.nodes_per_rack); 0 when the
// cluster does not define it (no network tiers, or a pod without a second tier).
struct Scenario;
// A plane spans every node: its domain_nodes are the cluster's nodes.
int domain_nodes(const Scenario& s, Domain d);
// How many domains of this kind the job's nodes make (planes: the fabric's).
int domain_count(const Scenario& s, Domain d);
std::string_view domain_name(Domain d);

enum class CheckpointRule { fixed, young, daly };
enum class NoSpare { wait_for_repair, shrink };
enum class StragglerAction { tolerate, evict };
// A checkpoint that comes due while the previous one is still uploading.
enum class UploadOverlap { block, skip, queue };
// What each GPU copies to host memory when a checkpoint is taken: `balanced`,
// its share of the checkpoint (the replicated weights split over the
// data-parallel replicas, as Megatron-LM's fully parallel save does), or
// `held`, everything it holds (PyTorch DCP's default asynchronous stager).
enum class CheckpointSnapshot { balanced, held };

// One set of policies; several are compared side by side.
struct PolicySpec {
  std::string name;
  // Detection.
  double detection_s = 0;  // heartbeat timeout until the failure is noticed
  double diagnosis_s = 0;  // locating the faulty node
  // Recovery.
  int hot_spares = 0;   // idle nodes ready to replace a failed one
  double repair_s = 0;  // mean, exponential
  NoSpare no_spare = NoSpare::wait_for_repair;
  double job_start_s = 0;
  double communicator_init_s = 0;
  double warmup_s = 0;
  // Checkpointing.
  CheckpointRule checkpoint_rule = CheckpointRule::young;
  double checkpoint_interval_s = 0;  // fixed rule only
  double checkpoint_bytes = 0;       // 0: derived from the model
  double host_copy_bw_Bps = 0;       // per GPU, blocking stage
  double host_memory_bw_Bps = 0;     // per node: all its GPUs' copies into host memory at once
  CheckpointSnapshot checkpoint_snapshot = CheckpointSnapshot::balanced;
  double checkpoint_coordination_s = 0;  // blocking: save planning, metadata exchange, barrier
  double storage_write_bw_Bps = 0;       // aggregate, upload
  double storage_read_bw_Bps = 0;        // aggregate, load on restart
  bool async_upload = true;
  UploadOverlap upload_overlap = UploadOverlap::block;
  double storage_background_load = 0;  // share of the storage bandwidth other jobs take
  double upload_slowdown = 0;          // step time excess while an upload runs (0.05: 5%)
  bool in_memory = false;              // Gemini: a copy in a peer host's memory
  double peer_bw_Bps = 0;              // per node, for in-memory checkpoints
  int persistent_every = 0;            // in-memory: every Nth also to storage (0: derived)
  // Stragglers.
  StragglerAction straggler_action = StragglerAction::tolerate;
  int straggler_detect_steps = 0;
};

}  // namespace myriad::models::scenario
