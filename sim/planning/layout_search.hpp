// The layout search behind `myriad plan`: the scenario's model, cluster and
// token target fixed, every combination of the parallelism keys in a search
// space is checked as a scenario would be (derive, then the scenario checks),
// pruned with its reason when invalid, estimated by the analytic engine when
// not, held to a memory headroom, and ranked by an objective. Only the best K
// are kept, so memory stays flat in the number of candidates.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/step_rates.hpp"
#include "sim/cost/device_profile.hpp"
#include "sim/planning/sweep.hpp"

namespace myriad::sim {

// The values each parallelism key takes; the scenario's own value where a list is empty.
struct SearchSpace {
  std::vector<int> tp, pp, virtual_stages, cp, ep, micro_batch, zero, global_batch;
  std::vector<int> etp;  // the experts' tensor parallelism: 0 for = tp, or 1
  std::vector<models::scenario::Recompute> recompute;
  std::vector<models::scenario::RankOrder> placement;
  // Pipeline schedules (`plan --schedules`). Empty: the scenario's, a
  // zero-bubble one kept where a layout runs one chunk a stage on two or more
  // (1F1B or interleaved, by its virtual stages, elsewhere). Listed: each one as
  // it is (one_f_one_b standing for 1F1B or interleaved by the virtual stages),
  // so that the scenario checks refuse a zero-bubble schedule where it cannot run.
  std::vector<models::scenario::Schedule> schedule;
  // What-if axis on the model: expert pruning variants (the scenario's own when empty).
  std::vector<models::scenario::PruneSpec> prune;
  // A range of global batches (sequences) in place of the list: each layout takes
  // the largest batch from `lo` to `hi` that its micro-batch x dp divides (dp =
  // gpus / (tp pp cp)); `lo` where none does (the checks then refuse it). The
  // largest, since in the cost model a larger batch never takes longer per token:
  // the pipeline bubble and the step's gradient reduction are spread over more
  // micro-batches, while memory does not grow with their count. How large a batch
  // still converges is the user's bound, not the model's.
  struct BatchRange {
    int lo = 0;
    int hi = 0;
    int gpus = 0;  // the cluster's, which dp divides
  };
  std::optional<BatchRange> batch_range;
};

// The batch a layout takes from a range (SearchSpace::BatchRange).
int batch_in_range(const models::scenario::ParallelSpec& p, const SearchSpace::BatchRange& range);

// Reads `plan --schedules`' comma-separated schedules (1f1b, interleaved, zb-h1,
// dualpipe; interleaved is 1f1b: a layout's virtual stages say which); none from
// "". std::invalid_argument naming what was expected.
std::vector<models::scenario::Schedule> parse_schedule_axis(const std::string& values);

// A pruning variant in words: "none", "2:4", "experts 8 + unstructured 50 %".
std::string prune_text(const models::scenario::PruneSpec& p);
// Reads one: none | 2:4 | unstructured=F | unstructured-kernel=F | experts=N, joined by '+'
// ("experts=8+2:4"); std::invalid_argument saying what was expected.
models::scenario::PruneSpec parse_prune(const std::string& text);
// Reads `plan --prune`'s comma-separated variants for the scenario's model (none
// from ""; the scenario's own pruning is then searched);
// std::invalid_argument when the model has no experts, or a variant leaves
// fewer experts than a token is routed to (top_k): it would prune every candidate.
std::vector<models::scenario::PruneSpec> parse_prune_axis(const models::scenario::Scenario& s,
                                                          const std::string& values);

// A space worth searching for this scenario: tp in powers of two up to a node,
// pp in powers of two up to the layers (at most 64), 1 to 8 virtual stages, cp
// 1, 2, 4 (1 for sequences under 8k tokens), ep over the powers of two that
// divide the experts up to the GPUs (MoE only; an ep rank is a GPU), micro-batches 1, 2, 4, 8, ZeRO
// 0 to 3, every recomputation and both placements; the scenario's global batch.
SearchSpace default_space(const models::scenario::Scenario& s);

// Candidates the space spans (before any pruning).
std::size_t candidate_count(const SearchSpace& space);

// The most candidates one search may span. A plan goes through about 100,000
// candidates a second, most refused by the scenario checks, and 6,000 to 30,000 a
// second where they are estimated (the shipped examples, 2-core development
// machine, 2026-12), so this is under a minute as a rule and ten at the very
// worst.
inline constexpr std::size_t kMostCandidates = 3000000;
// Empty when the space spans at most kMostCandidates; else why not: the count,
// each list's length and which input drives the longest (--global-batch,
// --prune, model.moe.experts, ...).
std::string search_too_large(const SearchSpace& space);

// What planning ranks a configuration by, from the analytic engine's report.
struct LayoutMetrics {
  int gpus = 0;
  double step_time_s = 0;
  double mfu = 0;
  double tokens_per_s = 0;
  double days = 0;       // to training.tokens
  double gpu_hours = 0;  // days x 24 x GPUs
  double cost = 0;       // US dollars at cluster.price_per_gpu_hour; NaN without a price
  double memory = 0;     // needed over usable
  bool fits = false;     // needed within usable
  // The value of an objective (known_objectives) by its name.
  [[nodiscard]] double objective(const std::string& name) const;
  // The rates of step_time_s (sim/analytic/step_rates.hpp): the headline MFU (fp8
  // jobs against the fp8 peak), tokens/s, days, GPU-hours and cost.
  void set_rates(const StepRates& r) {
    mfu = r.headline_mfu();
    tokens_per_s = r.tokens_per_s;
    days = r.days;
    gpu_hours = r.gpu_hours;
    cost = r.cost;
  }
};
LayoutMetrics metrics_of(const models::scenario::Scenario& s, const StepReport& r);

// One layout the engine estimated.
struct PlannedLayout {
  std::size_t index = 0;  // in the enumeration order (ties rank by it)
  models::scenario::ParallelSpec parallelism;
  models::scenario::PruneSpec prune;  // the model's expert pruning (a what-if axis)
  LayoutMetrics metrics;
  // Later layouts with exactly this step time and memory (a placement or a
  // recomputation that changes nothing here), folded into this one.
  std::size_t alike = 0;
  // Which of several searches (clusters, GPU counts) it came from: the caller's
  // numbering; layouts fold as alike only within one, and tie by (variant, index).
  std::size_t variant = 0;
};

// Candidates the scenario checks refused for one key.
struct PrunedBy {
  std::size_t count = 0;
  std::string example;    // the first one's message
  std::size_t first = 0;  // the first one's index
};

struct PlanResult {
  std::size_t candidates = 0;   // enumerated
  std::size_t pruned = 0;       // refused by the scenario checks
  std::size_t over_memory = 0;  // valid, but above the headroom
  std::size_t evaluated = 0;    // estimated (valid)
  std::size_t balanced = 0;     // PlanOptions::balanced_stages: layouts taken with a balanced split
  std::size_t partial = 0;    // PlanOptions::partial_recompute: layouts taken with fewer recomputed
  std::size_t offloaded = 0;  // PlanOptions::offload: layouts that fit only with offload
  std::size_t offloaded_modules = 0;  // of those, by fine-grained offload (the rest whole layers)
  std::size_t meets_deadline = 0;     // within the headroom and PlanOptions::max_days
  // Pruned candidates by the key their first problem names, with one message.
  std::map<std::string, PrunedBy> pruned_by;
  std::vector<PlannedLayout> top;  // best first, at most K, within the headroom, alike folded
};

struct PlanOptions {
  Objective objective{"days", false};
  // A deadline in days to the token target: the layouts that meet it rank first
  // by the objective, then the others by days (the nearest miss first).
  double max_days = std::numeric_limits<double>::infinity();
  // The stage split as an axis: every layout with a pipeline is estimated also
  // with its balanced split (sim/stage_split: each stage within the headroom), and
  // that one is kept where it is faster, or fits where the even one does not.
  bool balanced_stages = false;
  // Partial recomputation as an axis: every layout with full recomputation of
  // every layer that fits the headroom is estimated also with the fewest layers
  // of each chunk recomputed that still fit it (parallelism.recompute_layers),
  // which is faster, and that one kept (on the balanced split where
  // balanced_stages took it).
  bool partial_recompute = false;
  // Activation offload as an axis: every layout above the headroom is estimated
  // also with the fewest layers offloaded to the host that fit it
  // (parallelism.offload_layers: one pipeline stage without recomputation), and
  // with the modules offloaded that fit it (parallelism.offload_modules, any
  // pipeline: offloaded_modules_that_fit), and the faster kept.
  bool offload = false;
  std::size_t top = 10;
  double headroom = 0.9;  // memory needed at most this fraction of what is usable
  // Called every `progress_every` candidates with the count so far (may be empty).
  std::function<void(std::size_t)> progress;
  std::size_t progress_every = 10000;
  // Called for every layout estimated (valid, within the headroom or not), with
  // its index in the enumeration (may be empty).
  std::function<void(std::size_t, const models::scenario::ParallelSpec&)> on_evaluated;
  // This search's share of the candidates: those whose index is `shard` modulo
  // `shards` (one process of several, merged with merge_plans).
  int shard = 0;
  int shards = 1;
};

PlanResult search_layouts(const models::scenario::Scenario& base, const DeviceProfile& profile,
                          const SearchSpace& space, const PlanOptions& options);

// Whether `a` ranks before `b`: the deadline met first, then the objective (days
// where both miss it), then (variant, index), so the order depends on nothing
// but the spaces.
bool ranks_before(const PlannedLayout& a, const PlannedLayout& b, const PlanOptions& options);

// Why a search estimated nothing: every candidate refused by the scenario checks,
// with the keys that refused them (how many, and the first message); "" when
// some candidate was estimated. A space the constraints empty is bad input, not
// a plan that found no layout.
std::string empty_space_problem(const PlanResult& r);

// The searches of every shard as one: the same as the search of all candidates
// at once (counts, first examples, best K, alike counts).
PlanResult merge_plans(const std::vector<PlanResult>& shards, const PlanOptions& options);

// A layout's figures as JSON and back, exactly (NaN and infinities as null, read
// back as NaN).
nlohmann::json metrics_to_json(const LayoutMetrics& m);
LayoutMetrics metrics_from_json(const nlohmann::json& j);

// A shard's result as JSON, to send to the process that merges (MPI), and back:
// the best layouts by index and figures, rebuilt on `base` from `space`. The
// figures round-trip exactly.
nlohmann::json plan_to_json(const PlanResult& r);
PlanResult plan_from_json(const nlohmann::json& j, const models::scenario::Scenario& base,
                          const SearchSpace& space);

// Candidate `index` of the space's enumeration (tp outermost, placement
// innermost), before apply_layout derives it: stages of alike layers, or where
// pp does not divide the model's layers, the middle stages one more each.
models::scenario::ParallelSpec layout_at(const models::scenario::Scenario& base,
                                         const SearchSpace& space, std::size_t index);

// Puts a layout on a scenario: its parallelism, with the degrees and schedule
// derived afresh (models::scenario::derive), a zero-bubble schedule kept as the
// layout names it. The scenario checks are the caller's.
void apply_layout(models::scenario::Scenario& s, const models::scenario::ParallelSpec& p);

// The overrides that turn the base scenario (whose parallelism is `base`) into a
// layout: `--set` arguments, with the base's stage splits and DeepSeek-style
// recomputation undone where the layout has none.
std::vector<std::string> layout_overrides(const models::scenario::ParallelSpec& p,
                                          const models::scenario::ParallelSpec& base);
// The --set lines of a pruning variant (model.moe.prune.*).
std::vector<std::string> prune_overrides(const models::scenario::PruneSpec& p);
// The pruning variant of candidate `index`.
models::scenario::PruneSpec prune_at(const models::scenario::Scenario& base,
                                     const SearchSpace& space, std::size_t index);
// A planned layout's scenario: `base` with its parallelism and pruning.
void apply_planned(models::scenario::Scenario& s, const PlannedLayout& l);

}  // namespace myriad::sim
