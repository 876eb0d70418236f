#include "sim/campaign/campaign_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <stdexcept>

#include "sim/campaign/campaign_engine.hpp"
#include "sim/campaign/campaign_work.hpp"
#include "sim/campaign/job_pool.hpp"
#include "sim/campaign/step_time_cache.hpp"

namespace myriad::sim::campaign {
namespace {

// Two-sided 95% quantiles of Student's t for 1..30 degrees of freedom.
constexpr std::array<double, 30> kStudent95 = {
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
constexpr double kNormal95 = 1.960;
// Without a token target a campaign still ends: ten years of wall clock.
constexpr double kLongestCampaign_s = kLongestCampaign_days * 86400;

double student95(std::size_t dof) {
  return dof <= kStudent95.size() ? kStudent95[dof - 1] : kNormal95;
}

}  // namespace

Interval summarize(const std::vector<double>& xs) {
  if (xs.empty()) return {};
  double sum = 0;
  for (const double x : xs) sum += x;
  const double mean = sum / static_cast<double>(xs.size());
  if (xs.size() == 1) return {mean, 0};
  double ss = 0;
  for (const double x : xs) ss += (x - mean) * (x - mean);
  const double sd = std::sqrt(ss / static_cast<double>(xs.size() - 1));
  return {mean, student95(xs.size() - 1) * sd / std::sqrt(static_cast<double>(xs.size()))};
}

Interval PolicyReport::over_seeds(const std::function<double(const RunResult&)>& f) const {
  std::vector<double> xs;
  xs.reserve(runs.size());
  for (const auto& r : runs) xs.push_back(f(r));
  return summarize(xs);
}

Interval PolicyReport::versus(const PolicyReport& base,
                              const std::function<double(const RunResult&)>& f) const {
  std::vector<double> xs;
  const std::size_t n = std::min(runs.size(), base.runs.size());
  xs.reserve(n);
  for (std::size_t i = 0; i < n; ++i) xs.push_back(f(runs[i]) - f(base.runs[i]));
  return summarize(xs);
}

namespace {

// Checkpoints the job cannot take as often as its policy says: more often than
// one step (a checkpoint is taken between steps), or uploads that keep the
// storage busy most of the time, with what they write.
void checkpoint_pace_warnings(const CampaignReport& report, const PolicyReport& p,
                              std::vector<std::string>& out) {
  const ResolvedPolicy& r = p.policy;
  if (r.interval_s > 0 && r.interval_s < report.healthy_step_s) {
    out.push_back(fmt::format(
        "policy {}: a checkpoint every {:.3g} s of training, under one step of {:.3g} s: "
        "checkpoints are taken between steps, so every step would checkpoint",
        p.name, r.interval_s, report.healthy_step_s));
  }
  if (p.runs.empty()) return;
  double busy = 0;
  double written = 0;
  double wall = 0;
  for (const auto& run : p.runs) {
    if (run.wall_s > 0 && r.write_Bps > 0) busy += run.storage_bytes / r.write_Bps / run.wall_s;
    written += run.storage_bytes;
    wall += run.wall_s;
  }
  const auto n = static_cast<double>(p.runs.size());
  busy /= n;
  constexpr double kBusyStorage = 0.5;
  if (busy > kBusyStorage) {
    out.push_back(fmt::format(
        "policy {}: checkpoint uploads keep the storage busy {:.0f} % of the time at {:.3g} "
        "GB/s, writing {:.3g} TB in {:.3g} days ({:.3g} GB/s sustained); other jobs sharing it "
        "would see less (storage_background_load)",
        p.name, 100 * busy, r.write_Bps / 1e9, written / n / 1e12, wall / n / 86400,
        wall > 0 ? written / wall / 1e9 : 0.0));
  }
}

}  // namespace

std::vector<std::string> campaign_warnings(const CampaignReport& report) {
  constexpr std::size_t kMinSeeds = 3;
  constexpr double kFewSteps = 5;
  std::vector<std::string> out;
  const std::size_t seeds = report.policies.empty() ? 0 : report.policies.front().runs.size();
  if (seeds > 0 && seeds < kMinSeeds) {
    out.push_back(fmt::format("{} seed{}: a confidence interval needs at least {} (--seeds){}",
                              seeds, seeds == 1 ? "" : "s", kMinSeeds,
                              seeds == 1 ? "; none is shown" : ", and from 2 it is very wide"));
  }
  for (const auto& p : report.policies) {
    if (p.policy.job_mtbf_s < kFewSteps * report.healthy_step_s) {
      out.push_back(fmt::format(
          "policy {}: the job is interrupted every {:.3g} s on average, less than {:g} healthy "
          "steps of {:.3g} s: it can hardly make progress; check the failure rates",
          p.name, p.policy.job_mtbf_s, kFewSteps, report.healthy_step_s));
    }
    if (p.policy.interval_s > 0 && p.policy.interval_s < p.policy.stall_s) {
      out.push_back(fmt::format(
          "policy {}: a checkpoint every {:.3g} s of training stalls it {:.3g} s: more time goes "
          "to checkpoints than to training",
          p.name, p.policy.interval_s, p.policy.stall_s));
    }
    const ResolvedPolicy& r = p.policy;
    const auto* spec = r.spec;
    if (r.raised) {
      out.push_back(fmt::format(
          "policy {}: the {} rule's interval of {:.3g} s is shorter than one {} ({:.3g} s): "
          "checkpoints every {:.3g} s instead, as often as the {} takes them",
          p.name,
          spec->checkpoint_rule == models::scenario::CheckpointRule::young ? "young" : "daly",
          r.rule_interval_s, spec->in_memory ? "copy to peer memory" : "upload", r.interval_s,
          r.interval_s, spec->in_memory ? "network" : "storage"));
    }
    const double background = spec->in_memory ? r.peer_copy_s : r.upload_s;
    if (spec->checkpoint_rule == models::scenario::CheckpointRule::fixed && r.interval_s > 0 &&
        r.interval_s < background) {
      const auto* what = spec->in_memory ? "copy to peer memory" : "upload";
      std::string effect;
      switch (spec->upload_overlap) {
        case models::scenario::UploadOverlap::block:
          effect =
              "training waits for the previous one at every checkpoint (upload_overlap: block)";
          break;
        case models::scenario::UploadOverlap::skip:
          effect = "most checkpoints are skipped (upload_overlap: skip)";
          break;
        case models::scenario::UploadOverlap::queue:
          effect =
              "uploads fall behind and the checkpoint in storage is older than it seems "
              "(upload_overlap: queue)";
          break;
      }
      if (spec->in_memory) effect = "each copy replaces the one still in flight";
      out.push_back(
          fmt::format("policy {}: a checkpoint every {:.3g} s while one {} takes {:.3g} "
                      "s: {}",
                      p.name, r.interval_s, what, background, effect));
    }
    checkpoint_pace_warnings(report, p, out);
    if (report.target_tokens > 0) {
      const auto missed = std::count_if(p.runs.begin(), p.runs.end(),
                                        [](const RunResult& run) { return !run.reached_target; });
      if (missed > 0) {
        out.push_back(fmt::format(
            "policy {}: the target of {:.4g} tokens was not reached within {:.4g} days in {} of "
            "{} seeds; their figures cover the time simulated",
            p.name, report.target_tokens, report.horizon_s / 86400, missed, p.runs.size()));
      }
    }
  }
  return out;
}

namespace {

// The report's frame before any run: the healthy step, the horizon and target,
// each policy set resolved, and the work checked against its bound.
CampaignReport prepare(const models::scenario::Scenario& s, const CampaignOptions& options,
                       StepTimeCache& probe) {
  CampaignReport report;
  report.job_nodes = probe.job_nodes();
  report.healthy_step_s = probe.step_time_s(probe.job_nodes());
  report.tokens_per_step = probe.tokens_per_step();
  report.horizon_s = options.days > 0 ? options.days * 86400 : kLongestCampaign_s;
  report.target_tokens = options.tokens > 0 ? options.tokens
                         : options.days > 0 ? 0
                                            : s.training.tokens;
  std::vector<RunWork> work;
  std::vector<std::string> names;
  const double compute_s =
      report.target_tokens > 0
          ? report.target_tokens / report.tokens_per_step * report.healthy_step_s
          : report.horizon_s;
  for (std::size_t i = 0; i < s.policies.size(); ++i) {
    PolicyReport p;
    p.name = s.policies[i].name;
    p.policy = resolve_policy(s, s.policies[i]);
    p.runs.resize(static_cast<std::size_t>(options.seeds));
    work.push_back(
        run_work(s, p.policy, i, report.job_nodes, std::min(report.horizon_s, compute_s)));
    names.push_back(p.name);
    report.policies.push_back(std::move(p));
  }
  check_campaign_work(work, names, static_cast<std::size_t>(options.seeds));
  return report;
}

void check_options(const CampaignOptions& options) {
  if (options.seeds < 1) throw std::invalid_argument("a campaign needs at least one seed");
  if (!(options.step_scale > 0) || !std::isfinite(options.step_scale)) {
    throw std::invalid_argument("a campaign's step scale must be positive");
  }
  if (options.event_seed >= options.seeds) {
    throw std::invalid_argument(
        fmt::format("the event log's seed {} is not among the {} seeds "
                    "run (0 to {})",
                    options.event_seed, options.seeds, options.seeds - 1));
  }
}

}  // namespace

void check_campaign(const models::scenario::Scenario& s, const DeviceProfile& profile,
                    const CampaignOptions& options) {
  check_options(options);
  StepTimeCache probe(s, profile, options.step_scale, options.step_scale_by_dp);
  prepare(s, options, probe);
}

CampaignReport run_campaign(const models::scenario::Scenario& s, const DeviceProfile& profile,
                            const CampaignOptions& options) {
  check_options(options);
  StepTimeCache probe(s, profile, options.step_scale, options.step_scale_by_dp);
  CampaignReport report = prepare(s, options, probe);
  CampaignLimits limits;
  limits.horizon_s = report.horizon_s;
  limits.target_tokens = report.target_tokens;
  // Jobs are (policy, seed) pairs; each thread takes the next, with its own
  // step-time cache. Results land in fixed slots, so order never matters. The
  // logged seed runs afterwards, policy by policy, so that its log comes out
  // in one order on any number of threads.
  const std::size_t seeds = static_cast<std::size_t>(options.seeds);
  const bool logged = options.event_seed >= 0 && options.on_event;
  const auto event_seed = static_cast<std::size_t>(std::max(0, options.event_seed));
  std::vector<std::size_t> jobs;
  for (std::size_t j = 0; j < report.policies.size() * seeds; ++j) {
    if (!logged || j % seeds != event_seed) jobs.push_back(j);
  }
  std::mutex progress_mutex;
  std::size_t done = 0;
  const std::size_t runs = report.policies.size() * seeds;
  const auto run_one = [&](StepTimeCache& cache, std::size_t j, const EventSink* sink) {
    PolicyReport& p = report.policies[j / seeds];
    CampaignLimits own = limits;
    own.events = sink;
    CampaignEngine engine(s, p.policy, cache, own, RandomStream(s.seed, j % seeds));
    p.runs[j % seeds] = engine.run();
    if (options.progress) {
      const std::lock_guard<std::mutex> lock(progress_mutex);
      options.progress(++done, runs);
    }
  };
  run_jobs(
      jobs.size(), options.threads,
      [&] { return StepTimeCache(s, profile, options.step_scale, options.step_scale_by_dp); },
      [&](StepTimeCache& cache, std::size_t k) { run_one(cache, jobs[k], nullptr); });
  if (logged) {
    for (std::size_t p = 0; p < report.policies.size(); ++p) {
      const EventSink sink = [&options, p](const CampaignEvent& e) { options.on_event(p, e); };
      run_one(probe, p * seeds + event_seed, &sink);
    }
  }
  return report;
}

}  // namespace myriad::sim::campaign
