// `myriad plan`'s command line: its subcommand and options (CLI11).
#include <memory>

#include "tools/cli/commands.hpp"
#include "tools/cli/plan_options.hpp"

namespace myriad::cli {

Command add_plan_command(CLI::App& app, Streams io, const Environment& env) {
  auto options = std::make_shared<PlanCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "Search the parallel layouts of a scenario's model on its cluster: every valid one "
      "estimated, the best by an objective within a memory headroom.");
  add_scenario_options(*cmd, options->scenario);
  add_profile_option(*cmd, options->profile);
  cmd->add_option("--objective", options->objective,
                  "what ranks the layouts: days, gpu-hours, cost, tokens-per-s, step-time, mfu, "
                  "memory (default days; with --max-days, cost where every cluster has a price, "
                  "else gpu-hours)");
  cmd->add_option("--max-days", options->max_days,
                  "a deadline: days to the scenario's token target; the layouts that meet it "
                  "rank first by the objective (the cheapest), the others after by days")
      ->check(finite_range(0.001, 1e6));
  cmd->add_option("--gpus", options->gpus,
                  "GPU counts to search: a list (8192,12288), a range with a step "
                  "(8192..16384:1024) or a factor (4096..16384*2), or a plain range "
                  "(8192..16384): the whole-node counts whose number of nodes is 2^k times 1, "
                  "3, 5 or 7 (four a doubling); default: the scenario's");
  cmd->add_option("--vary", options->vary,
                  "compare clusters or GPUs (or any key): KEY=VALUES as for sweep "
                  "(cluster.gpu=H100,B200,MI300X); each value's scenario is searched, the "
                  "layouts ranked together");
  cmd->add_flag("--zip", options->zip,
                "advance the --vary axes together (cluster.preset=...,gb200-nvl72 with "
                "cluster.gpu=...,GB200) instead of their cartesian product");
  cmd->add_option("--top", options->top, "how many of the best layouts to list (default 10)")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--headroom", options->headroom,
                  "largest fraction of usable memory a layout may need (default 0.9)")
      ->check(finite_range(0.05, 1.0));
  cmd->add_option("--stages", options->stages,
                  "how the layers split over pipeline stages: uniform (even, the default) or "
                  "balanced (also try each layout's time-balanced split within the headroom, as "
                  "`myriad place` finds it, and keep it where it is faster or fits only so)")
      ->check(CLI::IsMember({"uniform", "balanced"}));
  cmd->add_flag("--partial-recompute", options->partial_recompute,
                "also try each layout with full recomputation with only the fewest layers of "
                "each chunk recomputed that still fit the headroom "
                "(parallelism.recompute_layers, Megatron-LM's block method), and keep that "
                "faster one (after the balanced split, with --stages balanced)");
  cmd->add_flag("--offload", options->offload,
                "also try each layout over the headroom with activations in host memory: the "
                "fewest whole layers that fit it (one stage without recomputation: "
                "parallelism.offload_layers) and the modules that fit it at the shortest step "
                "(any pipeline: parallelism.offload_modules); keep the faster");
  cmd->add_option("--global-batch", options->global_batch,
                  "global batches (sequences) to search: a list or stepped range (1024,2048, "
                  "512..4096*2, 512..4864:256), or a plain range (1536..2560): each layout "
                  "then takes the largest batch in it that micro-batch x dp divides; default: "
                  "the scenario's");
  cmd->add_option("--prune", options->prune,
                  "expert pruning variants to search beside the layouts (MoE), comma-separated: "
                  "none, 2:4, unstructured=F (dense kernels), unstructured-kernel=F (a sparse "
                  "kernel), experts=N, joined by '+' (experts=8+2:4); default: the scenario's");
  cmd->add_option("--schedules", options->schedules,
                  "pipeline schedules to search, comma-separated: 1f1b (interleaved where a "
                  "layout has virtual stages), zb-h1, dualpipe, combined-1f1b; the checks refuse "
                  "one where it cannot run (a zero-bubble one with virtual stages or one stage, "
                  "dualpipe with an odd pp, combined-1f1b without experts across ranks or, with pp "
                  "> 1, without virtual stages); default: the scenario's");
  cmd->add_option("--csv", options->csv_file, "also write the best layouts as CSV");
  cmd->add_option("--rescore", options->rescore,
                  "re-score the best layouts by slower engines and rank them again: step "
                  "(the step engine: contention, stragglers), campaign (days under the "
                  "scenario's failures and first policy set; on the step engine's step with "
                  "step), or both")
      ->delimiter(',')
      ->check(CLI::IsMember({"step", "campaign"}));
  cmd->add_option("--seeds", options->seeds, "campaign seeds per layout (default 8)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--report", options->report_file,
                  "also write an HTML report: the layouts estimated in an interactive "
                  "scatterplot (axes, colour, brushing, a click for the breakdown, memory and "
                  "scenario), the Pareto front of the objective and memory, the objective "
                  "against each parameter; works offline");
  return {cmd, [options, io, &env] { return run_plan(*options, io, env); }};
}

}  // namespace myriad::cli
