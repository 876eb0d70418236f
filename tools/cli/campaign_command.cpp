// `myriad campaign SCENARIO`: days of training with failures, stragglers and
// recovery, each policy set of the scenario side by side; every figure a mean
// with a 95% confidence interval over seeds.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "models/scenario/loader.hpp"
#include "models/scenario/run_title.hpp"
#include "models/scenario/text_file.hpp"
#include "models/scenario/units.hpp"
#include "sim/campaign/campaign_report.hpp"
#include "sim/planning/growth.hpp"
#include "sim/planning/sweep.hpp"
#include "tools/cli/campaign_events.hpp"
#include "tools/cli/campaign_growth.hpp"
#include "tools/cli/campaign_options.hpp"
#include "tools/cli/campaign_sensitivity.hpp"
#include "tools/cli/campaign_step_engine.hpp"
#include "tools/cli/campaign_table.hpp"
#include "tools/cli/campaign_timeline.hpp"
#include "tools/cli/report_table.hpp"

namespace myriad::cli {
namespace {

using sim::campaign::CampaignReport;
using sim::campaign::Interval;
using sim::campaign::PolicyReport;
using sim::campaign::RunResult;
using namespace campaign_table;  // NOLINT(google-build-using-namespace): this verb's rows

using AddRow =
    std::function<void(const std::string&, const std::function<std::string(const PolicyReport&)>&)>;

// The blocking stall every checkpoint costs, and with --wide its parts: the
// coordination of the save and the busiest GPU's copy to host memory.
void add_checkpoint_stall(const AddRow& add, bool wide) {
  add("checkpoint stall", [](const PolicyReport& p) { return duration(p.policy.stall_s); });
  if (!wide) return;
  add("  coordination (planning, metadata, barrier)",
      [](const PolicyReport& p) { return duration(p.policy.coordination_s); });
  add("  copy to host memory (busiest GPU)", [](const PolicyReport& p) {
    return fmt::format("{}B in {}", si_count(p.policy.snapshot_bytes_per_gpu),
                       duration(p.policy.snapshot_s));
  });
  add("checkpoint size", [](const PolicyReport& p) {
    return fmt::format("{}B", si_count(p.policy.checkpoint_bytes));
  });
}

// The lines above the table: the job, its pace, the horizon and the seeds.
std::string report_header(const models::scenario::Scenario& s, const CampaignReport& report,
                          int seeds) {
  std::string out = fmt::format("{}\n", models::scenario::run_title(s));
  out += fmt::format("  {} nodes x {} GPUs, healthy step {}, {} tokens per step\n",
                     report.job_nodes, s.cluster.gpus_per_node, seconds(report.healthy_step_s),
                     si_count(report.tokens_per_step));
  out += report.target_tokens > 0 ? fmt::format("  until {} tokens", si_count(report.target_tokens))
                                  : fmt::format("  for {:.1f} days", report.horizon_s / 86400);
  out += fmt::format("; {} seeds, mean ± 95% confidence interval\n", seeds);
  if (default_policy_only(s)) {
    out += fmt::format(
        "  policy '{}' is the default: no spares, waits for repairs (mean {}), checkpoints by "
        "Young's rule: a worst case; give `policies:` to compare others\n",
        report.policies.front().name, duration(report.policies.front().policy.spec->repair_s));
  }
  return out + "\n";
}

using AnyPolicy = std::function<bool(const std::function<bool(const PolicyReport&)>&)>;

// The policies' own figures: checkpoints, restarts, detection, the job's MTBF.
void add_policy_rows(const AddRow& add, const AnyPolicy& any, bool wide) {
  const bool in_memory = any([](const PolicyReport& p) { return p.policy.spec->in_memory; });
  add("checkpoint interval", [](const PolicyReport& p) { return duration(p.policy.interval_s); });
  if (wide && any([](const PolicyReport& p) { return p.policy.raised; })) {
    add("  the rule's interval (under one upload)", [](const PolicyReport& p) {
      return p.policy.raised ? duration(p.policy.rule_interval_s) : std::string("-");
    });
  }
  add_checkpoint_stall(add, wide);
  if (wide) {
    add("checkpoint upload (background)", [](const PolicyReport& p) {
      return p.policy.upload_s > 0 ? duration(p.policy.upload_s) : std::string("in the stall");
    });
    add("  at storage bandwidth (this job's share)", [](const PolicyReport& p) {
      return models::scenario::format_human(p.policy.write_Bps,
                                            models::scenario::Dimension::bandwidth);
    });
  }
  if (wide && in_memory) {
    add("copy to peer memory (background)", [](const PolicyReport& p) {
      return p.policy.spec->in_memory ? duration(p.policy.peer_copy_s) : std::string("-");
    });
    add("  to storage every", [](const PolicyReport& p) {
      return p.policy.spec->in_memory ? fmt::format("{} checkpoints", p.policy.persistent_every)
                                      : std::string("-");
    });
  }
  add("restart (start, init, load, warm-up)",
      [](const PolicyReport& p) { return duration(p.policy.restart_s); });
  if (wide && in_memory) {
    add("  loading from storage", [](const PolicyReport& p) {
      return p.policy.spec->in_memory ? duration(p.policy.storage_restart_s) : std::string("-");
    });
  }
  if (wide) {
    add("detection and diagnosis",
        [](const PolicyReport& p) { return duration(p.policy.detect_s); });
  }
  add("job mean time between failures",
      [](const PolicyReport& p) { return duration(p.policy.job_mtbf_s); });
}

// The outcome over seeds, and each policy against the first, seed by seed.
void add_outcome_rows(const AddRow& add, const AnyPolicy& any, Table& policy,
                      const models::scenario::Scenario& s, const CampaignReport& report,
                      bool wide) {
  for (const auto& row : rows(s)) {
    if (!wide && !row.compact) continue;
    // The short table leaves out the causes that cost nothing under every policy.
    if (!wide && row.key.rfind("lost_hours.", 0) == 0 &&
        !any([&row](const PolicyReport& p) { return p.over_seeds(row.figure).mean > 0; })) {
      continue;
    }
    add(row.label, [&row](const PolicyReport& p) { return shown(p.over_seeds(row.figure), row); });
  }
  if (report.policies.size() > 1) {
    const PolicyReport& base = report.policies.front();
    policy.add_rule();
    for (const auto& row : paired_rows(s, report)) {
      if (!wide && !row.compact) continue;
      add(fmt::format("{}, minus {}'s (paired)", row.label, base.name),
          [&row, &base](const PolicyReport& p) {
            return &p == &base ? std::string("-") : signed_shown(p.versus(base, row.figure), row);
          });
    }
  }
}

std::string report_text(const models::scenario::Scenario& s, const CampaignReport& report,
                        int seeds, bool wide) {
  std::vector<std::string> headers = {""};
  std::string align = "l";
  for (const auto& p : report.policies) {
    headers.push_back(p.name);
    align += "r";
  }
  Table policy(headers, align);
  const AddRow add = [&](const std::string& label,
                         const std::function<std::string(const PolicyReport&)>& f) {
    std::vector<std::string> row = {label};
    for (const auto& p : report.policies) row.push_back(f(p));
    policy.add(row);
  };
  const AnyPolicy any = [&report](const std::function<bool(const PolicyReport&)>& f) {
    return std::any_of(report.policies.begin(), report.policies.end(), f);
  };
  add_policy_rows(add, any, wide);
  policy.add_rule();
  add_outcome_rows(add, any, policy, s, report, wide);
  std::string out = report_header(s, report, seeds) + policy.str();
  if (!wide) out += "  --wide adds checkpoint and storage figures and failures by component\n";
  return out;
}

// The campaign report's data (tools/report/html_report.hpp): ETTR, days and
// goodput by policy with their 95 % intervals, hours lost by cause.
nlohmann::json html_data(const models::scenario::Scenario& s, const CampaignReport& report,
                         const std::string& name, int seeds) {
  const auto interval = [](const Interval& x) {
    return nlohmann::json{{"mean", x.mean}, {"half_width", x.half_width}};
  };
  // In fixed days every policy lasts as long and costs about the same: what
  // differs is the tokens trained, and so the tokens a dollar buys (as in the
  // text report); to a token target, the days and the cost.
  const bool fixed_days = report.target_tokens == 0;
  nlohmann::json policies = nlohmann::json::array();
  for (const auto& p : report.policies) {
    nlohmann::json lost = nlohmann::json::object();
    for (std::size_t c = 1; c < sim::campaign::kCauses; ++c) {
      lost[sim::campaign::kCauseNames[c]] =
          interval(p.over_seeds([c](const RunResult& r) { return r.seconds_by_cause[c] / 3600; }));
    }
    policies.push_back(
        {{"name", p.name},
         {"ettr", interval(p.over_seeds([](const RunResult& r) { return r.ettr(); }))},
         {"goodput", interval(p.over_seeds([](const RunResult& r) {
            return r.wall_s > 0 ? r.tokens / r.wall_s : 0;
          }))},
         {"lost_hours", lost}});
    for (const auto& row : rows(s)) {
      const bool shown = fixed_days ? row.key == "tokens" || row.key == "tokens_per_usd"
                                    : row.key == "wall_days" || row.key == "cost_usd";
      if (shown) policies.back()[row.key] = interval(p.over_seeds(row.figure));
    }
    if (&p != &report.policies.front()) {
      policies.back()["ettr_minus_first"] =
          interval(p.versus(report.policies.front(), [](const RunResult& r) { return r.ettr(); }));
    }
  }
  nlohmann::json notes = nlohmann::json::array();
  for (const auto& w : sim::campaign::campaign_warnings(report)) notes.push_back(w);
  return {{"kind", "campaign"},
          {"fixed_days", fixed_days ? report.horizon_s / 86400 : 0},
          {"title", fmt::format("myriad campaign {}", name)},
          {"subtitle",
           fmt::format("{}: {} nodes, healthy step {:.4g} s, {}; {} seeds, mean and 95 % interval",
                       models::scenario::run_title(s), report.job_nodes, report.healthy_step_s,
                       report.target_tokens > 0
                           ? fmt::format("until {} tokens", si_count(report.target_tokens))
                           : fmt::format("for {:.1f} days", report.horizon_s / 86400),
                       seeds)},
          {"policies", policies},
          {"notes", notes}};
}

// The campaign's options from the command line's; nothing, said, on bad input.
std::optional<sim::campaign::CampaignOptions> campaign_options(const CampaignCliOptions& o,
                                                               Streams io) {
  sim::campaign::CampaignOptions options;
  options.days = o.days;
  if (!o.tokens.empty()) {
    const auto tokens =
        models::scenario::parse_quantity(o.tokens, models::scenario::Dimension::count);
    if (const auto* failure = std::get_if<models::scenario::ParseFailure>(&tokens)) {
      io.err << "campaign: --tokens: " << failure->message << "\n";
      return std::nullopt;
    }
    options.tokens = std::get<double>(tokens);
    if (!(options.tokens >= 1 && std::isfinite(options.tokens))) {
      io.err << fmt::format("campaign: --tokens: expected at least one token, found '{}'\n",
                            models::scenario::printable(o.tokens));
      return std::nullopt;
    }
  }
  options.seeds = o.seeds;
  // Each thread holds one run's state (about 0.3 KB a node) and a step-time
  // cache: more threads than cores would only multiply that memory.
  const int cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  options.threads = o.threads > 0 ? std::min(o.threads, cores) : cores;
  return options;
}

// `--step-engine simulate`: the campaign on the step engine's pace (the fit sets
// the stragglers' and slow nodes' effective slowdowns in `s`); an exit code when
// it cannot run.
std::optional<int> fit_pace(const CampaignCliOptions& o, models::scenario::Scenario& s,
                            const sim::DeviceProfile& profile,
                            sim::campaign::CampaignOptions& options,
                            std::optional<StepEngineFit>& fit, Streams io) {
  if (o.step_engine != "simulate") return std::nullopt;
  if (!o.vary.empty() || (s.training.growth.given() && options.days == 0)) {
    io.err << "myriad campaign: error: --step-engine simulate plays one campaign: not with "
              "--vary or training.growth\n";
    return kExitBadInput;
  }
  fit = fit_to_step_engine(s, profile, o.step_engine_states, io);
  if (!fit) return kExitFailure;
  options.step_scale = fit->simulated_step_s / fit->analytic_step_s;
  options.step_scale_by_dp = fit->scale_by_dp(s.parallelism.dp);
  return std::nullopt;
}

// Growth (training.growth): the model trains on (1 - saved fraction) of its tokens
// after the small model's training, each phase a campaign of its own; beside them,
// the campaign without growth, on the same seeds.
struct GrowthCampaigns {
  std::optional<sim::GrowthPhase> growth;
  std::optional<CampaignReport> small;
  std::optional<CampaignReport> without;
};

// Runs the small model's campaign and the one without growth, and sets the
// model's own tokens in `options`; false, said, when the growth cannot be planned.
bool run_growth(const CampaignCliOptions& o, const models::scenario::Scenario& s,
                const sim::DeviceProfile& profile, sim::campaign::CampaignOptions& options,
                GrowthCampaigns& g, Streams io) {
  if (!s.training.growth.given() || options.days != 0) return true;
  try {
    g.growth = sim::growth_phase(s, profile);
  } catch (const std::invalid_argument& e) {
    io.err << fmt::format("myriad campaign: error: {}: {}\n", scenario_name(o.scenario), e.what());
    return false;
  }
  const double tokens = options.tokens > 0 ? options.tokens : s.training.tokens;
  g.without = sim::campaign::run_campaign(s, profile, options);
  sim::campaign::CampaignOptions first = options;
  first.tokens = g.growth->small.training.tokens;
  g.small = sim::campaign::run_campaign(g.growth->small, profile, first);
  options.tokens = (1 - g.growth->saved_fraction) * tokens;
  return true;
}

// The campaign itself: the logged seed's events feed the failure timeline and,
// with --events, stream to the log's file while it runs. An exit code when it fails.
std::optional<int> run_logged(const CampaignCliOptions& o, const models::scenario::Scenario& s,
                              const sim::DeviceProfile& profile,
                              sim::campaign::CampaignOptions options, CampaignTimelines& timelines,
                              CampaignReport& report, Streams io, const Environment& env) {
  std::vector<std::string> names;
  for (const auto& p : s.policies) names.push_back(p.name);
  std::optional<EventLogFile> events;
  if (!o.events_file.empty()) {
    try {
      events.emplace(o.events_file, o.events_level == "all" ? sim::campaign::EventLevel::all
                                                            : sim::campaign::EventLevel::failures);
    } catch (const std::runtime_error& e) {
      io.err << "myriad campaign: error: " << e.what() << "\n";
      return kExitFailure;
    }
  }
  options.event_seed = o.event_seed;
  options.on_event = [&](std::size_t p, const sim::campaign::CampaignEvent& e) {
    timelines.add(p, e);
    if (events) events->write(names[p], o.event_seed, e);
  };
  try {
    ProgressLine line(io, env, "campaign");
    options.progress = [&line](std::size_t done, std::size_t total) {
      line.update(done, total, "runs");
    };
    report = sim::campaign::run_campaign(s, profile, options);
    timelines.end(report);
    if (events) {
      events->finish();
      io.err << events->summary();
    }
  } catch (const std::invalid_argument& e) {
    io.err << "myriad campaign: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::runtime_error& e) {
    io.err << "myriad campaign: error: " << e.what() << "\n";
    return kExitFailure;
  }
  return std::nullopt;
}

// What a campaign ran, as asked: --json, --report, the text and the warnings.
int campaign_outputs(const CampaignCliOptions& o, const models::scenario::Scenario& s,
                     const CampaignReport& report, const CampaignTimelines& timelines,
                     const std::optional<StepEngineFit>& fit, const GrowthCampaigns& g, Streams io,
                     const Environment& env) {
  nlohmann::json json_report = campaign_json(s, report);
  if (g.growth) json_report["growth"] = growth_json(*g.growth, *g.small, report, *g.without);
  if (fit) json_report["step_engine"] = step_engine_json(s, *fit);
  if (!o.json_file.empty() && !write_json(o.json_file, json_report, "campaign", io)) {
    return kExitFailure;
  }
  if (!o.report_file.empty()) {
    auto data = html_data(s, report, scenario_name(o.scenario), o.seeds);
    data["timeline"] = timelines.html();
    if (!write_html_report(o.report_file, data, "campaign", io, env)) return kExitFailure;
  }
  io.out << report_text(s, report, o.seeds, o.wide) << timelines.text();
  if (fit) io.out << step_engine_text(s, *fit);
  if (g.growth) io.out << "\n" << growth_text(*g.growth, *g.small, report, *g.without);
  if (s.training.growth.given() && !g.growth) {
    io.out << "\n  growth (training.growth) is not applied to a campaign of fixed duration "
              "(--days)\n";
  }
  for (const auto& w : sim::campaign::campaign_warnings(report)) {
    io.err << "campaign: warning: " << w << "\n";
  }
  if (g.small) {
    for (const auto& w : sim::campaign::campaign_warnings(*g.small)) {
      io.err << "campaign: warning: the small model's training: " << w << "\n";
    }
  }
  return kExitOk;
}

}  // namespace

nlohmann::json campaign_json(const models::scenario::Scenario& s,
                             const sim::campaign::CampaignReport& report) {
  nlohmann::json policies = nlohmann::json::array();
  const auto all_rows = rows(s);
  for (const auto& p : report.policies) {
    nlohmann::json figures = nlohmann::json::object();
    for (const auto& row : all_rows) {
      const Interval x = p.over_seeds(row.figure);
      figures[nlohmann::json::json_pointer("/" + row.key.substr(0, row.key.find('.')) +
                                           (row.key.find('.') == std::string::npos
                                                ? ""
                                                : "/" + row.key.substr(row.key.find('.') + 1)))] = {
          {"mean", x.mean}, {"ci95_low", x.low()}, {"ci95_high", x.high()}};
    }
    nlohmann::json versus = nlohmann::json::object();
    if (&p != &report.policies.front()) {
      for (const auto& row : paired_rows(s, report)) {
        const Interval x = p.versus(report.policies.front(), row.figure);
        versus[row.key] = {{"mean", x.mean}, {"ci95_low", x.low()}, {"ci95_high", x.high()}};
      }
    }
    policies.push_back(
        {{"name", p.name},
         {"default_policy", default_policy_only(s)},
         {"minus_first_policy", versus},
         {"checkpoint_interval_s", p.policy.interval_s},
         {"checkpoint_rule_interval_s", p.policy.rule_interval_s},
         {"checkpoint_interval_raised", p.policy.raised},
         {"checkpoint_stall_s", p.policy.stall_s},
         {"checkpoint_coordination_s", p.policy.coordination_s},
         {"checkpoint_snapshot_s", p.policy.snapshot_s},
         {"checkpoint_snapshot_bytes_per_gpu", p.policy.snapshot_bytes_per_gpu},
         {"checkpoint_upload_s", p.policy.upload_s},
         {"checkpoint_bytes", p.policy.checkpoint_bytes},
         {"storage_write_Bps", p.policy.write_Bps},
         {"peer_copy_s", p.policy.peer_copy_s},
         {"persistent_every", p.policy.spec->in_memory ? p.policy.persistent_every : 1},
         {"restart_s", p.policy.restart_s},
         {"restart_from_storage_s", p.policy.storage_restart_s},
         {"detection_s", p.policy.detect_s},
         {"job_mtbf_s", p.policy.job_mtbf_s},
         {"figures", figures}});
  }
  return {{"scenario", s.file},
          {"seed", s.seed},
          {"healthy_step_time_s", report.healthy_step_s},
          {"tokens_per_step", report.tokens_per_step},
          {"job_nodes", report.job_nodes},
          {"horizon_s", report.horizon_s},
          {"target_tokens", report.target_tokens},
          {"policies", policies},
          {"warnings", sim::campaign::campaign_warnings(report)}};
}

int run_campaign(const CampaignCliOptions& o, Streams io, const Environment& env) {
  const VerbOutputs outputs{
      "campaign",
      {{"--json", o.json_file}, {"--events", o.events_file}, {"--report", o.report_file}}};
  if (!outputs_ok(outputs.verb, outputs.outputs, {o.scenario.scenario, o.profile}, io)) {
    return kExitBadInput;
  }
  std::string text;
  auto s = load_for_cli(o.scenario, io, env, &text, &outputs);
  if (!s) return kExitBadInput;
  const auto profile = profile_for(*s, o.profile, io, env);
  if (!profile) return kExitBadInput;
  auto options = campaign_options(o, io);
  if (!options) return kExitBadInput;
  std::optional<StepEngineFit> fit;
  if (const auto failed = fit_pace(o, *s, *profile, *options, fit, io)) return *failed;
  if (!o.vary.empty()) return run_sensitivity(o, io, env, *s, text, *options);
  GrowthCampaigns growth;
  if (!run_growth(o, *s, *profile, *options, growth, io)) return kExitBadInput;
  std::vector<std::string> names;
  for (const auto& p : s->policies) names.push_back(p.name);
  CampaignTimelines timelines(names, o.event_seed);
  CampaignReport report;
  if (const auto failed = run_logged(o, *s, *profile, *options, timelines, report, io, env)) {
    return *failed;
  }
  return campaign_outputs(o, *s, report, timelines, fit, growth, io, env);
}

}  // namespace myriad::cli
