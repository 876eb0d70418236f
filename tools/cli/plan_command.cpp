// `myriad plan SCENARIO`: the layout search (sim/plan/layout_search.hpp); the best layouts by
// an objective, how many candidates were pruned and why, and the `--set` line that reproduces
// the best one for `estimate`, `simulate` or `campaign`.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <thread>

#include "models/scenario/run_title.hpp"
#include "models/scenario/text_file.hpp"
#include "sim/campaign/campaign_report.hpp"
#include "sim/plan/growth.hpp"
#include "sim/plan/layout_search.hpp"
#include "sim/plan/sweep.hpp"
#include "sim/step/step_in_child.hpp"
#include "tools/cli/configuration_report.hpp"
#include "tools/cli/plan_options.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

// The layouts a report draws: every one estimated, thinned evenly (every other
// one dropped, then every fourth kept, ...) beyond this many, so that memory
// stays flat and the browser draws quickly.
constexpr std::size_t kMostReportLayouts = 10000;

class LayoutSample {
 public:
  void add(std::size_t index) {
    if (seen_++ % stride_ != 0) return;
    if (kept_.size() == kMostReportLayouts) {
      thin();
      if ((seen_ - 1) % stride_ != 0) return;
    }
    kept_.push_back(index);
  }
  // Another process's sample (mpirun): the union, thinned evenly to the most.
  void absorb(const std::vector<std::size_t>& kept, std::size_t seen) {
    kept_.insert(kept_.end(), kept.begin(), kept.end());
    std::sort(kept_.begin(), kept_.end());
    seen_ += seen;
    while (kept_.size() > kMostReportLayouts) thin();
  }
  [[nodiscard]] const std::vector<std::size_t>& kept() const { return kept_; }
  [[nodiscard]] std::size_t seen() const { return seen_; }

 private:
  void thin() {
    std::vector<std::size_t> half;
    for (std::size_t i = 0; i < kept_.size(); i += 2) half.push_back(kept_[i]);
    kept_ = std::move(half);
    stride_ *= 2;
  }

  std::vector<std::size_t> kept_;
  std::size_t seen_ = 0;
  std::size_t stride_ = 1;
};

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
      m.tokens_per_s /= scale;
      m.mfu /= scale;
      m.days *= scale;
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

std::string layout_text(const sim::PlannedLayout& l) {
  const auto& p = l.parallelism;
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{}", p.tp, p.sp, p.pp, p.virtual_stages, p.cp,
                     p.ep, p.dp, p.micro_batch, p.global_batch, p.zero,
                     models::name_in(scenario::kRecomputeNames, p.recompute));
}

