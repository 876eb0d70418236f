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
#include "sim/planning/sweep.hpp"
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
  for (const int n : counts) gpus.push_back(models::scenario::grouped(n));
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

// The report's frame: title, subtitle, the base scenario, its command and the columns.
ConfigurationReport plan_report_frame(const PlanCliOptions& o, const PlanVariants& v,
                                      const sim::PlanOptions& options, const sim::PlanResult& r) {
  std::string command = "myriad estimate " + o.scenario.scenario;
  for (const auto& set : o.scenario.overrides) command += " --set " + set;
  ConfigurationReport report(
      fmt::format("myriad plan {}", scenario_name(o.scenario)),
      fmt::format("{}: {}; the analytic engine's figures", models::scenario::run_title(v.scenario),
                  searched_text(o, v, options, r)),
      v.all.front().base, command,
      {{"hardware", "hardware"},
       {"variant", "variant"},
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
       {"schedule", "schedule"},
       {"global_batch", "global batch"}});
  report.set_objective(options.objective);
  report.set_front(
      {metric_key(options.objective.name), "memory"},
      fmt::format(
          "Diamonds: the Pareto front of {} and memory among the layouts within {:.0f} % "
          "of usable memory (--headroom){}.",
          options.objective.name, 100 * options.headroom,
          o.max_days > 0 ? fmt::format(" that meet the deadline of {:g} days", o.max_days) : ""));
  return report;
}

// One point's parameters: the layout as played, derived values included (dp from
// the GPUs over tp pp cp), not the search's spec, which keeps the base scenario's dp.
nlohmann::json point_params(const PlanCliOptions& o, const PlanVariants& v,
                            const sim::PlanPoint& e) {
  const auto& p = e.s.parallelism;
  nlohmann::json params = {
      {"hardware", v.all[e.variant].hardware},
      {"variant", sim::variant_label(v, e.variant)},
      {"tp", p.tp},
      {"pp", p.pp},
      {"virtual_stages", p.virtual_stages},
      {"cp", p.cp},
      {"ep", p.ep},
      {"dp", p.dp},
      {"micro_batch", p.micro_batch},
      {"zero", p.zero},
      {"recompute", p.recompute_label()},
      {"placement", std::string(models::name_in(models::scenario::kRankOrderNames, p.placement))},
      {"schedule", std::string(models::name_in(models::scenario::kScheduleNames, p.schedule))},
      {"global_batch", p.global_batch}};
  if (o.max_days > 0) params["deadline"] = e.m.days <= o.max_days ? "meets" : "misses";
  if (v.all.front().base.model.is_moe()) {
    params["etp"] = p.etp;
    params["pruning"] = sim::prune_text(e.s.model.moe.prune);
  }
  return params;
}

// The notes under the report: what is drawn, the deadline, what was not searched, the ranks.
void add_plan_notes(ConfigurationReport& report, const PlanCliOptions& o, const PlanVariants& v,
                    const sim::PlanOptions& options, const PlanSearch& search, std::size_t best) {
  const sim::PlanResult& r = search.result;
  if (search.sample.seen() > search.sample.kept().size()) {
    report.add_note(fmt::format(
        "{} of the {} layouts estimated are drawn, evenly spaced in the search's order, and the "
        "best {}.",
        search.sample.kept().size(), search.sample.seen(), best));
  }
  if (o.max_days > 0) {
    report.add_note(fmt::format(
        "Deadline: {:g} days to {} tokens (--max-days). {} of the {} layouts estimated within "
        "{:.0f} % of usable memory meet it; the table ranks those first by {}, then the others "
        "by days. The deadline column says which meet it.",
        o.max_days, si_count(v.all.front().base.training.tokens), r.meets_deadline,
        r.evaluated - r.over_memory, 100 * options.headroom, options.objective.name));
  }
  for (const auto& why : v.skipped) report.add_note("Not searched: " + why + ".");
  report.add_note(fmt::format(
      "# in the table: the rank of the best {} by {}{}.", best, options.objective.name,
      o.rescore.empty() ? std::string{}
                        : fmt::format(" after re-scoring by the {} (the points keep the "
                                      "analytic engine's figures)",
                                      fmt::join(o.rescore, " and "))));
}

}  // namespace

bool write_plan_report(const PlanCliOptions& o, const PlanVariants& v,
                       const sim::PlanOptions& options, const PlanSearch& search,
                       const std::vector<sim::PlannedLayout>& best, GrowthPhases& growth,
                       Streams io, const Environment& env) {
  ConfigurationReport report = plan_report_frame(o, v, options, search.result);
  for (const sim::PlanPoint& e : sim::plan_points(v, options, search, best, growth)) {
    std::vector<std::string> sets = v.all[e.variant].sets;
    for (auto& set : sim::layout_overrides(e.s.parallelism, v.all[e.variant].base.parallelism)) {
      sets.push_back(std::move(set));
    }
    report.add(point_params(o, v, e), e.s, e.report, e.m, sets, e.front, e.rank);
  }
  add_plan_notes(report, o, v, options, search, best.size());
  return write_html_report(o.report_file, report.data(), "plan", io, env);
}

}  // namespace myriad::cli
