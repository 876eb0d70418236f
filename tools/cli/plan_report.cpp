// `myriad plan --report`: the layouts estimated, drawn; the best ranked; the
// deadline, the GPU budget and which layouts meet the deadline.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "models/scenario/run_title.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/plan/sweep.hpp"
#include "tools/cli/configuration_report.hpp"
#include "tools/cli/plan_search.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

// What the report's subtitle says was searched: GPUs, clusters, batch, deadline.
std::string searched_text(const PlanCliOptions& o, const PlanVariants& v,
                          const sim::PlanOptions& options, const sim::PlanResult& r) {
  std::set<int> counts;
  std::vector<std::string> hardware;
  for (const auto& x : v.all) {
    counts.insert(x.base.cluster.gpus);
    if (std::find(hardware.begin(), hardware.end(), x.hardware) == hardware.end()) {
      hardware.push_back(x.hardware);
    }
  }
  std::vector<std::string> gpus;
  gpus.reserve(counts.size());
  for (const int n : counts) gpus.push_back(scenario::grouped(n));
  std::string text = fmt::format("{}; GPUs {} ({})", fmt::join(hardware, ", "),
                                 fmt::join(gpus, ", "), v.gpus_origin);
  const auto& first = v.all.front().space;
  text += first.batch_range ? fmt::format(
                                  "; global batch {} to {} sequences, each layout the "
                                  "largest its micro-batch x dp divides",
                                  first.batch_range->lo, first.batch_range->hi)
                            : fmt::format("; global batch {} ({})",
                                          fmt::join(first.global_batch, ", "), v.batch_origin);
  text += fmt::format("; {} candidate layouts, {} pruned, {} estimated", r.candidates, r.pruned,
                      r.evaluated);
  if (o.max_days > 0) {
    text += fmt::format("; deadline {:g} days: {} of the layouts within {:.0f} % of memory meet it",
                        options.max_days, r.meets_deadline, 100 * options.headroom);
  }
  return text;
}

}  // namespace

