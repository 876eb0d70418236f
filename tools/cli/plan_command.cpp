// `myriad plan SCENARIO`: the layout search (sim/plan/layout_search.hpp); the best layouts by
// an objective, how many candidates were pruned and why, and the `--set` line that reproduces
// the best one for `estimate`, `simulate` or `campaign`.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <thread>

#include "models/scenario/run_title.hpp"
#include "models/scenario/text_file.hpp"
#include "models/transformer/model_stats.hpp"
#include "sim/analytic/step_rates.hpp"
#include "sim/campaign/campaign_report.hpp"
#include "sim/plan/growth.hpp"
#include "sim/plan/layout_search.hpp"
#include "sim/plan/sweep.hpp"
#include "sim/step/step_in_child.hpp"
#include "tools/cli/configuration_report.hpp"
#include "tools/cli/csv.hpp"
#include "tools/cli/plan_options.hpp"
#include "tools/cli/plan_search.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

// A layout of the best K, re-scored by the slower engines: the step engine
// (contention, stragglers) and the campaign engine (days under the scenario's
// failures and policies, on the step engine's step where it ran).
struct Rescored {
  sim::PlannedLayout layout;  // its metrics: the most faithful engine's figures
  int estimate_rank = 0;
  double estimated_step_s = 0;
  std::optional<double> simulated_step_s;
  std::string step_error;
  std::optional<sim::campaign::Interval> days;  // campaign: wall-clock days to the target
  std::optional<sim::campaign::Interval> ettr;
  bool reached = true;  // every seed reached the token target
  std::string engine = "estimate";

  Rescored(const sim::PlannedLayout& l, int rank)
      : layout(l), estimate_rank(rank), estimated_step_s(l.metrics.step_time_s) {}
};

// The campaign's first policy set re-scores a layout; the others are for `campaign`.
Rescored rescore(const scenario::Scenario& base, const sim::DeviceProfile& profile,
                 const sim::PlannedLayout& l, int rank, const PlanCliOptions& o) {
  Rescored r(l, rank);
  scenario::Scenario s = base;
  sim::apply_planned(s, l);
  const bool step = std::find(o.rescore.begin(), o.rescore.end(), "step") != o.rescore.end();
  const bool campaign =
      std::find(o.rescore.begin(), o.rescore.end(), "campaign") != o.rescore.end();
  double scale = 1;
  sim::LayoutMetrics& m = r.layout.metrics;
  if (step) {
    const sim::ChildStep sim = sim::simulate_step_in_child(s, profile);
    if (sim.ok && sim.step_time_s > 0) {
      r.simulated_step_s = sim.step_time_s;
      scale = sim.step_time_s / m.step_time_s;
      m.step_time_s = sim.step_time_s;
      sim::StepReport played;
      played.set_rates(sim::step_rates(s, models::model_flops_per_step(s),
                                       models::hardware_flops_per_step(s), sim.step_time_s));
      m.tokens_per_s = played.tokens_per_s;
      m.mfu = played.headline_mfu();
      m.days = played.days_to_target;
      m.gpu_hours *= scale;
      m.cost *= scale;
      r.engine = "step";
    } else {
      r.step_error = sim.error;
    }
  }
  if (campaign && !s.policies.empty()) {
    sim::campaign::CampaignOptions options;
    options.seeds = o.seeds;
    options.threads = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    options.step_scale = scale;
    const auto report = sim::campaign::run_campaign(s, profile, options);
    const auto& p = report.policies.front();
    const int gpus_per_node = s.cluster.gpus_per_node;
    r.days = p.over_seeds([](const auto& run) { return run.wall_s / 86400; });
    r.ettr = p.over_seeds([](const auto& run) { return run.ettr(); });
    for (const auto& run : p.runs) r.reached = r.reached && run.reached_target;
    const double gpu_hours = p.over_seeds([gpus_per_node](const auto& run) {
                                return run.wall_s / 3600 * run.nodes_in_service * gpus_per_node;
                              }).mean;
    m.days = r.days->mean;
    m.tokens_per_s = p.over_seeds([](const auto& run) {
                        return run.wall_s > 0 ? run.tokens / run.wall_s : 0;
                      }).mean;
    m.cost = s.cluster.price_per_gpu_hour > 0 ? gpu_hours * s.cluster.price_per_gpu_hour : m.cost;
    m.gpu_hours = gpu_hours;
    r.engine = r.simulated_step_s ? "campaign on step" : "campaign";
  }
  return r;
}

