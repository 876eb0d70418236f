#include "models/scenario/pipeline_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "models/scenario/pipeline_layout.hpp"

namespace myriad::models::scenario {
namespace {

// stage_layers: one count a stage, summing to the model's layers.
void check_stage_list(const Checker& c) {
  const ParallelSpec& p = c.s().parallelism;
  const int layers = c.s().model.layers;
  const auto& list = p.stage_layers;
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0) {
    c.error("parallelism.stage_layers",
            "give every stage's layers (stage_layers) or the first and last stage's "
            "(first_stage_layers, last_stage_layers), not both");
    return;
  }
  if (static_cast<int>(list.size()) != p.pp) {
    c.error("parallelism.stage_layers",
            fmt::format("expected one layer count a pipeline stage: {} (pp), found {}", p.pp,
                        list.size()));
    return;
  }
  long sum = 0;
  for (const int n : list) sum += n;
  if (sum != layers) {
    c.error("parallelism.stage_layers",
            fmt::format("the stages' layers sum to {}, but the model has {} (model.layers)", sum,
                        layers));
  }
  const int v = p.virtual_stages;
  for (std::size_t k = 0; k < list.size(); ++k) {
    if (list[k] % v != 0) {
      c.error(fmt::format("parallelism.stage_layers[{}]", k),
              fmt::format("{} layers do not split over {} virtual stages: with interleaving a "
                          "stage's layers must be a multiple of virtual_stages",
                          list[k], v));
    }
  }
}

// embedding_as_layer / loss_as_layer: the layers with them split evenly over the
// pp * virtual_stages model chunks, as Megatron-LM requires.
void check_layer_accounting(const Checker& c) {
  const ParallelSpec& p = c.s().parallelism;
  const char* key =
      p.embedding_as_layer ? "parallelism.embedding_as_layer" : "parallelism.loss_as_layer";
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0 || !p.stage_layers.empty()) {
    c.error(key,
            "counting the embedding or the loss as a layer splits the layers evenly over the "
            "model chunks: give it without stage_layers, first_stage_layers or "
            "last_stage_layers");
    return;
  }
  if (p.pp < 2) {
    c.error(key, fmt::format("counting the embedding or the loss as a layer needs pp >= 2, "
                             "found pp {}",
                             p.pp));
    return;
  }
  const int layers = c.s().model.layers;
  const int counted = layers + p.embedding_as_layer + p.loss_as_layer;
  const int chunks = p.pp * p.virtual_stages;
  if (counted % chunks != 0) {
    c.error(key, fmt::format("layers ({}) with the {} counted ({}) must be a multiple of "
                             "pp * virtual_stages = {} * {} = {}",
                             layers,
                             p.embedding_as_layer && p.loss_as_layer ? "embedding and the loss"
                             : p.embedding_as_layer                  ? "embedding"
                                                                     : "loss",
                             counted, p.pp, p.virtual_stages, chunks));
  }
}

