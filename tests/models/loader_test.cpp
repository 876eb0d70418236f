#include "models/scenario/loader.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "models/scenario/reliability_checks.hpp"
#include "models/scenario/scenario_schema.hpp"
#include "myriad_source_paths.hpp"

namespace myriad::models::scenario {
namespace {

const LoadOptions kShipped{{MYRIAD_SCENARIO_DIR}};

std::string examples(const std::string& name) {
  return std::string(MYRIAD_SCENARIO_DIR) + "/examples/" + name;
}

Scenario load_text(const std::string& text) {
  return load_scenario_text(text, "inline.yaml", kShipped);
}

TEST(Loader, DefaultExampleResolvesPresetsAndDerives) {
  const Scenario s = load_scenario(examples("gpt3-175b-megascale-12288.yaml"), kShipped);
  EXPECT_EQ(s.cluster.gpus, 12288);
  EXPECT_EQ(s.cluster.nodes(), 1536);
  EXPECT_EQ(s.cluster.gpu.name, "A100-SXM4-80GB");
  EXPECT_EQ(s.cluster.gpu.bf16_flops, 312e12);
  EXPECT_EQ(s.cluster.nic_bw_Bps, 25e9);
  ASSERT_EQ(s.cluster.network.tiers.size(), 3u);
  EXPECT_EQ(s.cluster.network.tiers[0].port_bw_Bps, 50e9);
  // The MegaScale variant overrides heads and vocab of the Megatron one it builds on.
  EXPECT_EQ(s.model.heads, 128);
  EXPECT_EQ(s.model.vocab, 64000);
  EXPECT_EQ(s.model.layers, 96);
  EXPECT_EQ(s.model.kv_heads, 128);
  EXPECT_EQ(s.model.ffn_hidden, 4 * 12288);
  EXPECT_EQ(s.parallelism.dp, 192);
  EXPECT_EQ(s.parallelism.schedule, Schedule::interleaved);
  EXPECT_EQ(s.parallelism.micro_batches(), 32);
  EXPECT_EQ(s.training.tokens, 300e9);
  EXPECT_TRUE(s.warnings.empty());
}

TEST(Loader, EveryExampleLoads) {
  int n = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(MYRIAD_SCENARIO_DIR) + "/examples")) {
    SCOPED_TRACE(e.path().string());
    EXPECT_NO_THROW(load_scenario(e.path().string(), kShipped));
    ++n;
  }
  EXPECT_GE(n, 5);
}

TEST(Loader, EveryPresetChecksOnItsOwn) {
  const PresetLibrary library(kShipped.preset_path);
  for (auto kind : {PresetKind::hardware, PresetKind::clusters, PresetKind::models}) {
    const auto names = library.names(kind);
    EXPECT_FALSE(names.empty());
    for (const auto& name : names) {
      const Diagnostics d = check_preset(kind, name, kShipped);
      EXPECT_FALSE(d.has_errors()) << name << ":\n" << d.str();
    }
  }
}

TEST(Loader, ShippedPresetsCoverTheIssueList) {
  const PresetLibrary library(kShipped.preset_path);
  for (const char* n : {"A100-80GB", "H100", "H800", "H200"}) {
    EXPECT_TRUE(library.find(PresetKind::hardware, n)) << n;
  }
  for (const char* n :
       {"selene-like", "megascale-like", "llama3-like", "gb200-nvl72", "h100-multiplane-131k",
        "gb200-nvl72-110k", "h100-two-buildings-131k", "h100-rail-only-32k"}) {
    EXPECT_TRUE(library.find(PresetKind::clusters, n)) << n;
  }
  for (const char* n : {"gpt3-175b-megatron", "gpt3-175b-megascale", "megatron-22b",
                        "megatron-530b", "megatron-1t", "llama3-8b", "llama3-70b", "llama3-405b",
                        "mixtral-8x7b", "mixtral-8x22b", "megascale-moe-352b"}) {
    EXPECT_TRUE(library.find(PresetKind::models, n)) << n;
  }
}

