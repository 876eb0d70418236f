#include "models/scenario/scenario_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <string_view>
#include <utility>

#include "models/scenario/checker.hpp"
#include "models/scenario/network_checks.hpp"
#include "models/scenario/physical_bounds.hpp"
#include "models/scenario/pipeline_checks.hpp"
#include "models/scenario/pipeline_layout.hpp"
#include "models/scenario/reliability_checks.hpp"
#include "models/scenario/units.hpp"

namespace myriad::models::scenario {
namespace {

void check_cluster(const Checker& c) {
  const ClusterSpec& cl = c.s().cluster;
  const std::string& profile = cl.gpu.profile;
  if (profile.find_first_of("/\\") != std::string::npos || profile.starts_with('.')) {
    c.error("cluster.gpu.profile",
            fmt::format("expected the name of a device profile in calibration/profiles/ (such as "
                        "H100), found the path '{}': give a profile file with --profile",
                        profile));
  }
  // Rates and capacities every engine divides by.
  const std::pair<const char*, double> rates[] = {
      {"cluster.gpu.bf16_peak", cl.gpu.bf16_flops},
      {"cluster.gpu.hbm_capacity", cl.gpu.hbm_bytes},
      {"cluster.gpu.hbm_bandwidth", cl.gpu.hbm_bw_Bps},
      {"cluster.gpu.nvlink_bandwidth", cl.gpu.nvlink_bw_Bps},
      {"cluster.nic_bandwidth", cl.nic_bw_Bps}};
  for (const auto& [key, value] : rates) {
    if (value <= 0) c.error(key, "must be above 0: every engine divides by it");
  }
  for (std::size_t i = 0; i < cl.network.tiers.size(); ++i) {
    if (cl.network.tiers[i].port_bw_Bps <= 0 && cl.nic_bw_Bps > 0) {
      c.error(fmt::format("cluster.network.tiers[{}].port_bandwidth", i), "must be above 0");
    }
  }
  if (cl.gpus % cl.gpus_per_node != 0) {
    c.error("cluster.gpus", fmt::format("{} GPUs do not make whole nodes of {} (gpus_per_node)",
                                        cl.gpus, cl.gpus_per_node));
  }
  check_network(c);
}

// Keys that only mean something with another key's value are errors when set to
// anything but their default without it: nothing given is silently ignored (and a
// resolved scenario, which writes every default, loads back).
void check_moe_routing(const Checker& c) {
  const MoeSpec& moe = c.s().model.moe;
  if (moe.experts == 0) {
    if (moe.shared_experts > 0 || moe.capacity_factor > 0 || moe.skew != RouterSkew::uniform ||
        moe.dispatch != MoeDispatch::automatic || moe.prune.any() || !moe.histogram.empty() ||
        moe.first_dense_layers > 0 || moe.every != 1 || moe.max_nodes_per_token > 0) {
      c.error("model.moe", "MoE keys set but the model has no experts (moe.experts is 0)");
    }
    return;
  }
  if (moe.skew != RouterSkew::zipf && moe.zipf_exponent != 1) {
    c.error("model.moe.zipf_exponent", "set, but moe.skew is not zipf");
  }
  if (moe.skew == RouterSkew::zipf && !(moe.zipf_exponent > 0 && moe.zipf_exponent <= 10)) {
    c.error("model.moe.zipf_exponent",
            fmt::format("expected above 0 and up to 10, found {:g}", moe.zipf_exponent));
  }
  const bool histogram = moe.skew == RouterSkew::histogram;
  if (!histogram && !moe.histogram.empty()) {
    c.error("model.moe.histogram", "given, but moe.skew is not histogram");
  }
  if (!histogram) return;
  const auto experts = static_cast<std::size_t>(moe.active_experts());
  if (moe.histogram.size() != experts) {
    c.error("model.moe.histogram",
            fmt::format("expected one share per expert ({}{}), found {}", experts,
                        moe.prune.experts > 0 ? ", after pruning" : "", moe.histogram.size()));
    return;
  }
  double sum = 0;
  for (const double share : moe.histogram) {
    if (!(share >= 0) || !std::isfinite(share)) {
      c.error("model.moe.histogram",
              fmt::format("shares must be finite and at least 0, found {:g}", share));
      return;
    }
    sum += share;
  }
  if (!(sum > 0) || !std::isfinite(sum)) {
    c.error("model.moe.histogram",
            fmt::format("the shares must add up to a finite number above 0, found {:g}", sum));
  }
}

void check_prune(const Checker& c) {
  const MoeSpec& moe = c.s().model.moe;
  const PruneSpec& prune = moe.prune;
  if (prune.experts >= moe.experts && moe.experts > 0) {
    c.error("model.moe.prune.experts",
            fmt::format("pruning {} of {} experts leaves none", prune.experts, moe.experts));
  }
  switch (prune.pattern) {
    case Sparsity::none:
      // Warnings, not errors: a sweep of the pattern keeps one sparsity for every row.
      if (prune.sparsity != 0) {
        c.warning("model.moe.prune.sparsity",
                  "has no effect while prune.pattern is none (say unstructured or 2:4)");
      }
      if (prune.sparse_kernel) {
        c.warning("model.moe.prune.sparse_kernel", "has no effect while prune.pattern is none");
      }
      break;
    case Sparsity::unstructured:
      if (!(prune.sparsity > 0 && prune.sparsity < 1)) {
        c.error("model.moe.prune.sparsity",
                fmt::format("expected a fraction above 0 and below 1 for unstructured "
                            "sparsity, found {:g}",
                            prune.sparsity));
      }
      break;
    case Sparsity::two_four:
      if (prune.sparsity != 0.5) {
        c.error("model.moe.prune.sparsity",
                fmt::format("2:4 sparsity zeroes exactly half the weights; found {:g}",
                            prune.sparsity));
      }
      if (prune.sparse_kernel) {
        c.error("model.moe.prune.sparse_kernel",
                "2:4 always runs on sparse tensor cores; the key is for unstructured sparsity");
      }
      break;
  }
}

void check_mla(const Checker& c) {
  const ModelSpec& m = c.s().model;
  const MlaSpec& mla = m.mla;
  const ParallelSpec& p = c.s().parallelism;
  if (p.recompute_norms_and_up && p.recompute != Recompute::none) {
    c.error("parallelism.recompute_norms_and_up",
            "set with parallelism.recompute, which already recomputes more or other parts: use "
            "one of them");
  }
  if (p.recompute_layers > 0 && p.recompute != Recompute::full) {
    c.error("parallelism.recompute_layers",
            "set without parallelism.recompute: full: it says how many of each chunk's layers "
            "full recomputation covers");
  }
  if (p.recompute_moe_act && (!m.is_moe() || p.recompute == Recompute::full)) {
    c.error("parallelism.recompute_moe_act",
            m.is_moe() ? "set with parallelism.recompute: full, which already recomputes every "
                         "layer: use one of them"
                       : "set, but the model has no experts (model.moe)");
  }
  if (!m.is_mla()) {
    if (mla.q_lora_rank > 0 || mla.qk_nope_head_dim > 0 || mla.qk_rope_head_dim > 0 ||
        mla.v_head_dim > 0) {
      c.error("model.mla.kv_lora_rank",
              "MLA keys set but kv_lora_rank is 0: give the keys' and values' latent rank");
    }
    return;
  }
  for (const auto& [key, value] : {std::pair{"qk_nope_head_dim", mla.qk_nope_head_dim},
                                   std::pair{"qk_rope_head_dim", mla.qk_rope_head_dim},
                                   std::pair{"v_head_dim", mla.v_head_dim}}) {
    if (value <= 0) {
      c.error(std::string("model.mla.") + key,
              "expected a positive width with multi-head latent attention");
    }
  }
  if (m.kv_heads != m.heads) {
    c.error("model.kv_heads",
            fmt::format("{} key/value heads with multi-head latent attention, which up-projects "
                        "one key and value per query head ({}): leave kv_heads out",
                        m.kv_heads, m.heads));
  }
  if (m.head_dim != mla.qk_nope_head_dim + mla.qk_rope_head_dim) {
    c.error("model.head_dim",
            fmt::format("{} with multi-head latent attention, whose heads are qk_nope_head_dim + "
                        "qk_rope_head_dim = {} wide: leave head_dim out",
                        m.head_dim, mla.qk_nope_head_dim + mla.qk_rope_head_dim));
  }
  if (m.parallel_block) {
    c.error("model.parallel_block", "not modelled with multi-head latent attention");
  }
}

void check_model(const Checker& c) {
  const ModelSpec& m = c.s().model;
  check_mla(c);
  if (m.head_dim == 0) {  // not given, and heads do not divide hidden
    c.error("model.hidden", fmt::format("hidden ({}) must be a multiple of heads ({}) so that "
                                        "every head has the same size, or give model.head_dim",
                                        m.hidden, m.heads));
  }
  if (m.kv_heads > m.heads || m.heads % m.kv_heads != 0) {
    c.error("model.kv_heads",
            fmt::format("heads ({}) must be a multiple of kv_heads ({}): each key/value head "
                        "serves a whole group of query heads",
                        m.heads, m.kv_heads));
  }
  if (m.dropout >= 1) {
    c.error("model.dropout",
            fmt::format("a dropout probability of {} drops every activation: expected a "
                        "value below 1 (0.1 is Megatron-LM's default, 0 no dropout)",
                        m.dropout));
  }
  if (m.sliding_window >= m.seq_length) {
    c.warning("model.sliding_window",
              fmt::format("a window of {} tokens covers the whole sequence ({}): it has no "
                          "effect",
                          m.sliding_window, m.seq_length));
  }
  if (m.full_attention_every > 0 && m.sliding_window <= 0) {
    c.error("model.full_attention_every",
            fmt::format("one layer in {} attends fully, but the others have no window: set "
                        "model.sliding_window, or leave full_attention_every out",
                        m.full_attention_every));
  } else if (m.full_attention_every == 1) {
    c.error("model.full_attention_every",
            "1 makes every layer attend over the whole sequence: leave sliding_window out "
            "instead (or give 2 or more)");
  }
  if (!m.is_moe() && m.moe.top_k > 1) {
    c.error("model.moe.top_k", fmt::format("top_k is {} but the model has no experts "
                                           "(moe.experts is 0)",
                                           m.moe.top_k));
  }
  // Beyond top_k x experts every expert takes every token: more changes nothing.
  if (m.is_moe() && (m.moe.capacity_factor > m.moe.experts || m.moe.capacity_factor < 0)) {
    c.error("model.moe.capacity_factor",
            fmt::format("expected 0 (dropless) or a factor up to the number of experts ({}), "
                        "found {:g}",
                        m.moe.experts, m.moe.capacity_factor));
  }
  if (m.is_moe() && m.moe.top_k > m.moe.active_experts()) {
    c.error("model.moe.top_k", fmt::format("a token cannot be routed to {} of {} experts",
                                           m.moe.top_k, m.moe.active_experts()));
  }
  if (m.is_moe() && m.moe_layers() == 0) {
    c.error(
        m.moe.first_dense_layers >= m.layers ? "model.moe.first_dense_layers" : "model.moe.every",
        fmt::format("no layer of the {} is an MoE layer (first_dense_layers {}, every {}): "
                    "leave moe out for a dense model",
                    m.layers, m.moe.first_dense_layers, m.moe.every));
  }
  check_moe_routing(c);
  check_prune(c);
}

void check_tensor_parallel(const Checker& c) {
  const ParallelSpec& p = c.s().parallelism;
  const ModelSpec& m = c.s().model;
  if (m.heads % p.tp != 0) {
    c.error("parallelism.tp", fmt::format("tp ({}) must divide heads ({}): tensor parallelism "
                                          "splits attention by heads",
                                          p.tp, m.heads));
  } else if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0) {
    c.error("parallelism.tp",
            fmt::format("tp ({}) and kv_heads ({}) must divide one another: key/value heads are "
                        "split across, or replicated within, the tensor-parallel group",
                        p.tp, m.kv_heads));
  }
  const int per_node = c.s().cluster.gpus_per_node;
  if (p.tp > per_node) {
    c.warning("parallelism.tp",
              fmt::format("tp ({}) spans more than one node ({} GPUs): its collectives cross "
                          "the NICs",
                          p.tp, per_node));
  } else if (per_node % p.tp != 0) {
    c.warning("parallelism.tp", fmt::format("tp ({}) does not divide gpus_per_node ({}): some "
                                            "tensor-parallel groups straddle two nodes",
                                            p.tp, per_node));
  }
  if (p.sp && p.tp == 1) {
    c.warning("parallelism.sp", "sequence parallelism has no effect without tp > 1");
  }
  if (p.sp && (m.seq_length / p.cp) % p.tp != 0) {
    c.error("parallelism.sp", fmt::format("sequence parallelism splits each sequence of {} tokens "
                                          "(per cp rank) over tp ({}) ranks: it must divide",
                                          m.seq_length / p.cp, p.tp));
  }
}

void check_sizes(const Checker& c) {
  const ParallelSpec& p = c.s().parallelism;
  const int gpus = c.s().cluster.gpus;
  const long long model_parallel = static_cast<long long>(p.tp) * p.pp * p.cp;
  if (c.s().origins.at("parallelism.dp").in_file()) {
    if (model_parallel * p.dp != gpus) {
      c.error("parallelism.dp",
              fmt::format("tp * pp * cp * dp = {} * {} * {} * {} = {}, but the cluster has {} GPUs",
                          p.tp, p.pp, p.cp, p.dp, model_parallel * p.dp, gpus));
    }
  } else if (gpus % model_parallel != 0) {
    c.error("parallelism.tp",
            fmt::format("the cluster's {} GPUs are not a multiple of tp * pp * cp = {} * {} * {} "
                        "= {}, so dp cannot be derived",
                        gpus, p.tp, p.pp, p.cp, model_parallel));
  }
  if (p.dp > 0 && p.global_batch % (p.micro_batch * p.dp) != 0) {
    c.error("parallelism.global_batch",
            fmt::format("global_batch ({}) must be a multiple of micro_batch * dp = {} * {} = {}",
                        p.global_batch, p.micro_batch, p.dp, p.micro_batch * p.dp));
  }
  if (p.zero > 0 && p.dp == 1) {
    c.warning("parallelism.zero",
              "ZeRO shards over data-parallel ranks: with dp = 1 it has no "
              "effect");
  }
}

void check_context_and_experts(const Checker& c) {
  const ParallelSpec& p = c.s().parallelism;
  const ModelSpec& m = c.s().model;
  if (p.cp > 1 && m.seq_length % (2 * p.cp) != 0) {
    c.error("parallelism.cp",
            fmt::format("seq_length ({}) must be a multiple of 2 * cp = {}: context parallelism "
                        "gives each rank two balanced chunks of a causal sequence",
                        m.seq_length, 2 * p.cp));
  }
  if (p.ep > 1 && !m.is_moe()) {
    c.error("parallelism.ep", fmt::format("ep is {} but the model has no experts", p.ep));
    return;
  }
  if (m.is_moe() && m.moe.experts % p.ep != 0) {
    c.error("parallelism.ep",
            fmt::format("ep ({}) must divide the number of experts ({})", p.ep, m.moe.experts));
  }
  if (p.etp != 1 && p.etp != p.tp) {
    c.error("parallelism.etp",
            fmt::format("expected 1 or tp ({}): experts split like the dense MLP or whole, found "
                        "{}",
                        p.tp, p.etp));
    return;
  }
  if (p.etp != p.tp && !m.is_moe()) {
    c.error("parallelism.etp", "given, but the model has no experts");
    return;
  }
  if (p.etp == 1 && p.tp > 1 && !p.sp) {
    c.error("parallelism.etp",
            "etp 1 with tp > 1 needs sequence parallelism (parallelism.sp: true): the experts "
            "take the tokens the tp ranks hold by sequence");
  }
  if (m.is_moe() && m.moe.active_experts() % p.ep != 0) {
    c.error("parallelism.ep", fmt::format("ep ({}) must divide the experts left after pruning ({})",
                                          p.ep, m.moe.active_experts()));
  }
  const long long pool = static_cast<long long>(p.tp) * p.cp * p.dp;
  const long long expert_group = static_cast<long long>(p.ep) * p.etp;
  if (p.dp > 0 && pool % expert_group != 0) {
    c.error("parallelism.ep",
            fmt::format("ep * etp ({} * {}) must divide tp * cp * dp = {}: expert-parallel ranks "
                        "are drawn from a stage's tensor, context and data-parallel ranks",
                        p.ep, p.etp, pool));
  }
}

constexpr std::array<std::string_view, 4> kGrowthKeys = {
    "training.growth.from", "training.growth.tokens", "training.growth.saved_fraction",
    "training.growth.source"};

void check_training_and_overlap(const Checker& c) {
  const Scenario& s = c.s();
  if (s.training.precision == Precision::fp8 && s.cluster.gpu.fp8_flops <= 0) {
    c.error("training.precision",
            fmt::format("fp8 needs fp8 tensor cores, and {} has none (gpu.fp8_peak is 0)",
                        s.cluster.gpu.name));
  }
  const GrowthSpec& g = s.training.growth;
  // Most scenarios have no growth what-if: a map that holds no key under
  // "training.growth." says so in one look.
  const auto after = s.origins.lower_bound("training.growth.");
  const bool growth = after != s.origins.end() && after->first.starts_with("training.growth.");
  if (growth) {
    for (const std::string_view key : kGrowthKeys) {
      const std::string path(key);
      if (!given(s, path)) {
        c.error(path,
                "missing: a growth what-if needs from, tokens, saved_fraction and source "
                "(where the saved fraction comes from)");
      }
    }
    if (given(s, "training.growth.tokens") && !(g.tokens > 0)) {
      c.error("training.growth.tokens", "expected the small model's training tokens, above 0");
    }
    if (given(s, "training.growth.saved_fraction") && !(g.saved_fraction < 1)) {
      c.error("training.growth.saved_fraction",
              "expected below 1: growing saves part of the model's own training, not all of it");
    }
    if (given(s, "training.growth.source") &&
        g.source.find_first_not_of(" \t") == std::string::npos) {
      c.error("training.growth.source",
              "expected where the saved fraction comes from, found nothing");
    }
  }
  const ParallelSpec& p = s.parallelism;
  const auto no_effect = [&](bool on, int degree, const char* key, const char* what) {
    if (on && degree == 1) {
      c.warning(key,
                fmt::format("overlapping {} communication has no effect with {} = 1", what, what));
    }
  };
  no_effect(s.overlap.tp, p.tp, "overlap.tp", "tp");
  no_effect(s.overlap.cp, p.cp, "overlap.cp", "cp");
  no_effect(s.overlap.ep, p.ep, "overlap.ep", "ep");
  no_effect(s.overlap.pp, p.pp, "overlap.pp", "pp");
  no_effect(s.overlap.dp, p.dp, "overlap.dp", "dp");
  if (s.overlap.fused && p.tp == 1 && p.ep == 1) {
    c.warning("overlap.fused", "fusing communication with GEMMs has no effect with tp = ep = 1");
  }
  // (A resolved scenario writes the default, delayed, whatever the precision.)
  if (s.training.fp8_recipe != Fp8Recipe::delayed && s.training.precision != Precision::fp8) {
    c.error("training.fp8_recipe", "scales fp8 GEMM inputs; training.precision is not fp8");
  }
  if (s.training.all_to_all_precision != WirePrecision::bf16 && p.ep == 1) {
    c.warning("training.all_to_all_precision", "no expert all-to-all to compress with ep = 1");
  }
}

}  // namespace

