#include "models/scenario/scenario_schema.hpp"

namespace myriad::models::scenario {
namespace {

// A choice's options from an enum's name table.
template <typename Enum, std::size_t N>
std::vector<std::pair<std::string, Enum>> choices(const models::EnumName<Enum> (&table)[N]) {
  std::vector<std::pair<std::string, Enum>> out;
  out.reserve(N);
  for (const auto& [value, name] : table) out.emplace_back(std::string(name), value);
  return out;
}

using D = Default;
using Range = Schema<ClusterSpec>::IntRange;

constexpr Range kPositive{1, std::numeric_limits<int>::max()};

Schema<GpuSpec> make_gpu_schema() {
  Schema<GpuSpec> s(
      "A GPU type, from its datasheet. Give a hardware preset by name (`gpu: H100`) or a "
      "mapping with `preset:` and overrides.");
  s.text("preset", &GpuSpec::preset, D::none(), "hardware preset in scenarios/hardware/")
      .text("name", &GpuSpec::name, D::required(), "GPU model name")
      .text("source", &GpuSpec::source, D::none(), "where the figures come from")
      .quantity("bf16_peak", &GpuSpec::bf16_flops, Dimension::flop_rate, D::required(),
                "dense bf16/fp16 tensor-core peak")
      .quantity("fp8_peak", &GpuSpec::fp8_flops, Dimension::flop_rate, D::value("0FLOPS"),
                "dense fp8 tensor-core peak; 0 when the GPU has none")
      .quantity("hbm_capacity", &GpuSpec::hbm_bytes, Dimension::bytes, D::required(),
                "memory capacity; above what the device profile reserves")
      .quantity("hbm_bandwidth", &GpuSpec::hbm_bw_Bps, Dimension::bandwidth, D::required(),
                "memory bandwidth; at least 10 GB/s (a sanity floor)")
      .quantity("nvlink_bandwidth", &GpuSpec::nvlink_bw_Bps, Dimension::bandwidth, D::required(),
                "NVLink bandwidth per GPU and direction (half the datasheet's bidirectional "
                "figure); the device profile's NVLink curve scales with it; at least 1 Gbps (a "
                "sanity floor)")
      .integer("sms", &GpuSpec::sms, Range{0, 100000}, D::value("0"),
               "streaming multiprocessors, for GEMM wave quantization; 0: the device profile's")
      .quantity("host_link_bandwidth", &GpuSpec::host_link_bw_Bps, Dimension::bandwidth,
                D::value("0GB/s"),
                "link between the GPU and its host's memory, per direction (PCIe Gen5 x16: "
                "64 GB/s; NVLink-C2C: 450 GB/s); what parallelism.offload_layers moves "
                "activations over; 0: not given")
      .quantity("host_memory", &GpuSpec::host_memory_bytes, Dimension::bytes, D::value("0GB"),
                "host memory a GPU may fill with offloaded activations (its node's over its "
                "GPUs); 0: not given")
      .boolean("host_link_carries_network", &GpuSpec::host_link_carries_network, D::value("false"),
               "the host link also carries the GPU's NIC traffic (PCIe: GPUDirect RDMA through "
               "its PCIe switch), shared with offload's copies; false on NVLink-C2C")
      .boolean("nvls", &GpuSpec::nvls, D::value("false"),
               "NVLink SHARP (NVLS): the NVSwitch reduces in the switch, so NCCL runs all-reduce "
               "inside a node as NVLS, faster than a ring; other collectives stay rings. Needs a "
               "profile whose curve was measured with NVLS")
      .text("profile", &GpuSpec::profile, D::derived("= preset"),
            "device profile whose achieved rates (efficiencies, curves) this GPU takes: a name "
            "in calibration/profiles/ (`myriad explain profiles`); a GPU without a profile of its "
            "own borrows one, and every report says so");
  return s;
}

Schema<TierSpec> make_tier_schema() {
  Schema<TierSpec> s(
      "One tier of switches in the fat tree, leaf first. A switch's ports split into "
      "down and up by the tier's oversubscription; the top tier's ports all point down.");
  s.text("name", &TierSpec::name, D::none(), "a label such as leaf, spine, core")
      .integer("radix", &TierSpec::radix, Range{2, 1 << 16}, D::required(), "ports per switch")
      .quantity("port_bandwidth", &TierSpec::port_bw_Bps, Dimension::bandwidth,
                D::derived("= cluster.nic_bandwidth / cluster.network.planes"),
                "bandwidth per switch port and direction; at least 1 Gbps (a sanity floor)")
      .quantity("oversubscription", &TierSpec::oversubscription, Dimension::ratio, D::value("1:1"),
                "downlink to uplink bandwidth of this tier's switches; 1:7 means 7 times more "
                "bandwidth down than up")
      .quantity("latency", &TierSpec::latency_s, Dimension::time, D::value("500ns"),
                "one hop through this tier: switch plus cable")
      .integer("uplinks_down", &TierSpec::uplinks_down, Range{0, 1 << 16}, D::value("0"),
               "up ports out of service on each switch of this tier (failed cables, or "
               "switches of the tier above: a spine down takes one up port from every leaf "
               "under it), as a what-if: each subtree's uplinks carry (up - uplinks_down) / up "
               "of their bandwidth, in both engines; taken on every switch, since a "
               "synchronous step goes at the pace of the subtree that lost them");
  return s;
}

Schema<NetworkSpec> make_network_schema() {
  Schema<NetworkSpec> s("The scale-out network between nodes: a multi-tier fat tree (Clos).");
  s.choice("topology", &NetworkSpec::topology, choices(kTopologyNames), D::value("fat_tree"),
           "how the tiers join the rails: fat_tree (the top tiers join every rail: a byte may "
           "change rail in the network) or rail_only (Wang et al., arXiv:2307.12169: no spine "
           "joins the rails, the tiers are each rail's own; a byte bound for another rail "
           "crosses NVLink to a GPU on that rail first, so an all-to-all's bytes that leave "
           "the node also cross NVLink, and a ring whose nodes hold its members on different "
           "rails pays an NVLink hop on each step across nodes). Needs rail_optimized")
      .boolean("pxn", &NetworkSpec::pxn, D::value("true"),
               "NCCL's PXN (NCCL_PXN_DISABLE=0 and NCCL_P2P_PXN_LEVEL=2, its defaults since "
               "2.12): an all-to-all's bytes to another node go over NVLink to the GPU of the "
               "sender's node on the destination's rail, whose NIC sends them, so they cross "
               "NVLink as well as the network; false (NCCL_PXN_DISABLE=1): each GPU sends on its "
               "own NIC and a byte changes rail in the switches. Rail-only fabrics need it")
      .boolean("rail_optimized", &NetworkSpec::rail_optimized, D::value("true"),
               "NIC i of every node attaches to rail i's leaf switches, so same-rank GPUs of "
               "different nodes are one hop apart")
      .integer("planes", &NetworkSpec::planes, Range{1, 16}, D::value("1"),
               "independent copies of these tiers (a multi-plane fabric): each NIC has one port "
               "on every plane, of nic_bandwidth / planes, so a leaf port serves planes times as "
               "many NIC ports (breakout) and fewer tiers join the cluster; flows spread over the "
               "planes (ECMP across them taken as perfect)")
      .integer("planes_down", &NetworkSpec::planes_down, Range{0, 15}, D::value("0"),
               "planes out of service (a failed plane, as a what-if; campaign's plane failures "
               "set it as they come and go): each NIC keeps (planes - planes_down) / planes of "
               "its bandwidth, the job runs on (multi-plane transports move flows off it)")
      .choice("in_network_reduction", &NetworkSpec::in_network_reduction,
              choices(kInNetworkReductionNames), D::value("none"),
              "reduction in the switches: sharp (InfiniBand SHARP, NCCL's CollNet with "
              "NCCL_COLLNET_ENABLE=1) sends each GPU's part of an all-reduce across nodes up "
              "the aggregation tree once and receives the sum once, about half a ring's bytes "
              "on each NIC; reduce-scatters use it where it is faster. Needs rail_optimized "
              "(one aggregation tree per rail)")
      .choice("sharp_trees", &NetworkSpec::sharp_trees, choices(kSharpTreesNames),
              D::derived("= per_switch with NICs of 200 Gbps or less (HDR), else per_port"),
              "sharp only: the switches run one streaming aggregation tree per_switch (Quantum, "
              "HDR) or per_port (Quantum-2 and later); communicators left without one run rings")
      .choice("load_balancing", &NetworkSpec::load_balancing, choices(kLoadBalancingNames),
              D::value("adaptive"),
              "how switches spread flows over their up ports: adaptive (InfiniBand's adaptive "
              "routing, packet spraying: as evenly as a fluid) or ecmp (each flow, a queue "
              "pair, hashed onto one up port at every tier it climbs, for its life: some ports "
              "carry more flows than others, and a synchronous step waits for the busiest; "
              "estimate prices the expectation over hashes and the spread; simulate refuses it)")
      .integer("qps_per_connection", &NetworkSpec::qps_per_connection, Range{1, 64}, D::value("1"),
               "NCCL_IB_QPS_PER_CONNECTION: queue pairs each connection splits its data over, "
               "each hashed on its own (more, smaller flows collide less); ecmp only")
      .choice("ecmp_hash", &NetworkSpec::ecmp_hash, choices(kEcmpHashNames), D::value("per_switch"),
              "ecmp only: per_switch, each switch seeds its hash with its own value (flows "
              "spread anew at every tier), or shared, every switch hashes alike, so a switch "
              "above the first tier, which sees only the flows one hash sent it, spreads them "
              "over its up ports over the greatest common divisor of its and the tier below's "
              "(hash polarization)")
      .section_list("tiers", &NetworkSpec::tiers, make_tier_schema(), D::required());
  return s;
}

Schema<ClusterSpec> make_cluster_schema() {
  Schema<ClusterSpec> s(
      "The cluster: nodes of GPUs with NVLink, NICs, and the network. Start from a preset "
      "in scenarios/clusters/ with `preset:` and override keys.");
  s.text("preset", &ClusterSpec::preset, D::none(), "cluster preset in scenarios/clusters/")
      .text("name", &ClusterSpec::name, D::none(), "a label for reports")
      .text("source", &ClusterSpec::source, D::none(), "what the cluster is modelled on")
      .section("gpu", &ClusterSpec::gpu, gpu_schema(), D::required())
      .integer("gpus", &ClusterSpec::gpus, kPositive, D::required(), "GPUs in the cluster")
      .integer("gpus_per_node", &ClusterSpec::gpus_per_node, Range{1, 1024}, D::value("8"),
               "GPUs in one NVLink domain (node)")
      .quantity("nvlink_latency", &ClusterSpec::nvlink_latency_s, Dimension::time, D::value("1us"),
                "latency of one NVLink transfer through the NVSwitch")
      .integer("nics_per_node", &ClusterSpec::nics_per_node, Range{1, 1024}, D::required(),
               "scale-out NICs per node (rails)")
      .quantity("nic_bandwidth", &ClusterSpec::nic_bw_Bps, Dimension::bandwidth, D::required(),
                "bandwidth of one NIC per direction; at least 1 Gbps (a sanity floor)")
      .quantity("nic_latency", &ClusterSpec::nic_latency_s, Dimension::time, D::value("2us"),
                "NIC and host software latency of one message")
      .quantity("price_per_gpu_hour", &ClusterSpec::price_per_gpu_hour, Dimension::count,
                D::value("0"),
                "what one GPU-hour costs, in US dollars (0: not given); reports, sweeps and "
                "plans turn GPU-hours into cost with it")
      .section("network", &ClusterSpec::network, make_network_schema(), D::required());
  return s;
}

Schema<PruneSpec> make_prune_schema() {
  Schema<PruneSpec> s(
      "A pruning what-if on the experts (MoE-Pruner and its kin): whole experts removed, or "
      "each remaining expert's weights sparsified. Memory and expert GEMM time follow; the "
      "all-to-alls carry the same tokens.");
  s.integer("experts", &PruneSpec::experts, Range{0, 1 << 20}, D::value("0"),
            "experts removed from every MoE layer (their tokens go to the others)")
      .quantity("sparsity", &PruneSpec::sparsity, Dimension::fraction,
                D::derived("= 0.5 for 2:4, else 0"),
                "fraction of each remaining expert's weights zeroed")
      .choice("pattern", &PruneSpec::pattern,
              {{"none", Sparsity::none},
               {"unstructured", Sparsity::unstructured},
               {"2:4", Sparsity::two_four}},
              D::value("none"),
              "where the zeros fall: unstructured (any weight, as MoE-Pruner guided by router "
              "weights) or 2:4 (two of every four, run on sparse tensor cores)")
      .boolean("sparse_kernel", &PruneSpec::sparse_kernel, D::value("false"),
               "unstructured sparsity runs on a sparse GEMM kernel (at the profile's "
               "sparse_gemm_efficiency of the dense work kept) and weights are stored "
               "compressed; false: dense kernels and dense storage");
  return s;
}

Schema<MoeSpec> make_moe_schema() {
  Schema<MoeSpec> s(
      "Mixture of experts in the layers' MLPs (every layer's unless first_dense_layers or every "
      "says otherwise); leave out for a dense model.");
  s.integer("experts", &MoeSpec::experts, Range{0, 1 << 20}, D::value("0"),
            "experts per MoE layer; 0 for a dense model")
      .integer("top_k", &MoeSpec::top_k, Range{1, 1 << 10}, D::value("1"),
               "experts each token is routed to")
      .integer("expert_ffn_hidden", &MoeSpec::expert_ffn_hidden, kPositive,
               D::derived("= model.ffn_hidden"),
               "FFN hidden size of one expert (fine-grained experts: many small ones)")
      .integer("shared_experts", &MoeSpec::shared_experts, Range{0, 1 << 10}, D::value("0"),
               "experts every token goes through besides its top_k (DeepSeek-style), split "
               "over the expert tensor-parallel ranks like the dense MLP")
      .integer("shared_expert_ffn_hidden", &MoeSpec::shared_expert_ffn_hidden, kPositive,
               D::derived("= expert_ffn_hidden"), "FFN hidden size of one shared expert")
      .quantity("capacity_factor", &MoeSpec::capacity_factor, Dimension::count, D::value("0"),
                "tokens an expert accepts relative to an even share; the rest are dropped and "
                "every expert's input is padded to it (Megatron-LM's "
                "--moe-expert-capacity-factor with --moe-pad-expert-input-to-capacity); 0: "
                "dropless, every routed token computed; else at least experts / (top_k x "
                "micro_batch x seq_length), below which an expert holds no token")
      .choice("skew", &MoeSpec::skew,
              {{"uniform", RouterSkew::uniform},
               {"zipf", RouterSkew::zipf},
               {"histogram", RouterSkew::histogram}},
              D::value("uniform"),
              "how the router spreads tokens over the experts: evenly, Zipf-distributed over "
              "expert index (experts placed in index order, so the hottest share a rank), or a "
              "measured histogram; the most loaded expert-parallel rank sets the layer's time "
              "and the all-to-all-v sizes")
      .quantity("zipf_exponent", &MoeSpec::zipf_exponent, Dimension::count, D::value("1"),
                "skew: zipf: expert e (from 0) gets a share proportional to 1 / (e + 1)^this")
      .number_list("histogram", &MoeSpec::histogram, D::none(),
                   "skew: histogram: each expert's share of the routed tokens, in expert order "
                   "(normalized to sum to 1)")
      .choice("dispatch", &MoeSpec::dispatch,
              {{"auto", MoeDispatch::automatic},
               {"all-to-all", MoeDispatch::all_to_all},
               {"all-gather", MoeDispatch::all_gather}},
              D::value("auto"),
              "how tokens reach the expert-parallel ranks: all-to-all of each token to its "
              "experts' ranks, or all-gather of every token and reduce-scatter of the outputs "
              "(cheaper when top_k is large next to ep); auto picks the fewer bytes")
      .integer("first_dense_layers", &MoeSpec::first_dense_layers, Range{0, 1 << 20}, D::value("0"),
               "the first layers keep a dense MLP of model.ffn_hidden (DeepSeek-V3: 3, its "
               "first_k_dense_replace); MoE layers follow")
      .integer("every", &MoeSpec::every, Range{1, 1 << 10}, D::value("1"),
               "past first_dense_layers, every this-many-th layer is an MoE layer and the others "
               "dense (Llama 4 Maverick: 2, layers 1, 3, 5, ... from 0)")
      .integer("max_nodes_per_token", &MoeSpec::max_nodes_per_token, Range{0, 1 << 16},
               D::value("0"),
               "node-limited routing (DeepSeek-V3: 4): each token's experts lie on at most this "
               "many nodes, and it crosses the network once a node it reaches, then NVLink "
               "forwards it to its experts' GPUs (two-hop dispatch and combine, the two hops "
               "overlapped); 0: every copy sent on its own")
      .section("prune", &MoeSpec::prune, make_prune_schema());
  return s;
}

Schema<MlaSpec> make_mla_schema() {
  Schema<MlaSpec> s(
      "Multi-head latent attention (DeepSeek-V2/V3): keys and values up-projected from one "
      "compressed latent, queries from another; leave out for multi-head or grouped-query "
      "attention. With it, head_dim is qk_nope_head_dim + qk_rope_head_dim and kv_heads is "
      "heads.");
  s.integer("q_lora_rank", &MlaSpec::q_lora_rank, Range{0, 1 << 20}, D::value("0"),
            "the queries' compressed latent (DeepSeek-V3: 1536); 0: queries projected from the "
            "hidden state")
      .integer("kv_lora_rank", &MlaSpec::kv_lora_rank, Range{0, 1 << 20}, D::value("0"),
               "the keys' and values' compressed latent (DeepSeek-V3: 512); 0: no MLA")
      .integer("qk_nope_head_dim", &MlaSpec::qk_nope_head_dim, Range{0, 1 << 16}, D::value("0"),
               "each head's query and key width without position (DeepSeek-V3: 128)")
      .integer("qk_rope_head_dim", &MlaSpec::qk_rope_head_dim, Range{0, 1 << 16}, D::value("0"),
               "each head's decoupled RoPE width, the key's part shared by the heads "
               "(DeepSeek-V3: 64)")
      .integer("v_head_dim", &MlaSpec::v_head_dim, Range{0, 1 << 16}, D::value("0"),
               "each head's value width (DeepSeek-V3: 128)");
  return s;
}

Schema<ModelSpec> make_model_schema() {
  Schema<ModelSpec> s(
      "The transformer. Start from a preset in scenarios/models/ with `preset:` and override "
      "keys.");
  s.text("preset", &ModelSpec::preset, D::none(), "model preset in scenarios/models/")
      .text("name", &ModelSpec::name, D::none(), "a label for reports")
      .text("source", &ModelSpec::source, D::none(), "where the architecture is published")
      .integer("layers", &ModelSpec::layers, kPositive, D::required(), "transformer layers")
      .integer("hidden", &ModelSpec::hidden, kPositive, D::required(), "hidden size")
      .integer("heads", &ModelSpec::heads, kPositive, D::required(), "attention (query) heads")
      .integer("kv_heads", &ModelSpec::kv_heads, kPositive, D::derived("= heads"),
               "key/value heads; fewer than heads is grouped-query attention")
      .integer("head_dim", &ModelSpec::head_dim, kPositive, D::derived("= hidden / heads"),
               "each attention head's width; heads x head_dim need not be the hidden size "
               "(Qwen3-4B: 32 heads of 128 on a hidden size of 2,560)")
      .integer("ffn_hidden", &ModelSpec::ffn_hidden, kPositive,
               D::derived("= 4 * hidden for gelu and relu; 8/3 * hidden rounded down to a "
                          "multiple of 64 for swiglu"),
               "MLP hidden size")
      .choice(
          "activation", &ModelSpec::activation,
          {{"gelu", Activation::gelu}, {"swiglu", Activation::swiglu}, {"relu", Activation::relu}},
          D::value("gelu"), "MLP activation; swiglu has three weight matrices")
      .choice("norm", &ModelSpec::norm,
              {{"layernorm", Norm::layernorm}, {"rmsnorm", Norm::rmsnorm}}, D::value("layernorm"),
              "normalization layer")
      .integer("vocab", &ModelSpec::vocab, kPositive, D::required(), "vocabulary size")
      .integer("seq_length", &ModelSpec::seq_length, kPositive, D::required(),
               "tokens per sequence")
      .integer("sliding_window", &ModelSpec::sliding_window, Range{0, 1 << 30}, D::value("0"),
               "attention window in tokens (sliding-window attention); 0 for full attention")
      .integer("full_attention_every", &ModelSpec::full_attention_every, Range{0, 1 << 20},
               D::value("0"),
               "with sliding_window: every this-many-th layer (layers n-1, 2n-1, ... from 0) "
               "attends over the whole sequence and the others in the window, as Hugging "
               "Face's sliding_window_pattern (GPT-OSS 2: windowed and full alternate, the "
               "first windowed; Gemma 3 6); 0 for the window on every layer")
      .boolean("parallel_block", &ModelSpec::parallel_block, D::value("false"),
               "attention and MLP read the same input and their outputs are summed")
      .boolean("tied_embeddings", &ModelSpec::tied_embeddings, D::value("false"),
               "the LM head shares the embedding's weights")
      .quantity("dropout", &ModelSpec::dropout, Dimension::fraction, D::value("0.1"),
                "hidden and attention dropout probability (Megatron-LM's default); above 0 "
                "each dropout stores a 1-byte mask an element for backward, at 0 (Llama 3, "
                "Mixtral, DeepSeek-V3, Qwen3) there are no masks and no dropout kernels")
      .integer("mtp_depth", &ModelSpec::mtp_depth, Range{0, 64}, D::value("0"),
               "multi-token prediction modules (DeepSeek-V3: 1), each predicting one more "
               "token with its own transformer block, a projection and the shared embedding "
               "and LM head, on the last pipeline stage")
      .section("moe", &ModelSpec::moe, make_moe_schema())
      .section("mla", &ModelSpec::mla, make_mla_schema());
  return s;
}

// The keys that trade memory for time: recomputation and activation offload.
void add_memory_keys(Schema<ParallelSpec>& s) {
  s.choice("recompute", &ParallelSpec::recompute, choices(kRecomputeNames), D::value("none"),
           "activation recomputation: selective recomputes attention's core, full whole "
           "layers")
      .integer("recompute_layers", &ParallelSpec::recompute_layers, Range{0, 1 << 20},
               D::value("0"),
               "with recompute: full, how many of each model chunk's layers are recomputed "
               "(the first ones; the rest keep their activations, as with recompute none): "
               "Megatron-LM's --recompute-method block --recompute-num-layers; 0: every layer")
      .integer("offload_layers", &ParallelSpec::offload_layers, Range{0, 1 << 20}, D::value("0"),
               "activation offload: the first N layers' activations go to host memory during "
               "forward and come back for backward, beside the compute (Megatron-LM's "
               "--cpu-offloading-num-layers, Transformer Engine's CPU offload); with pp 1 and "
               "no recomputation, as Megatron-LM runs it; at most layers - 1")
      .choice_list("offload_modules", &ParallelSpec::offload_modules, choices(kOffloadModuleNames),
                   D::none(),
                   "fine-grained activation offload: what these modules keep for backward goes "
                   "to host memory after their forward in every layer and comes back one module "
                   "ahead in backward, beside the compute (Megatron-Core's "
                   "--fine-grained-activation-offloading --offload-modules); any pipeline")
      .boolean("recompute_norms_and_up", &ParallelSpec::recompute_norms_and_up, D::value("false"),
               "with recompute none: every norm (and with multi-head latent attention its "
               "up-projections) runs again in backward instead of keeping its output "
               "(Megatron-LM's recompute module layernorm; DeepSeek-V3 s3.2.3)")
      .boolean("recompute_moe_act", &ParallelSpec::recompute_moe_act, D::value("false"),
               "with experts and without full recomputation: the routed experts' activation "
               "runs again in backward from its input instead of keeping its output (the fc2 "
               "input): Megatron-LM's recompute module moe_act; under fp8 with the blockwise "
               "recipe the input is kept in fp8 (DeepSeek-V3 s3.3.3)");
}

Schema<ParallelSpec> make_parallel_schema() {
  Schema<ParallelSpec> s("How the job is split over the GPUs: gpus = tp * pp * cp * dp.");
  s.integer("tp", &ParallelSpec::tp, kPositive, D::value("1"), "tensor-parallel degree")
      .boolean("sp", &ParallelSpec::sp, D::value("false"),
               "sequence parallelism in the tensor-parallel group (norms and dropout split by "
               "sequence; all-reduce becomes reduce-scatter + all-gather)")
      .integer("pp", &ParallelSpec::pp, kPositive, D::value("1"), "pipeline stages")
      .integer("virtual_stages", &ParallelSpec::virtual_stages, kPositive, D::value("1"),
               "model chunks per pipeline stage (interleaved schedule)")
      .integer("first_stage_layers", &ParallelSpec::first_stage_layers, Range{0, 1 << 20},
               D::value("0"),
               "layers of the first pipeline stage, which also runs the embedding; 0: an even "
               "share (Megatron-LM's --decoder-first-pipeline-num-layers)")
      .integer("last_stage_layers", &ParallelSpec::last_stage_layers, Range{0, 1 << 20},
               D::value("0"),
               "layers of the last pipeline stage, which also runs the LM head and loss; 0: an "
               "even share; the stages between share the other layers evenly (with "
               "interleaving, every stage's layers a multiple of virtual_stages)")
      .integer_list("stage_layers", &ParallelSpec::stage_layers, Range{1, 1 << 20}, D::none(),
                    "every pipeline stage's layers, first to last, summing to model.layers "
                    "(each a multiple of virtual_stages): a placement, such as `myriad place` "
                    "writes; in place of first_stage_layers and last_stage_layers")
      .boolean("embedding_as_layer", &ParallelSpec::embedding_as_layer, D::value("false"),
               "the embedding takes a layer's place in the first model chunk, and the layers "
               "with it split evenly over pp * virtual_stages chunks (Megatron-LM's "
               "--account-for-embedding-in-pipeline-split)")
      .boolean("loss_as_layer", &ParallelSpec::loss_as_layer, D::value("false"),
               "the LM head and loss take a layer's place in the last model chunk (Megatron-LM's "
               "--account-for-loss-in-pipeline-split)")
      .text("pipeline_layout", &ParallelSpec::pipeline_layout, D::none(),
            "every model chunk's contents in the model's order, as Megatron-Core's "
            "--pipeline-model-parallel-layout writes them: E the embedding, t a transformer "
            "layer, m an MTP block, L the LM head and loss, | between chunks, (...)*N and X*N "
            "repeats (DeepSeek-V3 on pp 8 x virtual_stages 4: \"Et|(tt|)*30mL\"); chunk i "
            "runs on stage i mod pp; in place of the other uneven-stage keys")
      .choice("schedule", &ParallelSpec::schedule,
              {{"1f1b", Schedule::one_f_one_b},
               {"interleaved", Schedule::interleaved},
               {"zb-h1", Schedule::zb_h1},
               {"dualpipe", Schedule::dualpipe},
               {"combined-1f1b", Schedule::combined_1f1b}},
              D::derived("= interleaved when virtual_stages > 1, else 1f1b"),
              "pipeline schedule: 1f1b, interleaved (virtual_stages > 1), or zb-h1 (zero-bubble: "
              "each backward split into input and weight gradients, the weight gradients filling "
              "the bubble; one chunk a stage), or dualpipe (DeepSeek-V3's bidirectional "
              "pipeline: two chunks a stage, one per direction, each forward overlapped with "
              "the other direction's backward; pp even, an even number of micro-batches, at "
              "least 2 pp), or combined-1f1b (Megatron-Core's --overlap-moe-expert-parallel-comm: "
              "1F1B, interleaved when pp > 1, with one more warm-up forward, and every "
              "steady-state forward run together with the backward after it, one's expert "
              "all-to-alls behind the other's compute; an MoE model with ep > 1)")
      .integer("dp", &ParallelSpec::dp, kPositive, D::derived("= gpus / (tp * pp * cp)"),
               "data-parallel replicas")
      .integer("zero", &ParallelSpec::zero, Range{0, 3}, D::value("0"),
               "ZeRO stage: 1 shards optimizer states, 2 also gradients, 3 also parameters")
      .integer("cp", &ParallelSpec::cp, kPositive, D::value("1"), "context-parallel degree")
      .integer("ep", &ParallelSpec::ep, kPositive, D::value("1"),
               "expert-parallel degree, drawn from the tp * cp * dp ranks of a stage (after "
               "etp: expert tensor-parallel ranks innermost, then expert-parallel, then expert "
               "data-parallel, as Megatron-LM)")
      .integer("etp", &ParallelSpec::etp, kPositive, D::derived("= tp"),
               "tensor-parallel degree of the experts: tp (each expert split like the dense "
               "MLP) or 1 (whole experts, tokens split over the tp ranks by sequence; needs sp)")
      .integer("micro_batch", &ParallelSpec::micro_batch, kPositive, D::value("1"),
               "sequences per micro-batch")
      .integer("global_batch", &ParallelSpec::global_batch, kPositive, D::required(),
               "sequences per optimizer step");
  add_memory_keys(s);
  s.boolean("delay_wgrad_compute", &ParallelSpec::delay_wgrad_compute, D::value("false"),
            "with schedule combined-1f1b: each layer's weight-gradient GEMMs run after its "
            "input gradients', the experts' beside the backward's dispatch all-to-all and "
            "the attention's beside the next layer's combine (Megatron-Core's "
            "--delay-wgrad-compute, which Megatron-Bridge turns on with moe_a2a_overlap)")
      .choice("placement", &ParallelSpec::placement, choices(kRankOrderNames),
              D::value("tp-cp-dp-pp"),
              "the order ranks are laid out in, fastest first, nodes taking consecutive ranks: "
              "Megatron-LM's (a stage's replicas side by side) or with a replica's pipeline "
              "stages side by side");
  return s;
}

Schema<OverlapSpec> make_overlap_schema() {
  Schema<OverlapSpec> s("Communication hidden behind computation, per parallelism.");
  s.boolean("tp", &OverlapSpec::tp, D::value("false"),
            "tensor-parallel collectives chunked and overlapped with the GEMMs")
      .boolean("cp", &OverlapSpec::cp, D::value("false"),
               "context-parallel collectives (key/value all-gathers, their gradients' "
               "reduce-scatters) overlapped with the GEMMs")
      .boolean("ep", &OverlapSpec::ep, D::value("false"),
               "expert-parallel all-to-alls overlapped with the GEMMs (inter-operator: micro-batch "
               "or chunk interleaving)")
      .boolean("fused", &OverlapSpec::fused, D::value("false"),
               "intra-operator overlap: tp and ep collectives fused with the GEMM beside them, "
               "tile by tile (Flux, Comet, MegaScale-MoE): only one tile's share stays exposed, "
               "with or without the inter-operator keys")
      .boolean("pp", &OverlapSpec::pp, D::value("false"),
               "pipeline sends and receives asynchronous to compute")
      .boolean("dp", &OverlapSpec::dp, D::value("false"),
               "gradients reduced bucket by bucket during the last backward, parameters gathered "
               "bucket by bucket ahead of the first forward (as Megatron-LM, any schedule)");
  return s;
}

Schema<GrowthSpec> make_growth_schema() {
  Schema<GrowthSpec> s(
      "A what-if: the model grown from a smaller one trained first (multi-linear operator "
      "growth, Mango). Days, GPU-hours and cost then include the small model's training and "
      "only (1 - saved_fraction) of the model's own; all four keys or none.");
  s.text("from", &GrowthSpec::from, D::none(),
         "the small model grown from: a model preset (see `myriad explain presets`)")
      .quantity("tokens", &GrowthSpec::tokens, Dimension::count, D::none(),
                "tokens the small model is trained on before growing")
      .quantity("saved_fraction", &GrowthSpec::saved_fraction, Dimension::fraction, D::none(),
                "share of the model's own training compute that growing saves to reach the same "
                "loss, below 1")
      .text("source", &GrowthSpec::source, D::none(),
            "where saved_fraction comes from: a paper and its figure, or a run of one's own");
  return s;
}

Schema<TrainingSpec> make_training_schema() {
  Schema<TrainingSpec> s("What the job trains for and how.");
  s.quantity("tokens", &TrainingSpec::tokens, Dimension::count, D::value("300B"),
             "tokens to train on (for days-to-train)")
      .choice("optimizer", &TrainingSpec::optimizer,
              {{"adam", Optimizer::adam},
               {"adamw", Optimizer::adamw},
               {"lamb", Optimizer::lamb},
               {"lion", Optimizer::lion},
               {"sgd", Optimizer::sgd}},
              D::value("adamw"), "optimizer; lamb permits larger batches")
      .choice("precision", &TrainingSpec::precision,
              {{"bf16", Precision::bf16}, {"fp16", Precision::fp16}, {"fp8", Precision::fp8}},
              D::value("bf16"), "GEMM precision; master weights and optimizer states are fp32")
      .choice("fp8_recipe", &TrainingSpec::fp8_recipe,
              {{"delayed", Fp8Recipe::delayed},
               {"current", Fp8Recipe::current},
               {"blockwise", Fp8Recipe::blockwise}},
              D::value("delayed"),
              "how fp8 GEMM inputs are scaled (Transformer Engine's recipes): delayed, from "
              "earlier steps' amax (one read a cast); current, per tensor from its own amax "
              "(a second read); blockwise, per 1 x 128 and 128 x 128 block (one read, scales "
              "written); current and blockwise only with precision fp8")
      .boolean("fused_kernels", &TrainingSpec::fused_kernels, D::value("true"),
               "FlashAttention (no score matrix in memory, causal work only) and fused "
               "norm and activation kernels; false for unfused attention as Megatron-LM ran "
               "it before FlashAttention")
      .choice("all_to_all_precision", &TrainingSpec::all_to_all_precision,
              {{"bf16", WirePrecision::bf16}, {"fp8", WirePrecision::fp8}}, D::value("bf16"),
              "what expert dispatch and combine carry (all-to-alls, or all-gather and "
              "reduce-scatter): fp8 halves their bytes for a quantize kernel before and a "
              "dequantize after (communication compression)")
      .choice("combine_precision", &TrainingSpec::combine_precision,
              {{"bf16", WirePrecision::bf16}, {"fp8", WirePrecision::fp8}},
              D::derived("= all_to_all_precision"),
              "what the expert combine carries where it differs from the dispatch: DeepSeek-V3 "
              "dispatches in fp8 and combines in bf16 (s3.3.3), its backward likewise (the "
              "gradients dispatched to the experts in fp8, combined back in bf16)")
      .choice("gradient_precision", &TrainingSpec::gradient_precision,
              {{"fp32", WirePrecision::fp32}, {"bf16", WirePrecision::bf16}},
              D::derived("= fp32 for bf16, bf16 for fp16 and fp8"),
              "what data-parallel gradient reductions carry and the gradient buffer holds "
              "(Megatron-LM's grad_reduce_in_fp32): bf16 halves a bf16 model's (MegaScale-MoE's "
              "compression)")
      .choice("optimizer_moments", &TrainingSpec::optimizer_moments,
              {{"fp32", WirePrecision::fp32}, {"bf16", WirePrecision::bf16}}, D::value("fp32"),
              "what the optimizer's moments are kept in beside the fp32 master weights: bf16 "
              "halves them (DeepSeek-V3 s3.3.2; Megatron-LM's --use-precision-aware-optimizer "
              "with --exp-avg-dtype and --exp-avg-sq-dtype bf16), in memory, checkpoints and "
              "the optimizer step's traffic")
      .section("growth", &TrainingSpec::growth, make_growth_schema());
  return s;
}

Schema<SweepAxisSpec> make_sweep_axis_schema() {
  Schema<SweepAxisSpec> s("One axis of a sweep: a key and its values.");
  s.text("key", &SweepAxisSpec::key, D::required(),
         "the scenario key the axis varies, such as parallelism.tp or cluster.gpus")
      .text("values", &SweepAxisSpec::values, D::required(),
            "its values as `myriad sweep --vary` takes them: a list (4,8), an arithmetic range "
            "(1..4:2) or a geometric one (1024..8192*2)");
  return s;
}

Schema<SweepSpec> make_sweep_schema() {
  Schema<SweepSpec> s(
      "What `myriad sweep` varies over this scenario, when the command line gives no --vary; "
      "the other verbs ignore it.");
  s.section_list("axes", &SweepSpec::axes, make_sweep_axis_schema(), D::none())
      .boolean("zip", &SweepSpec::zip, D::value("false"),
               "advance every axis together (equal lengths) instead of their cartesian product")
      .text("pareto", &SweepSpec::pareto, D::none(),
            "the objectives of the Pareto front, as --pareto takes them: days,cost");
  return s;
}

Schema<Scenario> make_scenario_schema() {
  Schema<Scenario> s("A training job on a cluster.");
  s.text("name", &Scenario::name, D::none(), "a label for reports")
      .text("description", &Scenario::description, D::none(), "what the scenario is for")
      .section("cluster", &Scenario::cluster, cluster_schema(), D::required())
      .section("model", &Scenario::model, model_schema(), D::required())
      .section("parallelism", &Scenario::parallelism, make_parallel_schema(), D::required())
      .section("overlap", &Scenario::overlap, make_overlap_schema())
      .section("training", &Scenario::training, make_training_schema())
      .section("faults", &Scenario::faults, faults_schema())
      .section_list("policies", &Scenario::policies, policy_schema(),
                    D::derived("one policy set of defaults"))
      .section("sweep", &Scenario::sweep, make_sweep_schema())
      .integer64("seed", &Scenario::seed, D::value("1"),
                 "seed of every random process; same seed, same results");
  return s;
}

}  // namespace

const Schema<GpuSpec>& gpu_schema() {
  static const Schema<GpuSpec> s = make_gpu_schema();
  return s;
}

const Schema<ClusterSpec>& cluster_schema() {
  static const Schema<ClusterSpec> s = make_cluster_schema();
  return s;
}

const Schema<ModelSpec>& model_schema() {
  static const Schema<ModelSpec> s = make_model_schema();
  return s;
}

const Schema<Scenario>& scenario_schema() {
  static const Schema<Scenario> s = make_scenario_schema();
  return s;
}

SectionDoc scenario_doc() { return scenario_schema().doc(""); }

}  // namespace myriad::models::scenario