// "meets", or how late: "+3.2 d".
std::string deadline_text(double days, double max_days) {
  return days <= max_days ? std::string("meets") : fmt::format("+{:.1f} d", days - max_days);
}

// How many layouts meet the deadline; when none does, how far the fastest is from it
// and what would close the gap.
std::string deadline_summary(const sim::PlanResult& r, double max_days,
                             const sim::LayoutMetrics& fastest) {
  const std::size_t fit = r.evaluated - r.over_memory;
  if (r.meets_deadline > 0) {
    return fmt::format(
        "{} of the {} layouts within the memory headroom meet the {:g}-day deadline.\n",
        r.meets_deadline, fit, max_days);
  }
  return fmt::format(
      "None of the {} layouts within the memory headroom meets the {:g}-day deadline: the "
      "fastest takes {:.1f} days on {} GPUs. More GPUs (--gpus), a larger global batch "
      "(--global-batch), fewer tokens or a later deadline would close the gap.\n",
      scenario::grouped(static_cast<long long>(fit)), max_days, fastest.days,
      scenario::grouped(static_cast<long long>(fastest.gpus)));
}

// The searches beside the first: each cluster with its GPU counts.
std::string searches_text(const PlanVariants& v) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < v.all.size(); ++i) {
    const auto& x = v.all[i];
    if (i > 0 && x.hardware == v.all[i - 1].hardware) {
      lines.back() += ", " + scenario::grouped(x.base.cluster.gpus);
      continue;
    }
    lines.push_back(fmt::format("    {} (rates of the {} profile): {}", x.hardware,
                                x.profile.device, scenario::grouped(x.base.cluster.gpus)));
  }
  return fmt::format("  {} searches, GPUs from {}:\n{}\n", v.all.size(), v.gpus_origin,
                     fmt::join(lines, "\n"));
}

// Comparing clusters: the layout that ranks first on each, at whichever GPU count.
std::string per_hardware_table(const PlanVariants& v, const PlanSearch& search,
                               const sim::PlanOptions& options, bool deadline) {
  std::vector<const sim::PlannedLayout*> firsts;
  for (const auto& l : search.firsts) {
    const auto same = std::find_if(firsts.begin(), firsts.end(), [&](const auto* f) {
      return v.all[f->variant].hardware == v.all[l.variant].hardware;
    });
    if (same == firsts.end()) {
      firsts.push_back(&l);
    } else if (sim::ranks_before(l, **same, options)) {
      *same = &l;
    }
  }
  std::stable_sort(firsts.begin(), firsts.end(), [&](const auto* a, const auto* b) {
    return sim::ranks_before(*a, *b, options);
  });
  Table t({"hardware", "GPUs", "tp", "pp", "v", "cp", "dp", "mb", "batch", "ZeRO", "recompute",
           "step time", "MFU", "days", "GPU-hours", "cost", "deadline", "memory"},
          "lrrrrrrrrrlrrrrrlr");
  for (const auto* l : firsts) {
    const auto& p = l->parallelism;
    const auto& m = l->metrics;
    t.add({v.all[l->variant].hardware, scenario::grouped(m.gpus), std::to_string(p.tp),
           std::to_string(p.pp), std::to_string(p.virtual_stages), std::to_string(p.cp),
           std::to_string(p.dp), std::to_string(p.micro_batch), std::to_string(p.global_batch),
           std::to_string(p.zero),
           std::string(models::name_in(scenario::kRecomputeNames, p.recompute)),
           seconds(m.step_time_s), percent(m.mfu), fmt::format("{:.1f}", m.days),
           si_count(m.gpu_hours), std::isfinite(m.cost) ? "$" + si_count(m.cost) : "-",
           deadline ? deadline_text(m.days, options.max_days) : "-", percent(m.memory, 0)});
  }
  return fmt::format(
      "\nThe first of each cluster by {} ({}{}), at any GPU count searched, by the estimate:\n{}",
      options.objective.name, options.objective.maximize ? "max" : "min",
      deadline ? ", the deadline met first" : "", t.str());
}