// Issue 40's 100k-GPU presets: four planes of 100G ports on 512-port switches
// (51.2 Tb/s) join every NIC in two tiers, 256 leaf ports down x 512 spine
// ports = 131,072 a plane; the same switches as 128 ports of 400G on one plane
// join 64 x 128 = 8,192 in two tiers, too few.
TEST(Loader, MultiPlanePresetsJoinTheirGpusInTwoTiers) {
  for (const char* name : {"h100-multiplane-131k", "gb200-nvl72-110k"}) {
    SCOPED_TRACE(name);
    const Scenario s = load_scenario_text(std::string("cluster: {preset: ") + name +
                                              "}\nmodel: {preset: llama3-8b}\n"
                                              "parallelism: {tp: 8, global_batch: 442368}\n",
                                          "presets.yaml", kShipped);
    const auto& c = s.cluster;
    EXPECT_EQ(c.network.planes, 4);
    EXPECT_EQ(c.network.tiers.size(), 2U);
    EXPECT_DOUBLE_EQ(nic_port_bw(c), 100e9 / 8);
    const double nics = static_cast<double>(c.nodes()) * c.nics_per_node;
    EXPECT_GE(network_endpoint_capacity(c.network, nic_port_bw(c)), nics);
    EXPECT_EQ(network_endpoint_capacity(c.network, nic_port_bw(c)), 131072.0);
    NetworkSpec one_plane = c.network;
    one_plane.planes = 1;
    for (auto& t : one_plane.tiers) {
      t.radix = 128;
      t.port_bw_Bps = 400e9 / 8;
    }
    EXPECT_LT(network_endpoint_capacity(one_plane, c.nic_bw_Bps), nics);
  }
}

TEST(Loader, PresetNamesCannotEscapeTheirFolder) {
  const PresetLibrary library(kShipped.preset_path);
  EXPECT_FALSE(library.find(PresetKind::models, "../examples/gpt3-175b-megascale-12288"));
  EXPECT_FALSE(library.find(PresetKind::models, ""));
}

constexpr const char* kSmall = R"(
cluster: {preset: selene-like, gpus: 64}
model: {preset: gpt3-175b-megatron}
parallelism: {tp: 8, pp: 8, global_batch: 64}
)";

TEST(Loader, LocalKeysOverridePresetKeys) {
  const Scenario s = load_text(std::string(kSmall) + "overlap: {tp: true}\n");
  EXPECT_EQ(s.cluster.gpus, 64);
  EXPECT_EQ(s.origins.at("cluster.gpus").str(), "inline.yaml:2:38");
  EXPECT_NE(s.origins.at("cluster.nic_bandwidth").file.find("selene-like.yaml"), std::string::npos);
  EXPECT_TRUE(s.overlap.tp);
}

TEST(Loader, ANewGpuPresetReplacesTheClustersGpuWhole) {
  const Scenario s = load_text(R"(
cluster: {preset: llama3-like, gpu: H200, gpus: 64}
model: {preset: llama3-8b}
parallelism: {tp: 8, global_batch: 64}
)");
  EXPECT_EQ(s.cluster.gpu.name, "H200-SXM");
  EXPECT_EQ(s.cluster.gpu.hbm_bytes, 143771.0 * 1024 * 1024);  // as CUDA reports it
}

TEST(Loader, GpuKeysOverrideTheirPreset) {
  const Scenario s = load_text(R"(
cluster:
  preset: llama3-like
  gpu: {preset: H100, hbm_capacity: 94GB}
  gpus: 64
model: {preset: llama3-8b}
parallelism: {tp: 8, global_batch: 64}
)");
  EXPECT_EQ(s.cluster.gpu.name, "H100-SXM5-80GB");
  EXPECT_EQ(s.cluster.gpu.hbm_bytes, 94e9);
  EXPECT_EQ(s.cluster.gpu.bf16_flops, 989e12);
}

TEST(Loader, SwigluFfnSizeIsDerivedAsMegatronDoes) {
  const Scenario s = load_text(R"(
cluster: {preset: selene-like, gpus: 8}
model: {layers: 2, hidden: 4096, heads: 32, activation: swiglu, vocab: 1000, seq_length: 1024}
parallelism: {tp: 8, global_batch: 8}
)");
  EXPECT_EQ(s.model.ffn_hidden, 10880);  // int(8 * 4096 / 3 / 64) * 64
  EXPECT_EQ(s.origins.at("model.ffn_hidden").str(), "<derived>");
}

TEST(Loader, DubiousButPossibleChoicesAreWarnings) {
  const Scenario s = load_text(R"(
cluster: {preset: selene-like, gpus: 8}
model: {preset: megatron-22b}
parallelism: {tp: 8, sp: true, zero: 1, global_batch: 4, micro_batch: 4}
overlap: {pp: true}
)");
  ASSERT_EQ(s.warnings.size(), 2u);
  EXPECT_EQ(s.warnings[0].key, "parallelism.zero");
  EXPECT_EQ(s.warnings[1].key, "overlap.pp");
}

