// `myriad plan SCENARIO`: the layout search (sim/planning/layout_search.hpp); the best layouts by
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
#include <string_view>
#include <thread>

#include "models/plan/pipeline_schedule.hpp"
#include "models/scenario/pipeline_checks.hpp"
#include "models/scenario/run_title.hpp"
#include "models/scenario/text_file.hpp"
#include "sim/campaign/campaign_report.hpp"
#include "sim/campaign/policy_outcome.hpp"
#include "sim/planning/growth.hpp"
#include "sim/planning/layout_search.hpp"
#include "sim/planning/rescore.hpp"
#include "sim/planning/sweep.hpp"
#include "sim/step/step_in_child.hpp"
#include "tools/cli/configuration_report.hpp"
#include "tools/cli/csv.hpp"
#include "tools/cli/plan_options.hpp"
#include "tools/cli/plan_search.hpp"
#include "tools/cli/report_table.hpp"
#include "tools/cli/step_report.hpp"

namespace myriad::cli {
namespace {

// A layout of the best K played on the engines --rescore names (sim/planning/rescore.hpp): the
// step engine in a child process, then the campaign's first policy set over seeds (the
// others are for `campaign`), on the step engine's step where it ran.
sim::Rescored rescore(const models::scenario::Scenario& base, const sim::DeviceProfile& profile,
                      const sim::PlannedLayout& l, int rank, const PlanCliOptions& o) {
  sim::Rescored r(l, rank);
  models::scenario::Scenario s = base;
  sim::apply_planned(s, l);
  const sim::RescoreEngines engines = sim::rescore_engines(o.rescore);
  if (engines.step) {
    const sim::ChildStep played = sim::simulate_step_in_child(s, profile);
    if (played.ok && played.step_time_s > 0) {
      sim::rescore_by_step(r, s, played.step_time_s);
    } else {
      r.step_error = played.error;
    }
  }
  if (engines.campaign && !s.policies.empty()) {
    sim::campaign::CampaignOptions options;
    options.seeds = o.seeds;
    options.threads = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
    options.step_scale = r.step_scale();
    const auto report = sim::campaign::run_campaign(s, profile, options);
    const auto c = sim::campaign::policy_outcome(report.policies.front(), s.cluster.gpus_per_node);
    sim::rescore_by_campaign(r, s,
                             {{c.days.mean, c.days.half_width},
                              {c.ettr.mean, c.ettr.half_width},
                              c.reached,
                              c.gpu_hours,
                              c.tokens_per_s});
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
      models::scenario::grouped(static_cast<long long>(fit)), max_days, fastest.days,
      models::scenario::grouped(static_cast<long long>(fastest.gpus)));
}

// The searches beside the first: each cluster with its GPU counts.
std::string searches_text(const PlanVariants& v) {
  std::vector<std::string> lines;
  for (std::size_t i = 0; i < v.all.size(); ++i) {
    const auto& x = v.all[i];
    if (i > 0 && x.hardware == v.all[i - 1].hardware) {
      lines.back() += ", " + models::scenario::grouped(x.base.cluster.gpus);
      continue;
    }
    lines.push_back(fmt::format("    {} (rates of the {} profile): {}", x.hardware,
                                x.profile.device, models::scenario::grouped(x.base.cluster.gpus)));
  }
  return fmt::format("  {} searches, GPUs from {}:\n{}\n", v.all.size(), v.gpus_origin,
                     fmt::join(lines, "\n"));
}

// Comparing clusters: the layout that ranks first on each, at whichever GPU count.
std::string per_hardware_table(const PlanVariants& v, const PlanSearch& search,
                               const sim::PlanOptions& options, bool deadline) {
  Table t({"hardware", "GPUs", "tp", "pp", "v", "cp", "dp", "mb", "batch", "ZeRO", "recompute",
           "step time", "MFU", "days", "GPU-hours", "cost", "deadline", "memory"},
          "lrrrrrrrrrlrrrrrlr");
  for (const auto* l : sim::firsts_by_hardware(v, search, options)) {
    const auto& p = l->parallelism;
    const auto& m = l->metrics;
    t.add({v.all[l->variant].hardware, models::scenario::grouped(m.gpus), std::to_string(p.tp),
           std::to_string(p.pp), std::to_string(p.virtual_stages), std::to_string(p.cp),
           std::to_string(p.dp), std::to_string(p.micro_batch), std::to_string(p.global_batch),
           std::to_string(p.zero), p.recompute_label(), seconds(m.step_time_s), percent(m.mfu),
           fmt::format("{:.1f}", m.days), si_count(m.gpu_hours),
           std::isfinite(m.cost) ? "$" + si_count(m.cost) : "-",
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
                     models::name_in(models::scenario::kRecomputeNames, p.recompute));
}

// Why the searches are too many to try, or "" when they are not.
std::string too_large(const PlanVariants& v) {
  if (v.candidates() <= sim::kMostCandidates) return {};
  const sim::SearchSpace& space = v.all.front().space;
  if (v.all.size() == 1) return sim::search_too_large(space);
  return fmt::format(
      "the {} searches (clusters x GPU counts) span {} candidates, more than the {} a plan may "
      "try; each: {}: narrow --gpus, --vary or --global-batch",
      v.all.size(), v.candidates(), sim::kMostCandidates,
      sim::search_too_large(space).empty() ? fmt::format("{} candidates", v.all.front().candidates)
                                           : sim::search_too_large(space));
}

// The search's options from the command line's; nothing, said, on bad input.
std::optional<sim::PlanOptions> search_options(const PlanCliOptions& o, const PlanVariants& v,
                                               Streams io) {
  sim::PlanOptions options;
  try {
    const auto objectives =
        sim::parse_objectives(sim::plan_objective(o.objective, o.max_days, v.priced()));
    if (objectives.size() != 1) throw std::invalid_argument("--objective takes one objective");
    options.objective = objectives.front();
  } catch (const std::invalid_argument& e) {
    io.err << fmt::format("myriad plan: error: --objective: {}\n", e.what());
    return std::nullopt;
  }
  if (options.objective.name == "cost" && !v.priced()) {
    io.err << "myriad plan: error: --objective cost: a cluster searched gives no price "
              "(cluster.price_per_gpu_hour); set one, e.g. --set cluster.price_per_gpu_hour=2.5, "
              "or one per cluster with --vary\n";
    return std::nullopt;
  }
  if (const std::string why = too_large(v); !why.empty()) {
    io.err << fmt::format("myriad plan: error: {}\n", why);
    return std::nullopt;
  }
  options.top = static_cast<std::size_t>(o.top);
  options.headroom = o.headroom;
  options.balanced_stages = o.stages == "balanced";
  options.partial_recompute = o.partial_recompute;
  options.offload = o.offload;
  if (o.max_days > 0) options.max_days = o.max_days;
  return options;
}

// The lines above the tables: the job, the searches, the deadline and the profile.
std::string title_text(const PlanCliOptions& o, const PlanVariants& v,
                       const sim::PlanOptions& options) {
  const models::scenario::Scenario& s = v.all.front().base;
  const sim::SearchSpace& space = v.all.front().space;
  const std::string batch_text =
      space.batch_range
          ? fmt::format("{} to {}, each layout the largest its micro-batch x dp divides",
                        space.batch_range->lo, space.batch_range->hi)
          : fmt::format("{}", fmt::join(space.global_batch, ", "));
  std::string out =
      fmt::format("{}\n  {}{} layers, {} tokens a sequence; global batch: {} ({})\n",
                  models::scenario::run_title(v.all.size() > 1 ? v.scenario : s),
                  v.all.size() > 1 ? std::string{}
                                   : fmt::format("{} x {}, ", s.cluster.gpus, s.cluster.gpu.name),
                  s.model.layers, s.model.seq_length, batch_text, v.batch_origin);
  if (v.all.size() > 1) out += searches_text(v);
  if (o.max_days > 0) {
    out += fmt::format("  deadline: {:g} days to {} tokens (--max-days); ranked by {}\n",
                       o.max_days, si_count(s.training.tokens), options.objective.name);
  }
  return out + network_lines(s, true) + profile_line(v.all.front().profile);
}

// The schedules searched, where more than the scenario's 1F1B or interleaved.
std::string schedules_text(const PlanVariants& v) {
  const sim::SearchSpace& space = v.all.front().space;
  if (!space.schedule.empty()) {
    std::vector<std::string_view> names;
    for (const auto s : space.schedule) {
      names.push_back(s == models::scenario::Schedule::one_f_one_b
                          ? "1f1b (interleaved with v > 1)"
                          : models::name_in(models::scenario::kScheduleNames, s));
    }
    return fmt::format(" x schedule {{{}}}", fmt::join(names, ", "));
  }
  const auto& base = v.all.front().base.parallelism;
  const auto own = base.schedule;
  if (own == models::scenario::Schedule::combined_1f1b) {
    return fmt::format(
        "; schedule combined-1f1b{} where it runs (ep > 1; v > 1 with pp > 1), 1f1b or "
        "interleaved otherwise",
        base.delay_wgrad_compute ? " with delayed weight gradients" : "");
  }
  if (!models::splits_backward(own)) return "";
  return fmt::format("; schedule {} where v is 1 (interleaved otherwise)",
                     models::name_in(models::scenario::kScheduleNames, own));
}

// What was searched, how fast, and how many candidates were pruned and why.
std::string searched_text(const PlanVariants& v, const sim::PlanOptions& options,
                          const sim::PlanResult& r, double wall) {
  const sim::SearchSpace& space = v.all.front().space;
  std::string experts;
  if (!space.etp.empty()) experts += " x etp {tp, 1}";
  if (!space.prune.empty()) {
    std::vector<std::string> names;
    for (const auto& variant : space.prune) names.push_back(sim::prune_text(variant));
    experts += fmt::format(" x pruning {{{}}}", fmt::join(names, ", "));
  }
  std::string out = fmt::format(
      "\n  searched: tp {{{}}} x pp {{{}}} x v {{{}}} x cp {{{}}} x ep {{{}}}{} x micro-batch "
      "{{{}}} x "
      "ZeRO {{{}}} x recompute {{none, selective, full}} x placement {{tp-cp-dp-pp, "
      "tp-cp-pp-dp}}{}; dp = GPUs / (tp pp cp); sp with tp; overlap as the scenario has it\n",
      fmt::join(space.tp, ", "), fmt::join(space.pp, ", "), fmt::join(space.virtual_stages, ", "),
      fmt::join(space.cp, ", "), fmt::join(space.ep, ", "), experts,
      fmt::join(space.micro_batch, ", "), fmt::join(space.zero, ", "), schedules_text(v));
  out += fmt::format(
      "  {} candidates in {:.2f} s ({:.0f}/s): {} pruned by the scenario checks, {} estimated "
      "({:.0f}/s), {} above {:.0f} % of usable memory\n",
      r.candidates, wall, static_cast<double>(r.candidates) / std::max(wall, 1e-9), r.pruned,
      r.evaluated, static_cast<double>(r.evaluated) / std::max(wall, 1e-9), r.over_memory,
      100 * options.headroom);
  if (options.balanced_stages) {
    out += fmt::format(
        "  {} layouts run faster (or fit only) with their stages balanced (--stages balanced)\n",
        r.balanced);
  }
  if (options.partial_recompute) {
    out += fmt::format(
        "  {} layouts recomputing every layer fit with fewer recomputed (--partial-recompute)\n",
        r.partial);
  }
  if (options.offload) {
    out += fmt::format(
        "  {} layouts fit only with activations offloaded to host memory, {} of them by "
        "modules, {} by whole layers (--offload)\n",
        r.offloaded, r.offloaded_modules, r.offloaded - r.offloaded_modules);
  }
  if (!r.pruned_by.empty()) {
    Table why({"pruned by", "candidates", "for example"}, "lrl");
    for (const auto& [key, by] : r.pruned_by) {
      why.add({key.empty() ? "(scenario)" : key, std::to_string(by.count), by.example});
    }
    out += "\n" + why.str();
  }
  return out;
}

// The best layouts, each re-scored by the engines --rescore names (a progress line
// drawn meanwhile).
std::vector<sim::Rescored> rescored_best(const PlanCliOptions& o, const PlanVariants& v,
                                         const sim::PlanResult& r, Streams io,
                                         const Environment& env) {
  std::vector<sim::Rescored> best;
  ProgressLine line(io, env, "plan");
  const std::string what = fmt::format("re-scored by the {}", fmt::join(o.rescore, " and "));
  for (const auto& l : r.top) {
    if (o.rescore.empty()) {
      best.emplace_back(l, static_cast<int>(best.size()) + 1);
      continue;
    }
    line.update(best.size(), r.top.size(), what);
    const PlanVariant& x = v.all[l.variant];
    best.push_back(rescore(x.base, x.profile, l, static_cast<int>(best.size()) + 1, o));
  }
  return best;
}

// Growth (training.growth): every layout's days, GPU-hours and cost with the small
// model's training added and the model's own shortened (the order stays); false,
// said, when the small model cannot be planned.
bool add_growth(const PlanCliOptions& o, const PlanVariants& v, GrowthPhases& growth,
                std::vector<sim::Rescored>& best, Streams io) {
  if (!v.all.front().base.training.growth.given()) return true;
  try {
    for (auto& b : best) sim::add_growth(b, *growth.of(b.layout.variant));
  } catch (const std::invalid_argument& e) {
    io.err << fmt::format("myriad plan: error: {}: {}\n", scenario_name(o.scenario), e.what());
    return false;
  }
  io.out << fmt::format(
      "\n  growth (what-if): {}{};\n  days, GPU-hours and cost below include it (the small "
      "model's training by the analytic engine, the rest by the row's engine)\n",
      sim::describe_growth(*growth.of(best.front().layout.variant)),
      v.all.size() > 1 ? " (the best's cluster; each row its own)" : "");
  return true;
}

// The table's headers and alignment, the optional columns where `c` shows them.
Table best_table_frame(const sim::PlanColumns& c) {
  std::vector<std::string> headers = {"#"};
  std::string align = "r";
  const auto add = [&](bool shown, std::initializer_list<const char*> names, const char* how) {
    if (!shown) return;
    for (const char* h : names) headers.emplace_back(h);
    align += how;
  };
  add(c.rescored, {"est. #"}, "r");
  add(c.hardware, {"hardware"}, "l");
  add(c.variant, {"variant"}, "l");
  add(c.gpus, {"GPUs"}, "r");
  add(true, {"tp", "pp", "v", "cp", "ep"}, "rrrrr");
  add(c.schedule, {"schedule"}, "l");
  add(c.etp, {"etp"}, "r");
  add(true, {"dp", "mb"}, "rr");
  add(c.pruning, {"pruning"}, "l");
  add(c.batch, {"batch"}, "r");
  add(true, {"ZeRO", "recompute", "placement"}, "rll");
  add(c.stages, {"stage layers"}, "l");
  add(true, {"step time"}, "r");
  add(c.simulated, {"vs estimate"}, "r");
  add(true, {"MFU", "tokens/s", "days", "GPU-hours"}, "rrrr");
  add(c.campaigned, {"ETTR"}, "r");
  add(c.priced, {"cost"}, "r");
  add(c.deadline, {"deadline"}, "l");
  add(true, {"memory", "alike", "engine"}, "rrl");
  return Table(headers, align);
}

// One row of the table of the best.
std::vector<std::string> best_row(const sim::Rescored& b, int rank, const PlanVariants& v,
                                  const sim::PlanColumns& c, double max_days) {
  const auto& l = b.layout;
  const auto& p = l.parallelism;
  const auto& m = l.metrics;
  std::vector<std::string> row = {std::to_string(rank)};
  if (c.rescored) row.push_back(std::to_string(b.estimate_rank));
  if (c.hardware) row.push_back(v.all[l.variant].hardware);
  if (c.variant) row.push_back(sim::variant_label(v, l.variant));
  if (c.gpus) row.push_back(models::scenario::grouped(m.gpus));
  for (const int n : {p.tp, p.pp}) row.push_back(std::to_string(n));
  // Marked where the embedding or the loss takes a layer's place (notes_text).
  row.push_back(std::to_string(p.virtual_stages) +
                (p.embedding_as_layer || p.loss_as_layer ? "*" : ""));
  for (const int n : {p.cp, p.ep}) row.push_back(std::to_string(n));
  if (c.schedule) row.emplace_back(models::name_in(models::scenario::kScheduleNames, p.schedule));
  if (c.etp) row.push_back(std::to_string(p.etp));
  for (const int n : {p.dp, p.micro_batch}) row.push_back(std::to_string(n));
  if (c.pruning) row.push_back(sim::prune_text(l.prune));
  if (c.batch) row.push_back(std::to_string(p.global_batch));
  row.push_back(std::to_string(p.zero));
  row.emplace_back(p.recompute_label());
  row.emplace_back(models::name_in(models::scenario::kRankOrderNames, p.placement));
  if (c.stages) row.push_back(p.stage_layers.empty() ? "even" : stage_layers_text(p.stage_layers));
  row.push_back(seconds(m.step_time_s));
  if (c.simulated) {
    row.push_back(
        b.simulated_step_s
            ? fmt::format("{:+.1f} %", 100 * (*b.simulated_step_s / b.estimated_step_s - 1))
            : std::string("-"));
  }
  row.push_back(percent(m.mfu));
  row.push_back(si_count(m.tokens_per_s));
  row.push_back(b.days ? fmt::format("{:.1f} ± {:.1f}{}", b.days->mean, b.days->half_width,
                                     b.reached ? "" : " (not reached)")
                       : fmt::format("{:.1f}", m.days));
  row.push_back(si_count(m.gpu_hours));
  if (c.campaigned) row.push_back(b.ettr ? fmt::format("{:.3f}", b.ettr->mean) : std::string("-"));
  if (c.priced) row.push_back("$" + si_count(m.cost));
  if (c.deadline) row.push_back(deadline_text(m.days, max_days));
  row.push_back(percent(m.memory, 0));
  row.push_back(l.alike > 0 ? fmt::format("+{}", l.alike) : std::string{});
  row.push_back(b.engine);
  return row;
}

std::string best_table(const PlanCliOptions& o, const PlanVariants& v,
                       const sim::PlanOptions& options, const std::vector<sim::Rescored>& best,
                       const sim::PlanColumns& c) {
  Table table = best_table_frame(c);
  int rank = 0;
  for (const auto& b : best) table.add(best_row(b, ++rank, v, c, o.max_days));
  return fmt::format(
             "\nBest {} by {} ({}), within {:.0f} % of usable memory (alike: later layouts "
             "with the same step time and memory, folded into the row):\n",
             best.size(), options.objective.name, options.objective.maximize ? "max" : "min",
             100 * options.headroom) +
         table.str();
}

// Under the table: the deadline, each cluster's first, which engine gave what.
std::string notes_text(const PlanCliOptions& o, const PlanVariants& v,
                       const sim::PlanOptions& options, const PlanSearch& search,
                       const std::vector<sim::Rescored>& best, const sim::PlanColumns& c) {
  std::string out;
  if (c.deadline) out += deadline_summary(search.result, o.max_days, best.front().layout.metrics);
  out += sim::counted_layers_note(best);
  // The scenario's own schedule, where no row shown runs it.
  const auto own = v.all.front().base.parallelism.schedule;
  if (v.all.front().space.schedule.empty() && models::named_schedule(own) &&
      std::none_of(best.begin(), best.end(), [own](const sim::Rescored& b) {
        return b.layout.parallelism.schedule == own;
      })) {
    out += fmt::format(
        "No row runs the scenario's {}: where a layout cannot (the checks say why: `myriad "
        "estimate` on it), it runs 1F1B or interleaved; --schedules {} searches only where it "
        "runs.\n",
        models::name_in(models::scenario::kScheduleNames, own),
        models::name_in(models::scenario::kScheduleNames, own));
  }
  if (v.several_hardware()) {
    out += per_hardware_table(v, search, options, c.deadline);
    if (!c.priced) {
      out +=
          "GPU-hours of different GPUs are no cost: give each cluster its price "
          "(--vary cluster.price_per_gpu_hour=..., zipped with the clusters) to rank by cost.\n";
    }
  }
  if (c.rescored) {
    const models::scenario::Scenario& s = v.all.front().base;
    out += fmt::format(
        "engine: which gave the row's figures. estimate: the analytic engine; step: the step "
        "engine's step time (SimGrid: contention, stragglers), the other figures scaled by it; "
        "campaign: days, tokens/s (goodput), GPU-hours (job and spares) and cost over {} seeds "
        "of the scenario's first policy set ({}), mean ± 95 % interval; est. #: the rank by "
        "the estimate.\n",
        o.seeds, s.policies.empty() ? std::string("none") : s.policies.front().name);
    for (const auto& b : best) {
      if (!b.step_error.empty()) {
        out += fmt::format("  est. #{}: the step engine could not play it: {}\n", b.estimate_rank,
                           b.step_error);
      }
    }
  }
  return out;
}

// The command that checks the best on the slower engines; the user's own overrides
// first: the layout is the best on that scenario.
std::string simulate_line(const PlanCliOptions& o, const PlanVariants& v,
                          const sim::PlannedLayout& best) {
  std::string out;
  if (v.all.front().base.training.precision == models::scenario::Precision::fp8) {
    out +=
        "MFU: model FLOPs over the fp8 peak, the precision this job's GEMMs run at, as "
        "estimate leads with it (estimate also gives MFU against the bf16 peak).\n";
  }
  std::string sets;
  for (const auto& set : o.scenario.overrides) sets += " --set " + set;
  for (const auto& set : sim::best_overrides(v, best)) sets += " --set " + set;
  return out + fmt::format(
                   "\nThe best, to check under contention and stragglers, or over days with "
                   "failures:\n  myriad simulate {}{}\n",
                   o.scenario.scenario, sets);
}

std::string plan_csv(const PlanCliOptions& o, const PlanVariants& v,
                     const std::vector<sim::Rescored>& best, bool priced) {
  std::string csv =
      "rank,tp,sp,pp,virtual_stages,cp,ep,dp,micro_batch,global_batch,zero,recompute,"
      "step_time_s,mfu,tokens_per_s,days,gpu_hours,cost_usd,memory_fraction,engine,"
      "estimate_rank,estimated_step_time_s,simulated_step_time_s,days_ci95,ettr,etp,pruning,"
      "stage_layers,gpus,hardware,meets_deadline,schedule,recompute_layers,offload_layers,"
      "offload_modules,variant\n";
  int rank = 0;
  const auto optional = [](const std::optional<double>& x) {
    return x ? fmt::format("{:.9g}", *x) : std::string{};
  };
  for (const auto& b : best) {
    const sim::LayoutMetrics& m = b.layout.metrics;
    csv += fmt::format(
        "{},{},{:.9g},{:.6g},{:.9g},{:.6g},{:.9g},{},{:.6g},{},{},{:.9g},{},{},{},{},{},{},{},{},"
        "{},{},{},{},{},{}\n",
        ++rank, layout_text(b.layout), m.step_time_s, m.mfu, m.tokens_per_s, m.days, m.gpu_hours,
        priced ? fmt::format("{:.9g}", m.cost) : std::string{}, m.memory, b.engine, b.estimate_rank,
        b.estimated_step_s, optional(b.simulated_step_s),
        b.days ? optional(b.days->half_width) : std::string{},
        b.ettr ? optional(b.ettr->mean) : std::string{}, b.layout.parallelism.etp,
        sim::prune_text(b.layout.prune),
        fmt::join(b.layout.parallelism.stage_layers, " "),  // empty: even stages
        m.gpus, csv_field(v.all[b.layout.variant].hardware),
        o.max_days > 0 ? (m.days <= o.max_days ? "true" : "false") : "",
        models::name_in(models::scenario::kScheduleNames, b.layout.parallelism.schedule),
        b.layout.parallelism.recompute_layers, b.layout.parallelism.offload_layers,
        // Space-separated, as stage_layers (no quoting); empty without offload.
        models::scenario::offload_module_names(b.layout.parallelism.offload_modules, " "),
        csv_field(sim::variant_label(v, b.layout.variant)));
  }
  return csv;
}

// The CSV table and the HTML report, where asked for.
int write_plan_outputs(const PlanCliOptions& o, const PlanVariants& v,
                       const sim::PlanOptions& options, const PlanSearch& search,
                       const std::vector<sim::Rescored>& best, GrowthPhases& growth, Streams io,
                       const Environment& env) {
  if (!o.csv_file.empty()) {
    try {
      models::scenario::write_file_atomically(o.csv_file, plan_csv(o, v, best, v.priced()),
                                              "the CSV table");
    } catch (const std::runtime_error& e) {
      io.err << fmt::format("myriad plan: error: {}\n", e.what());
      return kExitFailure;
    }
  }
  if (!o.report_file.empty()) {
    std::vector<sim::PlannedLayout> layouts;
    layouts.reserve(best.size());
    for (const auto& b : best) layouts.push_back(b.layout);
    if (!write_plan_report(o, v, options, search, layouts, growth, io, env)) return kExitFailure;
  }
  return kExitOk;
}

// The search's result said: the empty space as an error, no fit as a note.
// Nothing to add when there are layouts to show.
std::optional<int> nothing_to_show(const sim::PlanResult& r, const sim::SearchSpace& space,
                                   Streams io) {
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
  return std::nullopt;
}

}  // namespace

int run_plan(const PlanCliOptions& o, Streams io, const Environment& env) {
  const VerbOutputs outputs{"plan", {{"--csv", o.csv_file}, {"--report", o.report_file}}};
  if (!outputs_ok(outputs.verb, outputs.outputs, {o.scenario.scenario, o.profile}, io)) {
    return kExitBadInput;
  }
  const auto variants = plan_variants(o, io, env);
  if (!variants) return kExitBadInput;
  const PlanVariants& v = *variants;
  const auto options = search_options(o, v, io);
  if (!options) return kExitBadInput;
  const auto start = std::chrono::steady_clock::now();
  const auto search = search_variants(v, *options, !o.report_file.empty(), io, env);
  if (!search) return kExitOk;  // mpirun: rank 0 goes on alone
  const sim::PlanResult& r = search->result;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  io.out << title_text(o, v, *options) << searched_text(v, *options, r, wall);
  if (const auto done = nothing_to_show(r, v.all.front().space, io)) return *done;
  std::vector<sim::Rescored> best = rescored_best(o, v, r, io, env);
  sim::rank_rescored(best, *options);
  GrowthPhases growth(v);
  if (!add_growth(o, v, growth, best, io)) return kExitBadInput;
  const sim::PlanColumns columns =
      sim::plan_columns(v, best, *options, !o.rescore.empty(), o.max_days > 0);
  io.out << best_table(o, v, *options, best, columns)
         << notes_text(o, v, *options, *search, best, columns)
         << simulate_line(o, v, best.front().layout);
  return write_plan_outputs(o, v, *options, *search, best, growth, io, env);
}

}  // namespace myriad::cli