std::string layout_text(const sim::PlannedLayout& l) {
  const auto& p = l.parallelism;
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{}", p.tp, p.sp, p.pp, p.virtual_stages, p.cp,
                     p.ep, p.dp, p.micro_batch, p.global_batch, p.zero,
                     models::name_in(scenario::kRecomputeNames, p.recompute));
}

}  // namespace

// Over 100 lines: issue 37 moves this orchestration out and splits it.
// NOLINTNEXTLINE(readability-function-size)
int run_plan(const PlanCliOptions& o, Streams io, const Environment& env) {
  const VerbOutputs outputs{"plan", {{"--csv", o.csv_file}, {"--report", o.report_file}}};
  if (!outputs_ok(outputs.verb, outputs.outputs, {o.scenario.scenario, o.profile}, io)) {
    return kExitBadInput;
  }
  const auto variants = plan_variants(o, io, env);
  if (!variants) return kExitBadInput;
  const PlanVariants& v = *variants;
  const scenario::Scenario* s = &v.all.front().base;
  const sim::DeviceProfile* profile = &v.all.front().profile;
  const sim::SearchSpace& space = v.all.front().space;
  sim::PlanOptions options;
  // With a deadline the question is the cheapest plan that meets it.
  const std::string objective = !o.objective.empty() ? o.objective
                                : o.max_days <= 0    ? "days"
                                : v.priced()         ? "cost"
                                                     : "gpu-hours";
  try {
    const auto objectives = sim::parse_objectives(objective);
    if (objectives.size() != 1) throw std::invalid_argument("--objective takes one objective");
    options.objective = objectives.front();
  } catch (const std::invalid_argument& e) {
    io.err << fmt::format("myriad plan: error: --objective: {}\n", e.what());
    return kExitBadInput;
  }
  if (options.objective.name == "cost" && !v.priced()) {
    io.err << "myriad plan: error: --objective cost: a cluster searched gives no price "
              "(cluster.price_per_gpu_hour); set one, e.g. --set cluster.price_per_gpu_hour=2.5, "
              "or one per cluster with --vary\n";
    return kExitBadInput;
  }
  if (v.candidates() > sim::kMostCandidates) {
    io.err << fmt::format(
        "myriad plan: error: {}\n",
        v.all.size() == 1
            ? sim::search_too_large(space)
            : fmt::format("the {} searches (clusters x GPU counts) span {} candidates, more than "
                          "the {} a plan may try; each: {}: narrow --gpus, --vary or "
                          "--global-batch",
                          v.all.size(), v.candidates(), sim::kMostCandidates,
                          sim::search_too_large(space).empty()
                              ? fmt::format("{} candidates", v.all.front().candidates)
                              : sim::search_too_large(space)));
    return kExitBadInput;
  }
  options.top = static_cast<std::size_t>(o.top);
  options.headroom = o.headroom;
  options.balanced_stages = o.stages == "balanced";
  if (o.max_days > 0) options.max_days = o.max_days;
  const auto start = std::chrono::steady_clock::now();
  const auto search = search_variants(v, options, !o.report_file.empty(), io, env);
  if (!search) return kExitOk;  // mpirun: rank 0 goes on alone
  const sim::PlanResult& r = search->result;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string batch_text =
      space.batch_range
          ? fmt::format("{} to {}, each layout the largest its micro-batch x dp divides",
                        space.batch_range->lo, space.batch_range->hi)
          : fmt::format("{}", fmt::join(space.global_batch, ", "));
  io.out << fmt::format("{}\n  {}{} layers, {} tokens a sequence; global batch: {} ({})\n",
                        scenario::run_title(v.all.size() > 1 ? v.scenario : *s),
                        v.all.size() > 1
                            ? std::string{}
                            : fmt::format("{} x {}, ", s->cluster.gpus, s->cluster.gpu.name),
                        s->model.layers, s->model.seq_length, batch_text, v.batch_origin);
  if (v.all.size() > 1) io.out << searches_text(v);
  if (o.max_days > 0) {
    io.out << fmt::format("  deadline: {:g} days to {} tokens (--max-days); ranked by {}\n",
                          o.max_days, si_count(s->training.tokens), options.objective.name);
  }
  io.out << profile_line(*profile);
  std::string experts;
  if (!space.etp.empty()) experts += " x etp {tp, 1}";
  if (!space.prune.empty()) {
    std::vector<std::string> names;
    for (const auto& variant : space.prune) names.push_back(sim::prune_text(variant));
    experts += fmt::format(" x pruning {{{}}}", fmt::join(names, ", "));
  }
  io.out << fmt::format(
      "\n  searched: tp {{{}}} x pp {{{}}} x v {{{}}} x cp {{{}}} x ep {{{}}}{} x micro-batch "
      "{{{}}} x "
      "ZeRO {{{}}} x recompute {{none, selective, full}} x placement {{tp-cp-dp-pp, "
      "tp-cp-pp-dp}}; dp = GPUs / (tp pp cp); sp with tp; overlap as the scenario has it\n",
      fmt::join(space.tp, ", "), fmt::join(space.pp, ", "), fmt::join(space.virtual_stages, ", "),
      fmt::join(space.cp, ", "), fmt::join(space.ep, ", "), experts,
      fmt::join(space.micro_batch, ", "), fmt::join(space.zero, ", "));
  io.out << fmt::format(
      "  {} candidates in {:.2f} s ({:.0f}/s): {} pruned by the scenario checks, {} estimated "
      "({:.0f}/s), {} above {:.0f} % of usable memory\n",
      r.candidates, wall, static_cast<double>(r.candidates) / std::max(wall, 1e-9), r.pruned,
      r.evaluated, static_cast<double>(r.evaluated) / std::max(wall, 1e-9), r.over_memory,
      100 * options.headroom);
  if (options.balanced_stages) {
    io.out << fmt::format(
        "  {} layouts run faster (or fit only) with their stages balanced (--stages balanced)\n",
        r.balanced);
  }
  if (!r.pruned_by.empty()) {
    Table why({"pruned by", "candidates", "for example"}, "lrl");
    for (const auto& [key, by] : r.pruned_by) {
      why.add({key.empty() ? "(scenario)" : key, std::to_string(by.count), by.example});
    }
    io.out << "\n" << why.str();
  }
  if (const std::string empty = sim::empty_space_problem(r); !empty.empty()) {
    const bool batch = r.pruned_by.contains("parallelism.global_batch") && !space.batch_range;
    io.err << fmt::format("myriad plan: error: {}{}\n", empty,
                          batch ? "; a batch range (--global-batch A..B) lets each layout take "
                                  "the batch its micro-batch x dp divides"
                                : "");
    return kExitBadInput;
  }
  if (r.top.empty()) {
    io.out << "\nNo layout fits: loosen --headroom, add GPUs or give another global batch.\n";
    return kExitOk;
  }
  std::vector<Rescored> best;
  std::optional<ProgressLine> line;
  line.emplace(io, env, "plan");  // drawn while re-scoring
  const std::string what = fmt::format("re-scored by the {}", fmt::join(o.rescore, " and "));
  for (const auto& l : r.top) {
    if (o.rescore.empty()) {
      best.emplace_back(l, static_cast<int>(best.size()) + 1);
      continue;
    }
    line->update(best.size(), r.top.size(), what);
    const PlanVariant& x = v.all[l.variant];
    best.push_back(rescore(x.base, x.profile, l, static_cast<int>(best.size()) + 1, o));
  }
  line.reset();
  // Ranked again by the most faithful figures (the deadline first); ties keep the
  // estimate's order.
  std::stable_sort(best.begin(), best.end(), [&](const Rescored& a, const Rescored& b) {
    return sim::ranks_before(a.layout, b.layout, options);
  });
  // Growth (training.growth): every layout's days, GPU-hours and cost with the small
  // model's training added and the model's own shortened (the order stays).
  GrowthPhases growth(v);
  if (s->training.growth.given()) {
    try {
      for (auto& b : best) {
        const sim::GrowthPhase& g = *growth.of(b.layout.variant);
        const double rest = 1 - g.saved_fraction;
        b.layout.metrics = sim::with_growth(b.layout.metrics, g);
        if (b.days)
          b.days = sim::campaign::Interval{g.metrics.days + rest * b.days->mean,
                                           rest * b.days->half_width};
      }
    } catch (const std::invalid_argument& e) {
      io.err << fmt::format("myriad plan: error: {}: {}\n", scenario_name(o.scenario), e.what());
      return kExitBadInput;
    }
    io.out << fmt::format(
        "\n  growth (what-if): {}{};\n  days, GPU-hours and cost below include it (the small "
        "model's training by the analytic engine, the rest by the row's engine)\n",
        sim::describe_growth(*growth.of(best.front().layout.variant)),
        v.all.size() > 1 ? " (the best's cluster; each row its own)" : "");
  }
  const bool rescored = !o.rescore.empty();
  const bool simulated = std::any_of(
      best.begin(), best.end(), [](const Rescored& x) { return x.simulated_step_s.has_value(); });
  const bool campaigned =
      std::any_of(best.begin(), best.end(), [](const Rescored& x) { return x.days.has_value(); });
  const bool priced = v.priced();
  const bool deadline = o.max_days > 0;
  std::vector<std::string> headers = {"#"};
  std::string align = "r";
  if (rescored) {
    headers.emplace_back("est. #");
    align += 'r';
  }
  const bool batches = space.global_batch.size() > 1 || space.batch_range.has_value();
  if (v.several_hardware()) {
    headers.emplace_back("hardware");
    align += 'l';
  }
  if (v.several_counts()) {
    headers.emplace_back("GPUs");
    align += 'r';
  }
  const bool experts_tp = !space.etp.empty();
  const bool pruning = space.prune.size() > 1;
  for (const char* h : {"tp", "pp", "v", "cp", "ep"}) headers.emplace_back(h);
  align += "rrrrr";
  if (experts_tp) {
    headers.emplace_back("etp");
    align += 'r';
  }
  for (const char* h : {"dp", "mb"}) headers.emplace_back(h);
  align += "rr";
  if (pruning) {
    headers.emplace_back("pruning");
    align += 'l';
  }
  if (batches) {
    headers.emplace_back("batch");
    align += 'r';
  }
  for (const char* h : {"ZeRO", "recompute", "placement"}) headers.emplace_back(h);
  align += "rll";
  if (options.balanced_stages) {
    headers.emplace_back("stage layers");
    align += 'l';
  }
  headers.emplace_back("step time");
  align += 'r';
  if (simulated) {
    headers.emplace_back("vs estimate");
    align += 'r';
  }
  for (const char* h : {"MFU", "tokens/s", "days", "GPU-hours"}) headers.emplace_back(h);
  align += "rrrr";
  if (campaigned) {
    headers.emplace_back("ETTR");
    align += 'r';
  }
  if (priced) {
    headers.emplace_back("cost");
    align += 'r';
  }
  if (deadline) {
    headers.emplace_back("deadline");
    align += 'l';
  }
  headers.emplace_back("memory");
  headers.emplace_back("alike");
  headers.emplace_back("engine");
  align += "rrl";
  Table table(headers, align);
  int rank = 0;
  for (const auto& b : best) {
    const auto& l = b.layout;
    const auto& p = l.parallelism;
    std::vector<std::string> row = {std::to_string(++rank)};
    if (rescored) row.push_back(std::to_string(b.estimate_rank));
    if (v.several_hardware()) row.push_back(v.all[l.variant].hardware);
    if (v.several_counts()) row.push_back(scenario::grouped(l.metrics.gpus));
    for (const int n : {p.tp, p.pp, p.virtual_stages, p.cp, p.ep}) {
      row.push_back(std::to_string(n));
    }
    if (experts_tp) row.push_back(std::to_string(p.etp));
    for (const int n : {p.dp, p.micro_batch}) row.push_back(std::to_string(n));
    if (pruning) row.push_back(sim::prune_text(l.prune));
    if (batches) row.push_back(std::to_string(p.global_batch));
    for (std::string cell :
         {std::to_string(p.zero),
          std::string(models::name_in(scenario::kRecomputeNames, p.recompute)),
          std::string(models::name_in(scenario::kPlacementNames, p.placement))}) {
      row.push_back(std::move(cell));
    }
    if (options.balanced_stages) {
      row.push_back(p.stage_layers.empty() ? "even" : stage_layers_text(p.stage_layers));
    }
    row.push_back(seconds(l.metrics.step_time_s));
    if (simulated) {
      row.push_back(
          b.simulated_step_s
              ? fmt::format("{:+.1f} %", 100 * (*b.simulated_step_s / b.estimated_step_s - 1))
              : std::string("-"));
    }
    row.push_back(percent(l.metrics.mfu));
    row.push_back(si_count(l.metrics.tokens_per_s));
    row.push_back(b.days ? fmt::format("{:.1f} ± {:.1f}{}", b.days->mean, b.days->half_width,
                                       b.reached ? "" : " (not reached)")
                         : fmt::format("{:.1f}", l.metrics.days));
    row.push_back(si_count(l.metrics.gpu_hours));
    if (campaigned) row.push_back(b.ettr ? fmt::format("{:.3f}", b.ettr->mean) : std::string("-"));
    if (priced) row.push_back("$" + si_count(l.metrics.cost));
    if (deadline) row.push_back(deadline_text(l.metrics.days, o.max_days));
    row.push_back(percent(l.metrics.memory, 0));
    row.push_back(l.alike > 0 ? fmt::format("+{}", l.alike) : std::string{});
    row.push_back(b.engine);
    table.add(std::move(row));
  }
  io.out << fmt::format(
                "\nBest {} by {} ({}), within {:.0f} % of usable memory (alike: later layouts "
                "with the same step time and memory, folded into the row):\n",
                best.size(), options.objective.name, options.objective.maximize ? "max" : "min",
                100 * options.headroom)
         << table.str();
  if (deadline) io.out << deadline_summary(search->result, o.max_days, best.front().layout.metrics);
  if (v.several_hardware()) {
    io.out << per_hardware_table(v, *search, options, deadline);
    if (!priced) {
      io.out << "GPU-hours of different GPUs are no cost: give each cluster its price "
                "(--vary cluster.price_per_gpu_hour=..., zipped with the clusters) to rank by "
                "cost.\n";
    }
  }
  if (rescored) {
    io.out << fmt::format(
        "engine: which gave the row's figures. estimate: the analytic engine; step: the step "
        "engine's step time (SimGrid: contention, stragglers), the other figures scaled by it; "
        "campaign: days, tokens/s (goodput), GPU-hours (job and spares) and cost over {} seeds "
        "of the scenario's first policy set ({}), mean ± 95 % interval; est. #: the rank by "
        "the estimate.\n",
        o.seeds, s->policies.empty() ? std::string("none") : s->policies.front().name);
    for (const auto& b : best) {
      if (!b.step_error.empty()) {
        io.out << fmt::format("  est. #{}: the step engine could not play it: {}\n",
                              b.estimate_rank, b.step_error);
      }
    }
  }
  // The user's own overrides first: the layout is the best on that scenario.
  std::string sets;
  for (const auto& set : o.scenario.overrides) sets += " --set " + set;
  for (const auto& set : v.all[best.front().layout.variant].sets) sets += " --set " + set;
  for (const auto& set : sim::layout_overrides(best.front().layout.parallelism)) {
    sets += " --set " + set;
  }
  if (!space.prune.empty()) {
    for (const auto& set : sim::prune_overrides(best.front().layout.prune)) {
      sets += " --set " + set;
    }
  }
  if (s->training.precision == scenario::Precision::fp8) {
    io.out << "MFU: model FLOPs over the fp8 peak, the precision this job's GEMMs run at, as "
              "estimate leads with it (estimate also gives MFU against the bf16 peak).\n";
  }
  io.out << fmt::format(
      "\nThe best, to check under contention and stragglers, or over days with failures:\n"
      "  myriad simulate {}{}\n",
      o.scenario.scenario, sets);
  if (!o.csv_file.empty()) {
    std::string csv =
        "rank,tp,sp,pp,virtual_stages,cp,ep,dp,micro_batch,global_batch,zero,recompute,"
        "step_time_s,mfu,tokens_per_s,days,gpu_hours,cost_usd,memory_fraction,engine,"
        "estimate_rank,estimated_step_time_s,simulated_step_time_s,days_ci95,ettr,etp,pruning,"
        "stage_layers,gpus,hardware,meets_deadline\n";
    rank = 0;
    const auto optional = [](const std::optional<double>& x) {
      return x ? fmt::format("{:.9g}", *x) : std::string{};
    };
    for (const auto& b : best) {
      const sim::LayoutMetrics& m = b.layout.metrics;
      csv += fmt::format(
          "{},{},{:.9g},{:.6g},{:.9g},{:.6g},{:.9g},{},{:.6g},{},{},{:.9g},{},{},{},{},{},{},{},{},"
          "{}"
          "\n",
          ++rank, layout_text(b.layout), m.step_time_s, m.mfu, m.tokens_per_s, m.days, m.gpu_hours,
          priced ? fmt::format("{:.9g}", m.cost) : std::string{}, m.memory, b.engine,
          b.estimate_rank, b.estimated_step_s, optional(b.simulated_step_s),
          b.days ? optional(b.days->half_width) : std::string{},
          b.ettr ? optional(b.ettr->mean) : std::string{}, b.layout.parallelism.etp,
          sim::prune_text(b.layout.prune),
          fmt::join(b.layout.parallelism.stage_layers, " "),  // empty: even stages
          m.gpus, csv_field(v.all[b.layout.variant].hardware),
          deadline ? (m.days <= o.max_days ? "true" : "false") : "");
    }
    try {
      models::write_file_atomically(o.csv_file, csv, "the CSV table");
    } catch (const std::runtime_error& e) {
      io.err << fmt::format("myriad plan: error: {}\n", e.what());
      return kExitFailure;
    }
  }
  if (!o.report_file.empty()) {
    std::vector<sim::PlannedLayout> layouts;
    layouts.reserve(best.size());
    for (const auto& b : best) layouts.push_back(b.layout);
    if (!write_plan_report(o, v, options, *search, layouts, growth, io, env)) return kExitFailure;
  }
  return kExitOk;
}

}  // namespace myriad::cli