// pipeline_layout: Megatron-Core's layout string, as Myriad can run it: one
// entry a model chunk, the embedding opening the first, the LM head and loss
// closing the last, the MTP blocks after the last chunk's layers, every
// transformer layer placed once.
// Megatron-Core's combined 1F1B (--overlap-moe-expert-parallel-comm) pairs a
// forward with a backward to hide expert all-to-alls, and with pp > 1 extends
// the interleaved schedule: its requirements.
void check_combined_1f1b(const Checker& c) {
  const ParallelSpec& p = c.s().parallelism;
  const char* key = "parallelism.schedule";
  if (!c.s().model.is_moe() || p.ep < 2) {
    c.error(key, fmt::format("combined-1f1b hides expert all-to-alls behind another micro-batch's "
                             "compute: it needs an MoE model with ep > 1 (Megatron-Core's "
                             "requirement), found {}",
                             c.s().model.is_moe() ? fmt::format("ep {}", p.ep)
                                                  : std::string("a model without experts")));
    return;
  }
  if (p.pp > 1 && p.virtual_stages < 2) {
    c.error(key, fmt::format("combined-1f1b with pp > 1 extends the interleaved schedule: it "
                             "needs virtual_stages >= 2 (Megatron-Core's requirement), found pp {} "
                             "and virtual_stages {}",
                             p.pp, p.virtual_stages));
  } else if (p.pp == 1 && p.virtual_stages > 1) {
    c.error("parallelism.virtual_stages",
            fmt::format("virtual_stages {} needs pp > 1 (found pp 1)", p.virtual_stages));
  } else if (p.virtual_stages > 1 && p.dp > 0 && p.micro_batches() % p.pp != 0) {
    c.error("parallelism.global_batch",
            fmt::format("combined-1f1b on the interleaved schedule needs micro-batches per "
                        "replica ({} = global_batch / (micro_batch * dp)) to be a multiple of pp "
                        "({})",
                        p.micro_batches(), p.pp));
  } else if (p.dp > 0 && p.micro_batches() == 1) {
    c.warning(key,
              "one micro-batch per replica: combined-1f1b has no forward and backward to pair, "
              "so it hides nothing");
  }
}

void check_layout(const Checker& c) {
  const ParallelSpec& p = c.s().parallelism;
  const ModelSpec& m = c.s().model;
  const char* key = "parallelism.pipeline_layout";
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0 || !p.stage_layers.empty() ||
      p.embedding_as_layer || p.loss_as_layer) {
    c.error(key,
            "a pipeline layout places every layer itself: give it without stage_layers, "
            "first_stage_layers, last_stage_layers, embedding_as_layer or loss_as_layer");
    return;
  }
  if (p.schedule == Schedule::dualpipe) {
    c.error(key, "dualpipe places its own two chunks a stage: give it without a pipeline layout");
    return;
  }
  const PipelineLayout layout = parse_pipeline_layout(p.pipeline_layout);
  if (!layout.ok()) {
    c.error(key, fmt::format("{} (character {} of \"{}\")", layout.error, layout.where,
                             p.pipeline_layout));
    return;
  }
  const int chunks = p.pp * p.virtual_stages;
  if (static_cast<int>(layout.stages.size()) != chunks) {
    c.error(key, fmt::format("the layout has {} model chunks (split by '|'), expected pp * "
                             "virtual_stages = {} * {} = {}",
                             layout.stages.size(), p.pp, p.virtual_stages, chunks));
    return;
  }
  int layers = 0;
  int mtp = 0;
  int embeddings = 0;
  int losses = 0;
  for (std::size_t i = 0; i < layout.stages.size(); ++i) {
    const LayoutStage& st = layout.stages[i];
    const bool last = i + 1 == layout.stages.size();
    layers += st.layers;
    mtp += st.mtp;
    embeddings +=
        st.embedding ? static_cast<int>(std::count(st.text.begin(), st.text.end(), 'E')) : 0;
    losses += st.loss ? static_cast<int>(std::count(st.text.begin(), st.text.end(), 'L')) : 0;
    const std::string where = fmt::format("chunk {} (\"{}\", stage {} chunk {})", i, st.text,
                                          static_cast<int>(i) % p.pp, static_cast<int>(i) / p.pp);
    if (st.text.empty()) {
      c.error(key, fmt::format("model chunk {} holds nothing: every chunk needs a layer, the "
                               "embedding, an MTP block or the loss",
                               i));
    }
    if (st.embedding && (i != 0 || st.text.front() != 'E')) {
      c.error(key, fmt::format("{}: the embedding (E) opens the first chunk, where the first "
                               "stage runs it",
                               where));
    }
    if (st.loss && (!last || st.text.back() != 'L')) {
      c.error(key, fmt::format("{}: the LM head and loss (L) close the last chunk, where the "
                               "last stage runs them",
                               where));
    }
    if (st.mtp > 0 && (!last || st.text.find('t', st.text.find('m')) != std::string::npos)) {
      c.error(key, fmt::format("{}: the MTP blocks (m) follow the model's last layer, in the "
                               "last chunk",
                               where));
    }
  }
  if (embeddings != 1 || losses != 1) {
    c.error(key, fmt::format("expected the embedding (E) and the loss (L) once each, found {} "
                             "and {}",
                             embeddings, losses));
  }
  if (layers != m.layers) {
    c.error(key, fmt::format("the layout places {} transformer layers (t), but the model has {} "
                             "(model.layers)",
                             layers, m.layers));
  }
  if (mtp != m.mtp_depth) {
    c.error(key, fmt::format("the layout places {} MTP blocks (m), but the model has {} "
                             "(model.mtp_depth)",
                             mtp, m.mtp_depth));
  }
}

