// `myriad plan SCENARIO`: the layout search (sim/plan/layout_search.hpp) with the
// scenario's model, cluster and token target fixed; the best layouts by an
// objective, how many candidates were pruned and why, and the `--set` line that
// reproduces the best one for `estimate`, `simulate` or `campaign`.
#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>

#include "models/scenario/text_file.hpp"
#include "sim/plan/layout_search.hpp"
#include "sim/plan/sweep.hpp"
#include "tools/cli/commands.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

struct PlanCliOptions {
  ScenarioOptions scenario;
  std::string profile;
  std::string objective = "days";
  int top = 10;
  double headroom = 0.9;
  std::string global_batch;
  std::string csv_file;
};

std::string layout_text(const sim::PlannedLayout& l) {
  const auto& p = l.parallelism;
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{}", p.tp, p.sp, p.pp, p.virtual_stages, p.cp,
                     p.ep, p.dp, p.micro_batch, p.global_batch, p.zero,
                     models::name_in(scenario::kRecomputeNames, p.recompute));
}

int run_plan(const PlanCliOptions& o, Streams io, const Environment& env) {
  if (!outputs_ok("plan", {{"--csv", o.csv_file}}, {o.scenario.scenario, o.profile}, io)) {
    return kExitBadInput;
  }
  sim::PlanOptions options;
  sim::SearchSpace space;
  try {
    const auto objectives = sim::parse_objectives(o.objective);
    if (objectives.size() != 1) throw std::invalid_argument("--objective takes one objective");
    options.objective = objectives.front();
  } catch (const std::invalid_argument& e) {
    io.err << fmt::format("myriad plan: error: --objective: {}\n", e.what());
    return kExitBadInput;
  }
  const auto s = load_for_cli(o.scenario, io, env);
  if (!s) return kExitBadInput;
  const auto profile = profile_for(*s, o.profile, io, env);
  if (!profile) return kExitBadInput;
  if (options.objective.name == "cost" && !(s->cluster.price_per_gpu_hour > 0)) {
    io.err << "myriad plan: error: --objective cost: the scenario gives no price "
              "(cluster.price_per_gpu_hour); set one, e.g. --set cluster.price_per_gpu_hour=2.5\n";
    return kExitBadInput;
  }
  space = sim::default_space(*s);
  std::string batch_origin = "the scenario's";
  if (!o.global_batch.empty()) {
    try {
      space.global_batch.clear();
      for (const auto& v : sim::parse_axis("parallelism.global_batch=" + o.global_batch).values) {
        std::size_t used = 0;
        const int b = std::stoi(v, &used);
        if (used != v.size() || b < 1) throw std::invalid_argument("'" + v + "' is not a batch");
        space.global_batch.push_back(b);
      }
    } catch (const std::exception& e) {
      io.err << fmt::format("myriad plan: error: --global-batch: {}\n", e.what());
      return kExitBadInput;
    }
    batch_origin = "--global-batch";
  }
  options.top = static_cast<std::size_t>(o.top);
  options.headroom = o.headroom;
  const std::size_t total = sim::candidate_count(space);
  if (env.terminal) {
    options.progress = [&io, total](std::size_t done) {
      io.err << fmt::format("\rplan: {} of {} candidates ({:.0f} %)", done, total,
                            100.0 * static_cast<double>(done) / static_cast<double>(total))
             << std::flush;
    };
  }
  const auto start = std::chrono::steady_clock::now();
  const sim::PlanResult r = sim::search_layouts(*s, *profile, space, options);
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (env.terminal && total >= options.progress_every) io.err << "\r\033[K" << std::flush;

  io.out << fmt::format("{}\n  {} x {}, {} layers, {} tokens a sequence; global batch: {} ({})\n",
                        s->name.empty() ? scenario_name(o.scenario) : s->name, s->cluster.gpus,
                        s->cluster.gpu.name, s->model.layers, s->model.seq_length,
                        fmt::join(space.global_batch, ", "), batch_origin);
  io.out << profile_line(*profile);
  io.out << fmt::format(
      "\n  searched: tp {{{}}} x pp {{{}}} x v {{{}}} x cp {{{}}} x ep {{{}}} x micro-batch {{{}}} "
      "x "
      "ZeRO {{{}}} x recompute {{none, selective, full}} x placement {{tp-cp-dp-pp, "
      "tp-cp-pp-dp}}; dp = GPUs / (tp pp cp); sp with tp; overlap as the scenario has it\n",
      fmt::join(space.tp, ", "), fmt::join(space.pp, ", "), fmt::join(space.virtual_stages, ", "),
      fmt::join(space.cp, ", "), fmt::join(space.ep, ", "), fmt::join(space.micro_batch, ", "),
      fmt::join(space.zero, ", "));
  io.out << fmt::format(
      "  {} candidates in {:.2f} s ({:.0f}/s): {} pruned by the scenario checks, {} estimated "
      "({:.0f}/s), {} above {:.0f} % of usable memory\n",
      r.candidates, wall, static_cast<double>(r.candidates) / std::max(wall, 1e-9), r.pruned,
      r.evaluated, static_cast<double>(r.evaluated) / std::max(wall, 1e-9), r.over_memory,
      100 * options.headroom);
  if (!r.pruned_by.empty()) {
    Table why({"pruned by", "candidates", "for example"}, "lrl");
    for (const auto& [key, entry] : r.pruned_by) {
      why.add({key.empty() ? "(scenario)" : key, std::to_string(entry.first), entry.second});
    }
    io.out << "\n" << why.str();
  }
  if (r.top.empty()) {
    io.out << "\nNo layout fits: loosen --headroom, add GPUs or give another global batch.\n";
    return kExitOk;
  }
  const bool priced = s->cluster.price_per_gpu_hour > 0;
  std::vector<std::string> headers = {
      "#",    "tp",        "pp",        "v",         "cp",  "ep",       "dp",   "mb",
      "ZeRO", "recompute", "placement", "step time", "MFU", "tokens/s", "days", "GPU-hours"};
  std::string align = "rrrrrrrrrllrrrrr";
  if (priced) {
    headers.emplace_back("cost");
    align += 'r';
  }
  headers.emplace_back("memory");
  headers.emplace_back("alike");
  headers.emplace_back("engine");
  align += "rrl";
  Table table(headers, align);
  int rank = 0;
  for (const auto& l : r.top) {
    const auto& p = l.parallelism;
    std::vector<std::string> row = {
        std::to_string(++rank),
        std::to_string(p.tp),
        std::to_string(p.pp),
        std::to_string(p.virtual_stages),
        std::to_string(p.cp),
        std::to_string(p.ep),
        std::to_string(p.dp),
        std::to_string(p.micro_batch),
        std::to_string(p.zero),
        std::string(models::name_in(scenario::kRecomputeNames, p.recompute)),
        std::string(models::name_in(scenario::kPlacementNames, p.placement)),
        seconds(l.metrics.step_time_s),
        percent(l.metrics.mfu),
        si_count(l.metrics.tokens_per_s),
        fmt::format("{:.1f}", l.metrics.days),
        si_count(l.metrics.gpu_hours)};
    if (priced) row.push_back("$" + si_count(l.metrics.cost));
    row.push_back(percent(l.metrics.memory, 0));
    row.push_back(l.alike > 0 ? fmt::format("+{}", l.alike) : std::string{});
    row.emplace_back("estimate");
    table.add(std::move(row));
  }
  io.out << fmt::format(
                "\nBest {} by {} ({}), within {:.0f} % of usable memory (alike: later layouts "
                "with the same step time and memory, folded into the row):\n",
                r.top.size(), options.objective.name, options.objective.maximize ? "max" : "min",
                100 * options.headroom)
         << table.str();
  std::string sets;
  for (const auto& set : sim::layout_overrides(r.top.front().parallelism)) sets += " --set " + set;
  io.out << fmt::format(
      "\nThe best, to check under contention and stragglers, or over days with failures:\n"
      "  myriad simulate {}{}\n",
      o.scenario.scenario, sets);
  if (!o.csv_file.empty()) {
    std::string csv =
        "rank,tp,sp,pp,virtual_stages,cp,ep,dp,micro_batch,global_batch,zero,recompute,"
        "step_time_s,mfu,tokens_per_s,days,gpu_hours,cost_usd,memory_fraction\n";
    rank = 0;
    for (const auto& l : r.top) {
      const sim::LayoutMetrics& m = l.metrics;
      csv += fmt::format("{},{},{:.9g},{:.6g},{:.9g},{:.6g},{:.9g},{},{:.6g}\n", ++rank,
                         layout_text(l), m.step_time_s, m.mfu, m.tokens_per_s, m.days, m.gpu_hours,
                         priced ? fmt::format("{:.9g}", m.cost) : std::string{}, m.memory);
    }
    try {
      models::write_file_atomically(o.csv_file, csv, "the CSV table");
    } catch (const std::runtime_error& e) {
      io.err << fmt::format("myriad plan: error: {}\n", e.what());
      return kExitFailure;
    }
  }
  return kExitOk;
}

}  // namespace

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
                  "memory (default days)");
  cmd->add_option("--top", options->top, "how many of the best layouts to list (default 10)")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--headroom", options->headroom,
                  "largest fraction of usable memory a layout may need (default 0.9)")
      ->check(finite_range(0.05, 1.0));
  cmd->add_option("--global-batch", options->global_batch,
                  "global batches to search, as a list or range (1024,2048 or 512..4096*2); "
                  "default: the scenario's");
  cmd->add_option("--csv", options->csv_file, "also write the best layouts as CSV");
  return {cmd, [options, io, &env] { return run_plan(*options, io, env); }};
}

}  // namespace myriad::cli