// Over 100 lines: the rows, the front and the notes in one pass.
// NOLINTNEXTLINE(readability-function-size)
bool write_plan_report(const PlanCliOptions& o, const PlanVariants& v,
                       const sim::PlanOptions& options, const PlanSearch& search,
                       const std::vector<sim::PlannedLayout>& best, GrowthPhases& growth,
                       Streams io, const Environment& env) {
  const sim::PlanResult& r = search.result;
  std::vector<std::size_t> indices = search.sample.kept();
  std::map<std::size_t, int> rank_of;
  std::map<std::size_t, const sim::PlannedLayout*> best_of;
  for (std::size_t i = 0; i < best.size(); ++i) {
    rank_of[best[i].index] = static_cast<int>(i) + 1;
    best_of[best[i].index] = &best[i];
    if (std::find(indices.begin(), indices.end(), best[i].index) == indices.end()) {
      indices.push_back(best[i].index);
    }
  }
  std::sort(indices.begin(), indices.end());
  struct Evaluated {
    scenario::Scenario s;
    sim::StepReport report;
    sim::LayoutMetrics m;
    std::size_t variant = 0;
  };
  std::vector<Evaluated> evaluated;
  evaluated.reserve(indices.size());
  std::vector<std::vector<double>> points;
  std::vector<bool> candidate;
  const bool deadline = o.max_days > 0;
  for (const std::size_t index : indices) {
    const PlanVariant& x = v.of(index);
    const std::size_t local = index - x.offset;
    Evaluated e{x.base, {}, {}, static_cast<std::size_t>(&x - v.all.data())};
    const auto found = best_of.find(index);
    sim::PlannedLayout l{local,
                         sim::layout_at(x.base.parallelism, x.space, local),
                         sim::prune_at(x.base, x.space, local),
                         {}};
    // A best layout as the search kept it (its balanced stage split, if any).
    if (found != best_of.end()) l.parallelism = found->second->parallelism;
    sim::apply_planned(e.s, l);
    e.report = sim::estimate(e.s, x.profile, sim::Detail::summary);
    e.m = sim::metrics_of(e.s, e.report);
    if (const sim::GrowthPhase* g = growth.of(e.variant)) e.m = sim::with_growth(e.m, *g);
    points.push_back({e.m.objective(options.objective.name), e.m.memory});
    candidate.push_back(e.m.memory <= options.headroom && e.m.days <= options.max_days);
    evaluated.push_back(std::move(e));
  }
  const std::vector<bool> front =
      sim::pareto_front(points, {options.objective, {"memory", false}}, candidate);
  std::string command = "myriad estimate " + o.scenario.scenario;
  for (const auto& set : o.scenario.overrides) command += " --set " + set;
  const PlanVariant& first = v.all.front();
  ConfigurationReport report(
      fmt::format("myriad plan {}", scenario_name(o.scenario)),
      fmt::format("{}: {}; the analytic engine's figures", scenario::run_title(v.scenario),
                  searched_text(o, v, options, r)),
      first.base, command,
      {{"hardware", "hardware"},
       {"deadline", "deadline"},
       {"tp", "tp"},
       {"pp", "pp"},
       {"virtual_stages", "v"},
       {"cp", "cp"},
       {"ep", "ep"},
       {"etp", "etp"},
       {"pruning", "pruning"},
       {"dp", "dp"},
       {"micro_batch", "micro-batch"},
       {"zero", "ZeRO"},
       {"recompute", "recompute"},
       {"placement", "placement"},
       {"global_batch", "global batch"}});
  report.set_objective(options.objective);
  report.set_front(
      {metric_key(options.objective.name), "memory"},
      fmt::format("Diamonds: the Pareto front of {} and memory among the layouts within {:.0f} % "
                  "of usable memory (--headroom){}.",
                  options.objective.name, 100 * options.headroom,
                  deadline ? fmt::format(" that meet the deadline of {:g} days", o.max_days) : ""));
  const bool moe = first.base.model.is_moe();
  for (std::size_t i = 0; i < indices.size(); ++i) {
    // The layout as played, derived values included (dp from the GPUs over tp pp
    // cp), not the search's spec, which keeps the base scenario's dp.
    const auto& p = evaluated[i].s.parallelism;
    const PlanVariant& x = v.all[evaluated[i].variant];
    nlohmann::json params = {
        {"hardware", x.hardware},
        {"tp", p.tp},
        {"pp", p.pp},
        {"virtual_stages", p.virtual_stages},
        {"cp", p.cp},
        {"ep", p.ep},
        {"dp", p.dp},
        {"micro_batch", p.micro_batch},
        {"zero", p.zero},
        {"recompute", std::string(models::name_in(scenario::kRecomputeNames, p.recompute))},
        {"placement", std::string(models::name_in(scenario::kPlacementNames, p.placement))},
        {"global_batch", p.global_batch}};
    if (deadline) params["deadline"] = evaluated[i].m.days <= o.max_days ? "meets" : "misses";
    if (moe) {
      params["etp"] = p.etp;
      params["pruning"] = sim::prune_text(evaluated[i].s.model.moe.prune);
    }
    std::vector<std::string> sets = x.sets;
    for (auto& set : sim::layout_overrides(p)) sets.push_back(std::move(set));
    const auto rank = rank_of.find(indices[i]);
    report.add(params, evaluated[i].s, evaluated[i].report, evaluated[i].m, sets, front[i],
               rank == rank_of.end() ? 0 : rank->second);
  }
  if (search.sample.seen() > search.sample.kept().size()) {
    report.add_note(fmt::format(
        "{} of the {} layouts estimated are drawn, evenly spaced in the search's order, and the "
        "best {}.",
        search.sample.kept().size(), search.sample.seen(), best.size()));
  }
  if (deadline) {
    report.add_note(fmt::format(
        "Deadline: {:g} days to {} tokens (--max-days). {} of the {} layouts estimated within "
        "{:.0f} % of usable memory meet it; the table ranks those first by {}, then the others "
        "by days. The deadline column says which meet it.",
        o.max_days, si_count(first.base.training.tokens), r.meets_deadline,
        r.evaluated - r.over_memory, 100 * options.headroom, options.objective.name));
  }
  for (const auto& why : v.skipped) report.add_note("Not searched: " + why + ".");
  report.add_note(fmt::format(
      "# in the table: the rank of the best {} by {}{}.", best.size(), options.objective.name,
      o.rescore.empty() ? std::string{}
                        : fmt::format(" after re-scoring by the {} (the points keep the "
                                      "analytic engine's figures)",
                                      fmt::join(o.rescore, " and "))));
  return write_html_report(o.report_file, report.data(), "plan", io, env);
}

}  // namespace myriad::cli