// first_stage_layers / last_stage_layers: the stages between share the rest evenly.
void check_uneven_stages(const Checker& c) {
  const ParallelSpec& p = c.s().parallelism;
  const int layers = c.s().model.layers;
  if (!p.pipeline_layout.empty()) {
    check_layout(c);
    return;
  }
  if (p.embedding_as_layer || p.loss_as_layer) {
    check_layer_accounting(c);
    return;
  }
  if (!p.stage_layers.empty()) {
    check_stage_list(c);
    return;
  }
  const char* key =
      p.first_stage_layers > 0 ? "parallelism.first_stage_layers" : "parallelism.last_stage_layers";
  if (p.pp < 2) {
    c.error(key, fmt::format("uneven stages need pp >= 2, found pp {}", p.pp));
    return;
  }
  const int fixed = (p.first_stage_layers > 0) + (p.last_stage_layers > 0);
  const int rest = layers - p.first_stage_layers - p.last_stage_layers;
  const int others = p.pp - fixed;
  // With interleaving each stage's layers split evenly over its virtual stages
  // (Megatron-LM's first/last-stage layer counts with a virtual pipeline).
  const int v = p.virtual_stages;
  if (rest < 0 || (others == 0 && rest != 0) ||
      (others > 0 && (rest <= 0 || rest % (others * v) != 0))) {
    c.error(key, fmt::format(
                     "layers ({}) less first_stage_layers ({}) and last_stage_layers ({}) "
                     "leave {} for the other {} stage(s): expected a positive multiple of {}{}",
                     layers, p.first_stage_layers, p.last_stage_layers, rest, others,
                     std::max(others, 1) * v,
                     v > 1 ? fmt::format(" ({} stages x {} virtual stages)", std::max(others, 1), v)
                           : std::string{}));
    return;
  }
  for (const auto& [name, count] :
       {std::pair{"parallelism.first_stage_layers", p.first_stage_layers},
        std::pair{"parallelism.last_stage_layers", p.last_stage_layers}}) {
    if (count > 0 && count % v != 0) {
      c.error(name, fmt::format("{} layers do not split over {} virtual stages: with "
                                "interleaving a stage's layers must be a multiple of "
                                "virtual_stages",
                                count, v));
    }
  }
}

void check_host_side(const Checker& c, const char* key);

