// A campaign over several seeds and policy sets: the runs, and each figure as
// a mean with a 95% confidence interval over seeds (Student's t).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/campaign/campaign_event.hpp"
#include "sim/campaign/resolved_policy.hpp"
#include "sim/campaign/run_result.hpp"
#include "sim/cost/device_profile.hpp"

namespace myriad::sim::campaign {

// The longest a campaign runs: a token target not reached by then is reported
// as not reached.
constexpr double kLongestCampaign_days = 10 * 365.0;

struct CampaignOptions {
  double days = 0;    // stop after this many days (0: until the token target)
  double tokens = 0;  // token target (0: training.tokens, unless days is given)
  int seeds = 8;
  int threads = 1;  // seeds run in parallel on this many threads
  // The event log of one seed (-1: none), every policy's run in turn, handed
  // to `on_event` with the policy's index as it happens (not kept).
  int event_seed = -1;
  std::function<void(std::size_t policy, const CampaignEvent&)> on_event;
  // Multiplies the analytic engine's step times: the step engine's healthy step
  // over the analytic engine's, where the caller simulated it (plan --rescore).
  double step_scale = 1;
  // Where the step engine also played shrunk states: that ratio by
  // data-parallel degree (the healthy one included); states it did not play
  // take the nearest played one's.
  std::map<int, double> step_scale_by_dp;
  // Called after each run (a policy set and a seed) with the runs done and the
  // total, one call at a time (may be empty).
  std::function<void(std::size_t done, std::size_t total)> progress;
};

struct Interval {
  double mean = 0;
  double half_width = 0;  // 95% confidence, 0 for a single seed
  [[nodiscard]] double low() const { return mean - half_width; }
  [[nodiscard]] double high() const { return mean + half_width; }
};

// Mean and 95% confidence half-width of `xs` (Student's t, n - 1 degrees).
Interval summarize(const std::vector<double>& xs);

struct PolicyReport {
  std::string name;
  ResolvedPolicy policy;
  std::vector<RunResult> runs;  // by seed index

  // A figure of each run, summarized over seeds.
  [[nodiscard]] Interval over_seeds(const std::function<double(const RunResult&)>& f) const;
  // This policy's figure minus `base`'s, seed by seed, summarized: the runs of
  // one seed index share their random draws (common random numbers), so the
  // interval is far tighter than that of the two means apart.
  [[nodiscard]] Interval versus(const PolicyReport& base,
                                const std::function<double(const RunResult&)>& f) const;
};

struct CampaignReport {
  double healthy_step_s = 0;
  double tokens_per_step = 0;
  int job_nodes = 0;
  double horizon_s = 0;
  double target_tokens = 0;  // 0 when running for a fixed time
  std::vector<PolicyReport> policies;
};

// What makes a campaign's figures dubious though legal, one sentence each:
// intervals from fewer than 3 seeds, a job that fails within a few steps, a
// checkpoint interval shorter than its stall, a token target not reached.
std::vector<std::string> campaign_warnings(const CampaignReport& report);

// What run_campaign checks before it runs anything (options, the scenario's
// policies, the work against its bound), without running: throws
// std::invalid_argument as run_campaign would.
void check_campaign(const models::scenario::Scenario& s, const DeviceProfile& profile,
                    const CampaignOptions& options);

// Runs every policy set of `s` over `options.seeds` seeds. Seed index i draws
// from RandomStream(s.seed, i) under every policy set (common random numbers).
CampaignReport run_campaign(const models::scenario::Scenario& s, const DeviceProfile& profile,
                            const CampaignOptions& options);

}  // namespace myriad::sim::campaign