void derive_model(ModelSpec& m, const std::string& path, Origins& origins) {
  const auto derived = [&](const std::string& key) {
    const std::string full = path + "." + key;
    if (origins.find(full) != origins.end()) return false;
    origins[full] = derived_location();
    return true;
  };
  if (derived("kv_heads")) m.kv_heads = m.heads;
  // MLA: a head's query and key are its position-free and its RoPE parts.
  const bool head_dim_derived = derived("head_dim");
  if (head_dim_derived && m.is_mla()) {
    m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;
  } else if (head_dim_derived && m.heads > 0 && m.hidden % m.heads == 0) {
    // Left 0 where heads do not divide hidden: check_model says to give it.
    m.head_dim = m.hidden / m.heads;
  }
  if (derived("ffn_hidden")) {
    m.ffn_hidden = m.activation == Activation::swiglu ? (8 * m.hidden / 3) / 64 * 64 : 4 * m.hidden;
  }
  if (m.is_moe() && derived("moe.expert_ffn_hidden")) m.moe.expert_ffn_hidden = m.ffn_hidden;
  if (m.is_moe() && derived("moe.shared_expert_ffn_hidden")) {
    m.moe.shared_expert_ffn_hidden = m.moe.expert_ffn_hidden;
  }
  if (derived("moe.prune.sparsity")) {
    m.moe.prune.sparsity = m.moe.prune.pattern == Sparsity::two_four ? 0.5 : 0;
  }
}