// Activation offload as Megatron-LM runs it (--cpu-offloading): Transformer
// Engine's default schedule plays each micro-batch's forward through all the
// layers and then its backward, which a pipeline of one stage does; Megatron-LM
// refuses it with pipeline parallelism and with recomputation (Megatron Bridge's
// CPU offloading guide), and at least one layer's activations stay on the GPU
// (Transformer Engine's get_cpu_offload_context: num_layers < model_layers).
void check_offload(const Checker& c) {
  const ParallelSpec& p = c.s().parallelism;
  if (p.offload_layers == 0) return;
  const char* key = "parallelism.offload_layers";
  if (p.pp != 1) {
    c.error(key, fmt::format("activation offload runs on a pipeline of one stage (Megatron-LM "
                             "refuses --cpu-offloading with pipeline parallelism), found pp {}",
                             p.pp));
  }
  if (p.recompute != Recompute::none) {
    c.error(key, fmt::format("set with parallelism.recompute: {}: Megatron-LM runs activation "
                             "offload without recomputation; use one of them",
                             models::name_in(kRecomputeNames, p.recompute)));
  }
  const int layers = c.s().model.layers;
  if (p.offload_layers >= layers) {
    c.error(key, fmt::format("{} of the model's {} layers: at most {} (one layer's activations "
                             "stay on the GPU)",
                             p.offload_layers, layers, layers - 1));
  }
  check_host_side(c, key);
}

// What any offload needs of the GPU's host: a link and memory, given.
void check_host_side(const Checker& c, const char* key) {
  const GpuSpec& gpu = c.s().cluster.gpu;
  if (gpu.host_link_bw_Bps <= 0) {
    c.error(key, fmt::format("activation offload moves activations over the GPU's link to its "
                             "host, which {} does not give: set cluster.gpu.host_link_bandwidth "
                             "(PCIe Gen5 x16: 64GB/s a direction)",
                             gpu.name));
  }
  if (gpu.host_memory_bytes <= 0) {
    c.error(key, fmt::format("activation offload keeps activations in host memory, which {} "
                             "does not give: set cluster.gpu.host_memory, what a GPU may use (its "
                             "node's host memory over its GPUs)",
                             gpu.name));
  }
}

// Fine-grained activation offload (Megatron-Core's --offload-modules): the
// modules a layer of the model has, and not beside what already keeps less of
// the same tensors (whole-layer recomputation or offload, the recomputation of
// the same modules), which Myriad does not price together.
void check_offload_modules(const Checker& c) {
  const ParallelSpec& p = c.s().parallelism;
  if (p.offload_modules.empty()) return;
  const char* key = "parallelism.offload_modules";
  if (p.offload_layers > 0) {
    c.error(key,
            "set with parallelism.offload_layers: offload whole layers (Transformer "
            "Engine's CPU offload) or modules (Megatron-Core's fine-grained offload), "
            "not both");
  }
  if (p.recompute == Recompute::full) {
    c.error(key,
            "set with parallelism.recompute: full: a recomputed layer keeps only its input, "
            "which no module offloads");
  }
  for (const OffloadModule m : p.offload_modules) {
    const std::string clash = offload_module_clash(p, c.s().model.is_moe(), m);
    if (!clash.empty()) c.error(key, clash);
  }
  check_host_side(c, key);
}

}  // namespace

std::string offload_module_names(const std::vector<OffloadModule>& modules,
                                 std::string_view separator) {
  std::string names;
  for (const OffloadModule m : modules) {
    if (!names.empty()) names += separator;
    names += name_in(kOffloadModuleNames, m);
  }
  return names;
}

std::string offload_modules_text(const std::vector<OffloadModule>& modules) {
  return "[" + offload_module_names(modules, ",") + "]";
}

std::string offload_module_clash(const ParallelSpec& p, bool moe, OffloadModule m) {
  const auto name = models::name_in(kOffloadModuleNames, m);
  if ((m == OffloadModule::expert_fc1 || m == OffloadModule::moe_act) && !moe) {
    return fmt::format("{} offloads what the routed experts keep; the model has none", name);
  }
  const bool norms = m == OffloadModule::attn_norm || m == OffloadModule::mlp_norm ||
                     m == OffloadModule::qkv_linear;
  if (norms && p.recompute_norms_and_up) {
    return fmt::format(
        "{} with parallelism.recompute_norms_and_up: the norms run again in "
        "backward, from inputs their recomputation keeps; use one of them",
        name);
  }
  if (m == OffloadModule::moe_act && p.recompute_moe_act) {
    return "moe_act with parallelism.recompute_moe_act: recompute the activation or offload its "
           "input, not both";
  }
  if (m == OffloadModule::core_attn && p.recompute == Recompute::selective) {
    return "core_attn with parallelism.recompute: selective: selective recomputation runs the "
           "attention core again from the inputs it keeps; use one of them";
  }
  return "";
}