bool write_report(const PlanCliOptions& o, const scenario::Scenario& base,
                  const sim::DeviceProfile& profile, const sim::SearchSpace& space,
                  const sim::PlanOptions& options, const sim::PlanResult& r,
                  const LayoutSample& sample, const std::vector<Rescored>& best,
                  const sim::GrowthPhase* growth, Streams io, const Environment& env) {
  std::vector<std::pair<std::size_t, scenario::ParallelSpec>> layouts;
  for (const std::size_t index : sample.kept()) {
    layouts.emplace_back(index, sim::layout_at(base.parallelism, space, index));
  }
  const bool moe = base.model.is_moe();
  std::map<std::size_t, int> rank_of;
  for (std::size_t i = 0; i < best.size(); ++i) {
    rank_of[best[i].layout.index] = static_cast<int>(i) + 1;
    const bool drawn = std::any_of(layouts.begin(), layouts.end(),
                                   [&](const auto& l) { return l.first == best[i].layout.index; });
    if (!drawn) layouts.emplace_back(best[i].layout.index, best[i].layout.parallelism);
  }
  std::sort(layouts.begin(), layouts.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  struct Evaluated {
    scenario::Scenario s;
    sim::StepReport report;
    sim::LayoutMetrics m;
  };
  std::vector<Evaluated> evaluated;
  evaluated.reserve(layouts.size());
  std::vector<std::vector<double>> points;
  std::vector<bool> candidate;
  for (const auto& [index, p] : layouts) {
    Evaluated e{base, {}, {}};
    sim::apply_planned(e.s, {index, p, sim::prune_at(base, space, index), {}});
    e.report = sim::estimate(e.s, profile, sim::Detail::summary);
    e.m = sim::metrics_of(e.s, e.report);
    if (growth != nullptr) e.m = sim::with_growth(e.m, *growth);
    points.push_back({e.m.objective(options.objective.name), e.m.memory});
    candidate.push_back(e.m.memory <= options.headroom);
    evaluated.push_back(std::move(e));
  }
  const std::vector<bool> front =
      sim::pareto_front(points, {options.objective, {"memory", false}}, candidate);
  std::string command = "myriad estimate " + o.scenario.scenario;
  for (const auto& set : o.scenario.overrides) command += " --set " + set;
  ConfigurationReport report(
      fmt::format("myriad plan {}", scenario_name(o.scenario)),
      fmt::format("{} x {}: {} candidate layouts, {} pruned, {} estimated; the analytic engine's "
                  "figures",
                  base.cluster.gpus, base.cluster.gpu.name, r.candidates, r.pruned, r.evaluated),
      base, command,
      {{"tp", "tp"},
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
  report.set_front({metric_key(options.objective.name), "memory"},
                   fmt::format("Diamonds: the Pareto front of {} and memory among the layouts "
                               "within {:.0f} % of usable memory (--headroom).",
                               options.objective.name, 100 * options.headroom));
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    // The layout as played, derived values included (dp from the GPUs over tp pp
    // cp), not the search's spec, which keeps the base scenario's dp.
    const auto& p = evaluated[i].s.parallelism;
    nlohmann::json params = {
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
    if (moe) {
      params["etp"] = p.etp;
      params["pruning"] = sim::prune_text(sim::prune_at(base, space, layouts[i].first));
    }
    const auto rank = rank_of.find(layouts[i].first);
    report.add(params, evaluated[i].s, evaluated[i].report, evaluated[i].m,
               sim::layout_overrides(p), front[i], rank == rank_of.end() ? 0 : rank->second);
  }
  if (sample.seen() > sample.kept().size()) {
    report.add_note(
        fmt::format("{} of the {} layouts estimated are drawn, evenly spaced in the "
                    "search's order, and the best {}.",
                    sample.kept().size(), sample.seen(), best.size()));
  }
  report.add_note(fmt::format(
      "# in the table: the rank of the best {} by {}{}.", best.size(), options.objective.name,
      o.rescore.empty() ? std::string{}
                        : fmt::format(" after re-scoring by the {} (the points keep the "
                                      "analytic engine's figures)",
                                      fmt::join(o.rescore, " and "))));
  return write_html_report(o.report_file, report.data(), "plan", io, env);
}

}  // namespace

// Over 100 lines: issue 37 moves this orchestration out and splits it.
// NOLINTNEXTLINE(readability-function-size)
int run_plan(const PlanCliOptions& o, Streams io, const Environment& env) {
  const VerbOutputs outputs{"plan", {{"--csv", o.csv_file}, {"--report", o.report_file}}};
  if (!outputs_ok(outputs.verb, outputs.outputs, {o.scenario.scenario, o.profile}, io)) {
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
  const auto s = load_for_cli(o.scenario, io, env, nullptr, &outputs);
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
  try {
    space.prune = sim::parse_prune_axis(*s, o.prune);
  } catch (const std::exception& e) {
    io.err << fmt::format("myriad plan: error: --prune: {}\n", e.what());
    return kExitBadInput;
  }
  if (const std::string why = sim::search_too_large(space); !why.empty()) {
    io.err << "myriad plan: error: " << why << "\n";
    return kExitBadInput;
  }
  options.top = static_cast<std::size_t>(o.top);
  options.headroom = o.headroom;
  options.balanced_stages = o.stages == "balanced";
  // This process's share of the candidates (all of them without mpirun).
  const auto ranks = static_cast<std::size_t>(env.world.size);
  const auto own = static_cast<std::size_t>(env.world.rank);
  const std::size_t total = (sim::candidate_count(space) + ranks - 1 - own) / ranks;
  std::optional<ProgressLine> line;  // erased when the search ends
  if (own == 0) {
    line.emplace(io, env, "plan");
    options.progress = [&line, total](std::size_t n) { line->update(n, total, "candidates"); };
  }
  const auto start = std::chrono::steady_clock::now();
  LayoutSample sample;
  if (!o.report_file.empty()) {
    options.on_evaluated = [&sample](std::size_t index, const scenario::ParallelSpec&) {
      sample.add(index);
    };
  }
  // Under mpirun each rank searches its share; rank 0 merges and goes on alone.
  const World& world = env.world;
  options.shard = world.rank;
  options.shards = world.size;
  sim::PlanResult r = sim::search_layouts(*s, *profile, space, options);
  if (world.size > 1) {
    nlohmann::json mine = sim::plan_to_json(r);
    mine["sample"] = sample.kept();
    mine["seen"] = sample.seen();
    const std::vector<std::string> parts = world.gather(mine.dump());
    if (world.rank != 0) return kExitOk;
    std::vector<sim::PlanResult> shards;
    LayoutSample all;
    for (const std::string& text : parts) {
      const auto j = nlohmann::json::parse(text);
      shards.push_back(sim::plan_from_json(j, *s, space));
      all.absorb(j.at("sample").get<std::vector<std::size_t>>(), j.at("seen").get<std::size_t>());
    }
    r = sim::merge_plans(shards, options);
    sample = std::move(all);
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  line.reset();
  io.out << fmt::format("{}\n  {} x {}, {} layers, {} tokens a sequence; global batch: {} ({})\n",
                        scenario::run_title(*s), s->cluster.gpus, s->cluster.gpu.name,
                        s->model.layers, s->model.seq_length, fmt::join(space.global_batch, ", "),
                        batch_origin);
  io.out << profile_line(*profile);
  std::string experts;
  if (!space.etp.empty()) experts += " x etp {tp, 1}";
  if (!space.prune.empty()) {
    std::vector<std::string> names;
    for (const auto& v : space.prune) names.push_back(sim::prune_text(v));
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
    io.err << fmt::format("myriad plan: error: {}\n", empty);
    return kExitBadInput;
  }
  if (r.top.empty()) {
    io.out << "\nNo layout fits: loosen --headroom, add GPUs or give another global batch.\n";
    return kExitOk;
  }
  std::vector<Rescored> best;
  line.emplace(io, env, "plan");  // drawn while re-scoring
  const std::string what = fmt::format("re-scored by the {}", fmt::join(o.rescore, " and "));
  for (const auto& l : r.top) {
    if (o.rescore.empty()) {
      best.emplace_back(l, static_cast<int>(best.size()) + 1);
      continue;
    }
    line->update(best.size(), r.top.size(), what);
    best.push_back(rescore(*s, *profile, l, static_cast<int>(best.size()) + 1, o));
  }
  line.reset();
  // Ranked again by the most faithful figures; ties keep the estimate's order.
  std::stable_sort(best.begin(), best.end(), [&](const Rescored& a, const Rescored& b) {
    const double x = a.layout.metrics.objective(options.objective.name);
    const double y = b.layout.metrics.objective(options.objective.name);
    return options.objective.maximize ? x > y : x < y;
  });
  // Growth (training.growth): every layout's days, GPU-hours and cost with the small
  // model's training added and the model's own shortened (the order stays).
  std::optional<sim::GrowthPhase> growth;
  if (s->training.growth.given()) {
    try {
      growth = sim::growth_phase(*s, *profile);
    } catch (const std::invalid_argument& e) {
      io.err << fmt::format("myriad plan: error: {}: {}\n", scenario_name(o.scenario), e.what());
      return kExitBadInput;
    }
    const double rest = 1 - growth->saved_fraction;
    for (auto& b : best) {
      b.layout.metrics = sim::with_growth(b.layout.metrics, *growth);
      if (b.days)
        b.days = sim::campaign::Interval{growth->metrics.days + rest * b.days->mean,
                                         rest * b.days->half_width};
    }
    io.out << fmt::format(
        "\n  growth (what-if): {};\n  days, GPU-hours and cost below include it (the small "
        "model's training by the analytic engine, the rest by the row's engine)\n",
        sim::describe_growth(*growth));
  }
  const bool rescored = !o.rescore.empty();
  const bool simulated = std::any_of(
      best.begin(), best.end(), [](const Rescored& x) { return x.simulated_step_s.has_value(); });
  const bool campaigned =
      std::any_of(best.begin(), best.end(), [](const Rescored& x) { return x.days.has_value(); });
  const bool priced = s->cluster.price_per_gpu_hour > 0;
  std::vector<std::string> headers = {"#"};
  std::string align = "r";
  if (rescored) {
    headers.emplace_back("est. #");
    align += 'r';
  }
  const bool batches = space.global_batch.size() > 1;
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
  for (const auto& set : sim::layout_overrides(best.front().layout.parallelism)) {
    sets += " --set " + set;
  }
  if (!space.prune.empty()) {
    for (const auto& set : sim::prune_overrides(best.front().layout.prune)) {
      sets += " --set " + set;
    }
  }
  if (s->training.precision == scenario::Precision::fp8) {
    io.out << "MFU: model FLOPs over the bf16 peak, as estimate reports it; this job's GEMMs run "
              "in fp8 (estimate also gives MFU against the fp8 peak).\n";
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
        "stage_layers\n";
    rank = 0;
    const auto optional = [](const std::optional<double>& x) {
      return x ? fmt::format("{:.9g}", *x) : std::string{};
    };
    for (const auto& b : best) {
      const sim::LayoutMetrics& m = b.layout.metrics;
      csv += fmt::format(
          "{},{},{:.9g},{:.6g},{:.9g},{:.6g},{:.9g},{},{:.6g},{},{},{:.9g},{},{},{},{},{},{}\n",
          ++rank, layout_text(b.layout), m.step_time_s, m.mfu, m.tokens_per_s, m.days, m.gpu_hours,
          priced ? fmt::format("{:.9g}", m.cost) : std::string{}, m.memory, b.engine,
          b.estimate_rank, b.estimated_step_s, optional(b.simulated_step_s),
          b.days ? optional(b.days->half_width) : std::string{},
          b.ettr ? optional(b.ettr->mean) : std::string{}, b.layout.parallelism.etp,
          sim::prune_text(b.layout.prune),
          fmt::join(b.layout.parallelism.stage_layers, " "));  // empty: even stages
    }
    try {
      models::write_file_atomically(o.csv_file, csv, "the CSV table");
    } catch (const std::runtime_error& e) {
      io.err << fmt::format("myriad plan: error: {}\n", e.what());
      return kExitFailure;
    }
  }
  if (!o.report_file.empty() && !write_report(o, *s, *profile, space, options, r, sample, best,
                                              growth ? &*growth : nullptr, io, env)) {
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace myriad::cli