TEST(Loader, ResolvedOutputLoadsBackToTheSameScenario) {
  // Every example, dense and MoE (a dense model's MoE keys derived from absent
  // experts once resolved to an invalid 0: the fuzzer found it).
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(MYRIAD_SCENARIO_DIR) + "/examples")) {
    SCOPED_TRACE(e.path().string());
    const Scenario first = load_scenario(e.path().string(), kShipped);
    const std::string yaml = to_yaml(resolve_for_output(first), false);
    const Scenario second = load_scenario_text(yaml, "resolved.yaml", kShipped);
    EXPECT_EQ(to_json(resolve_for_output(first)).dump(), to_json(resolve_for_output(second)).dump())
        << yaml;
  }
}

// Expectation: every MoE key, a histogram list among them, resolves and loads back
// to the same scenario (the histogram as a YAML list, not a quoted text).
TEST(Loader, ResolvedMoeKeysLoadBack) {
  Scenario first = load_scenario(examples("megascale-moe-352b-h800-240.yaml"), kShipped);
  first.model.moe.skew = RouterSkew::histogram;
  first.model.moe.histogram.assign(32, 1.0 / 32);
  first.model.moe.histogram[0] = 0.25;
  first.origins["model.moe.histogram"] = Location{"test.yaml", 1, 1};  // as if written
  first.model.moe.shared_experts = 1;
  first.model.moe.prune.pattern = Sparsity::two_four;
  first.model.moe.prune.sparsity = 0.5;
  const std::string yaml = to_yaml(resolve_for_output(first), false);
  const Scenario second = load_scenario_text(yaml, "resolved.yaml", kShipped);
  EXPECT_EQ(second.model.moe.histogram, first.model.moe.histogram);
  EXPECT_EQ(to_json(resolve_for_output(first)).dump(), to_json(resolve_for_output(second)).dump())
      << yaml;
}

// Expectation: texts YAML would read as something else (null, control bytes) are
// quoted in the resolved output, so that it reloads with the same texts.
TEST(Loader, ResolvedOutputQuotesTextsYamlWouldMisread) {
  for (const std::string name : {"null", "~", "tab\there", "bell\x07"}) {
    Scenario first = load_scenario(examples("mixtral-8x7b-h100-64.yaml"), kShipped);
    first.name = name;
    const std::string yaml = to_yaml(resolve_for_output(first), false);
    const Scenario second = load_scenario_text(yaml, "resolved.yaml", kShipped);
    EXPECT_EQ(second.name, name) << yaml.substr(0, 200);
  }
}

TEST(Loader, JsonIsInSiUnits) {
  const Scenario s = load_scenario(examples("gpt3-175b-megascale-12288.yaml"), kShipped);
  const auto j = to_json(resolve_for_output(s));
  EXPECT_EQ(j["cluster"]["nic_bandwidth"].get<double>(), 25e9);
  EXPECT_EQ(j["cluster"]["nic_latency"].get<double>(), 2e-6);
  EXPECT_EQ(j["cluster"]["network"]["tiers"][0]["radix"].get<int>(), 64);
  EXPECT_EQ(j["parallelism"]["schedule"].get<std::string>(), "interleaved");
}

TEST(Loader, SameFileSameResolvedOutput) {
  const auto a = to_yaml(
      resolve_for_output(load_scenario(examples("llama3-70b-h100-2048.yaml"), kShipped)), true);
  const auto b = to_yaml(
      resolve_for_output(load_scenario(examples("llama3-70b-h100-2048.yaml"), kShipped)), true);
  EXPECT_EQ(a, b);
}

TEST(Loader, NetworkCapacityFollowsTheFatTreeFormula) {
  NetworkSpec n;
  n.tiers = {TierSpec{"", 64, 0, 1, 0}, TierSpec{"", 64, 0, 1, 0}, TierSpec{"", 64, 0, 1, 0}};
  EXPECT_EQ(network_endpoint_capacity(n, 0), 64.0 * 64 * 64 / 4);  // k^3/4
  n.tiers[1].oversubscription = 7;                                 // 56 down, 8 up
  EXPECT_EQ(network_endpoint_capacity(n, 0), 32.0 * 56 * 64);
  n.tiers[0].port_bw_Bps = 50e9;  // 400G leaf ports split into two 200G NIC links
  EXPECT_EQ(network_endpoint_capacity(n, 25e9), 64.0 * 56 * 64);
}

}  // namespace
}  // namespace myriad::models::scenario