void check_pipeline(const Checker& c) {
  check_offload(c);
  check_offload_modules(c);
  const ParallelSpec& p = c.s().parallelism;
  const ModelSpec& m = c.s().model;
  const int chunks = p.pp * p.virtual_stages;
  if (p.uneven_stages()) {
    check_uneven_stages(c);
  } else if (m.layers % chunks != 0) {
    c.error(p.virtual_stages > 1 ? "parallelism.virtual_stages" : "parallelism.pp",
            fmt::format("layers ({}) must be a multiple of pp * virtual_stages = {} * {} = {}",
                        m.layers, p.pp, p.virtual_stages, chunks));
  }
  if (p.schedule == Schedule::zb_h1 && p.pp < 2) {
    c.error("parallelism.schedule",
            fmt::format("zb-h1 splits backward passes to fill a pipeline's bubble: it needs pp >= "
                        "2, found pp {}",
                        p.pp));
  }
  if (p.schedule == Schedule::dualpipe) {
    if (p.pp < 2 || p.pp % 2 != 0) {
      c.error("parallelism.schedule",
              fmt::format("dualpipe feeds the pipeline from both ends: it needs an even pp, "
                          "found pp {}",
                          p.pp));
    } else if (p.dp > 0 && p.micro_batches() > 0 &&
               (p.micro_batches() % 2 != 0 || p.micro_batches() < 2 * p.pp)) {
      c.error("parallelism.global_batch",
              fmt::format("dualpipe needs an even number of micro-batches per replica, at least "
                          "2 pp = {}, found {} (global_batch / (micro_batch * dp))",
                          2 * p.pp, p.micro_batches()));
    }
  }
  if (p.delay_wgrad_compute && p.schedule != Schedule::combined_1f1b) {
    c.error("parallelism.delay_wgrad_compute",
            fmt::format("delays the weight gradients to hide combined 1F1B's all-to-alls "
                        "(Megatron-Core runs it with --overlap-moe-expert-parallel-comm): it "
                        "needs schedule combined-1f1b, found {}",
                        models::name_in(kScheduleNames, p.schedule)));
  }
  if (p.schedule == Schedule::combined_1f1b) {
    check_combined_1f1b(c);
  } else if (p.schedule == Schedule::interleaved) {
    if (p.virtual_stages < 2 || p.pp < 2) {
      c.error("parallelism.schedule",
              fmt::format("the interleaved schedule needs pp >= 2 and virtual_stages >= 2, found "
                          "pp {} and virtual_stages {}",
                          p.pp, p.virtual_stages));
    } else if (p.dp > 0 && p.micro_batches() % p.pp != 0) {
      c.error("parallelism.global_batch",
              fmt::format("the interleaved schedule needs micro-batches per replica ({} = "
                          "global_batch / (micro_batch * dp)) to be a multiple of pp ({})",
                          p.micro_batches(), p.pp));
    }
  } else if (p.virtual_stages > 1) {
    c.error("parallelism.schedule",
            fmt::format("virtual_stages is {} but the schedule is {}: use interleaved, or "
                        "virtual_stages 1",
                        p.virtual_stages, models::name_in(kScheduleNames, p.schedule)));
  }
  if (p.pp > 1 && p.dp > 0 && p.micro_batches() > 0 && p.micro_batches() < p.pp) {
    c.warning("parallelism.global_batch",
              fmt::format("{} micro-batches per replica for {} pipeline stages: the pipeline "
                          "never fills",
                          p.micro_batches(), p.pp));
  }
}

}  // namespace myriad::models::scenario