void derive_layout(Scenario& s) {
  ParallelSpec& p = s.parallelism;
  if (!given(s, "parallelism.schedule")) {
    p.schedule = p.virtual_stages > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
    set_derived(s, "parallelism.schedule");
  }
  if (!given(s, "parallelism.etp")) {
    p.etp = p.tp;
    set_derived(s, "parallelism.etp");
  }
  if (!given(s, "parallelism.dp")) {
    const int model_parallel = p.tp * p.pp * p.cp;
    p.dp = s.cluster.gpus % model_parallel == 0 ? s.cluster.gpus / model_parallel : 0;
    set_derived(s, "parallelism.dp");
  }
  derive_layout_layers(p);
}

void derive(Scenario& s) {
  derive_model(s.model, "model", s.origins);
  GpuSpec& gpu = s.cluster.gpu;
  if (!given(s, "cluster.gpu.profile") && !gpu.preset.empty()) {
    gpu.profile = gpu.preset;
    set_derived(s, "cluster.gpu.profile");
  }
  derive_layout(s);
  if (!given(s, "training.combine_precision")) {
    s.training.combine_precision = s.training.all_to_all_precision;
    set_derived(s, "training.combine_precision");
  }
  if (!given(s, "training.gradient_precision")) {
    s.training.gradient_precision =
        s.training.precision == Precision::bf16 ? WirePrecision::fp32 : WirePrecision::bf16;
    set_derived(s, "training.gradient_precision");
  }
  if (!given(s, "cluster.network.sharp_trees")) {
    // Quantum (HDR, 200 Gb/s) switches run one tree each; Quantum-2 (NDR) on, one a port.
    constexpr double kHdr_Bps = 200e9 / 8;
    s.cluster.network.sharp_trees =
        s.cluster.nic_bw_Bps <= kHdr_Bps ? SharpTrees::per_switch : SharpTrees::per_port;
    set_derived(s, "cluster.network.sharp_trees");
  }
  auto& tiers = s.cluster.network.tiers;
  for (std::size_t i = 0; i < tiers.size(); ++i) {
    const std::string key = fmt::format("cluster.network.tiers[{}].port_bandwidth", i);
    if (!given(s, key)) {
      tiers[i].port_bw_Bps = nic_port_bw(s.cluster);
      set_derived(s, key);
    }
  }
  derive_reliability(s);
}

namespace {

void check_cluster_model_and_layout(const Checker& c) {
  check_cluster(c);
  check_model(c);
  check_tensor_parallel(c);
  check_sizes(c);
  check_pipeline(c);
  check_context_and_experts(c);
  check_training_and_overlap(c);
}

}  // namespace

void check(const Scenario& s, const Location& file, Diagnostics& d) {
  check_cluster_model_and_layout(Checker(s, file, d));
  check_reliability(s, file, d);
  check_physical_bounds(s, file, d);
}

void check_layout(const Scenario& s, const Location& file, Diagnostics& d) {
  check_cluster_model_and_layout(Checker(s, file, d));
  check_layout_bounds(s, file, d);
}

}  // namespace myriad::models::scenario