namespace myriad::models::scenario {
namespace {

TEST(Loader, WithoutFaultsAndPoliciesTheLlama3MixAndOneDefaultPolicySet) {
  // Expectation: 419 interruptions over 54 days x 2,048 nodes = 3.789 per 1000
  // node-days, in six processes; one policy set named default with the
  // schema's defaults (detection 5 min, Young's rule).
  const Scenario s = load_scenario(examples("gpt3-175b-megascale-12288.yaml"), kShipped);
  ASSERT_EQ(s.faults.processes.size(), 6u);
  double rate = 0;
  for (const auto& p : s.faults.processes) {
    rate += p.per_1000_node_days;
    EXPECT_EQ(p.replace_node, p.component != Component::software);
    EXPECT_FALSE(p.source.empty());
  }
  EXPECT_NEAR(rate, 419 / (54 * 2048 / 1000.0), 1e-9);
  ASSERT_EQ(s.policies.size(), 1u);
  EXPECT_EQ(s.policies[0].name, "default");
  EXPECT_EQ(s.policies[0].detection_s, 300);
  EXPECT_EQ(s.policies[0].checkpoint_rule, CheckpointRule::young);
  EXPECT_EQ(s.policies[0].peer_bw_Bps, s.cluster.nic_bw_Bps * s.cluster.nics_per_node);
}

TEST(Loader, PolicySetsTakeDefaultsOneByOne) {
  const Scenario s = load_scenario_text(R"(
cluster: {preset: selene-like, gpus: 64}
model: {preset: gpt3-175b-megatron}
parallelism: {tp: 8, pp: 8, global_batch: 64}
faults:
  processes:
    - {component: gpu, per_component_hour: 1e-5, components_per_node: 8, distribution: weibull,
       shape: 0.7}
policies:
  - {hot_spares: 2}
  - {name: hourly, checkpoint_interval: 1h}
)",
                                        "inline.yaml", kShipped);
  ASSERT_EQ(s.policies.size(), 2u);
  EXPECT_EQ(s.policies[0].name, "policy0");
  EXPECT_EQ(s.policies[0].hot_spares, 2);
  EXPECT_EQ(s.policies[1].checkpoint_rule, CheckpointRule::fixed);
  EXPECT_EQ(s.policies[1].checkpoint_interval_s, 3600);
  EXPECT_EQ(s.policies[1].hot_spares, 0);
  ASSERT_EQ(s.faults.processes.size(), 1u);
  EXPECT_NEAR(s.faults.processes[0].rate_per_domain_s(), 8e-5 / 3600, 1e-15);
  EXPECT_EQ(s.faults.processes[0].distribution, Lifetime::weibull);
}

TEST(Loader, TheLlama3MixRunsBesideGivenProcessesWhenAsked) {
  // A leaf-switch process on top of the usual failures: the given process
  // keeps index 0 and its rate is checked; the six of the mix follow.
  const std::string job = R"(
cluster: {preset: selene-like, gpus: 64}
model: {preset: gpt3-175b-megatron}
parallelism: {tp: 8, pp: 8, global_batch: 64}
)";
  const Scenario both = load_scenario_text(job + R"(
faults:
  llama3_mix: true
  processes:
    - {component: switch, domain: leaf, per_1000_domain_days: 2}
)",
                                           "mix.yaml", kShipped);
  ASSERT_EQ(both.faults.processes.size(), 1u + llama3_failure_mix().size());
  EXPECT_EQ(both.faults.processes[0].domain, Domain::leaf);
  EXPECT_EQ(both.faults.processes[1].component, llama3_failure_mix()[0].component);
  // Without it, given processes replace the mix; without processes, false
  // leaves no random failures.
  const Scenario alone = load_scenario_text(job + R"(
faults:
  processes:
    - {component: switch, domain: leaf, per_1000_domain_days: 2}
)",
                                            "alone.yaml", kShipped);
  EXPECT_EQ(alone.faults.processes.size(), 1u);
  EXPECT_FALSE(alone.faults.llama3_mix);
  const Scenario none =
      load_scenario_text(job + "faults: {llama3_mix: false}\n", "none.yaml", kShipped);
  EXPECT_TRUE(none.faults.processes.empty());
  // A given process's rate is still checked beside the mix.
  EXPECT_THROW(load_scenario_text(job + R"(
faults:
  llama3_mix: true
  processes:
    - {component: switch, domain: leaf, per_1000_node_days: 2}
)",
                                  "bad.yaml", kShipped),
               ScenarioError);
}

}  // namespace
}  // namespace myriad::models::scenario
