// `myriad plan` over several searches, as data: each cluster or GPU count that
// --vary and --gpus compare is a search (the scenario with those overrides, on
// its own device profile); their layouts are ranked together, their indices
// consecutive across the searches. Here: the searches' bookkeeping, the GPU
// counts --gpus names, the objective a plan ranks by, the merge of every search
// (and every process's share under mpirun), the layouts a report draws, the
// growth what-if of each search, which columns the table of the best shows, and
// the points of the HTML report. Loading the searches and printing are the
// command line's (tools/cli/plan_*.cpp).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/cost/device_profile.hpp"
#include "sim/planning/growth.hpp"
#include "sim/planning/layout_search.hpp"
#include "sim/planning/rescore.hpp"

namespace myriad::sim {

// One search: a cluster at one GPU count.
struct PlanVariant {
  std::vector<std::string> sets;  // its overrides after the user's (--vary values, cluster.gpus)
  std::string hardware;           // "B200 in Llama-3-like RoCE"
  models::scenario::Scenario base;
  DeviceProfile profile;
  SearchSpace space;
  std::size_t offset = 0;  // its first candidate's index among all
  std::size_t candidates = 0;
};

struct PlanVariants {
  models::scenario::Scenario scenario;  // as the user gave it, before the searches' overrides
  std::vector<PlanVariant> all;
  std::vector<std::string> skipped;  // counts a cluster cannot take, with why
  std::string batch_origin;          // "the scenario's", "--global-batch", "--global-batch range"
  std::string gpus_origin;           // "the scenario's", or how --gpus was read
  [[nodiscard]] const PlanVariant& of(std::size_t index) const;
  [[nodiscard]] std::size_t candidates() const;
  [[nodiscard]] bool priced() const;  // every cluster has a price per GPU-hour
  [[nodiscard]] bool several_counts() const;
  [[nodiscard]] bool several_hardware() const;
};

// The GPU counts `--gpus` names for nodes of `per_node` GPUs: a list or a stepped
// or geometric range as given; a plain range A..B, the whole-node counts in it
// whose number of nodes is 2^k x 1, 3, 5 or 7. Why those: the searched tp, pp and
// cp are powers of two, so dp = GPUs / (tp pp cp) keeps the count's odd factor,
// and the global batch, a multiple of micro-batch x dp, must hold it too; an odd
// factor of at most 7 leaves batches near a power of two within reach (1,536
// nodes of 8 = 3 x 2^9: dp 96, batch 1,536 or 2,304), and gives four counts a
// doubling, at most 25 % apart. Throws std::invalid_argument.
std::vector<int> gpu_counts(const std::string& spec, int per_node, bool* ranged = nullptr);

// A plain range "A..B" (no step, no factor): its ends. Throws
// std::invalid_argument when A..B is not 1 <= A <= B.
std::optional<std::pair<int, int>> plain_range(const std::string& text);

// Reads --global-batch into the space: a list, or a range for the layouts to take
// from. Throws std::invalid_argument.
void batch_into(const std::string& spec, const models::scenario::Scenario& s, SearchSpace& space);

// The objective a plan ranks by: the one given, else days; with a deadline the
// cheapest plan that meets it (cost where every cluster is priced, else GPU-hours).
std::string plan_objective(const std::string& given, double max_days, bool priced);

// The layouts a report draws: every one estimated, thinned evenly (every other
// one dropped, then every fourth kept, ...) beyond kMostReportLayouts, so that
// memory stays flat and the browser draws quickly. Indices are across searches.
class LayoutSample {
 public:
  static constexpr std::size_t kMostReportLayouts = 10000;
  void add(std::size_t index);
  // Another process's sample (mpirun): the union, thinned evenly to the most.
  void absorb(const std::vector<std::size_t>& kept, std::size_t seen);
  [[nodiscard]] const std::vector<std::size_t>& kept() const { return kept_; }
  [[nodiscard]] std::size_t seen() const { return seen_; }

 private:
  void thin();
  std::vector<std::size_t> kept_;
  std::size_t seen_ = 0;
  std::size_t stride_ = 1;
};

// Every search merged: the result (indices across searches, variants set), the
// layouts a report draws, and each search's first (none where none fits).
struct PlanSearch {
  PlanResult result;
  LayoutSample sample;
  std::vector<PlannedLayout> firsts;
};

// Merges each search's shards (one a process under mpirun, shards[i] for
// v.all[i]), then all of them over one numbering, into `out`.
void merge_searches(const PlanVariants& v, const std::vector<std::vector<PlanResult>>& shards,
                    const PlanOptions& options, PlanSearch& out);

// The growth phase of each search (training.growth), computed once when first asked.
class GrowthPhases {
 public:
  explicit GrowthPhases(const PlanVariants& v) : variants_(v) {}
  // Null without growth; throws std::invalid_argument as growth_phase does.
  const GrowthPhase* of(std::size_t variant);

 private:
  const PlanVariants& variants_;
  std::map<std::size_t, GrowthPhase> phases_;
};

// Which optional columns the table of the best layouts shows.
struct PlanColumns {
  bool rescored = false;    // est. #: the rank by the estimate
  bool hardware = false;    // several clusters
  bool variant = false;     // --vary values that hardware and GPUs do not tell apart
  bool gpus = false;        // several GPU counts
  bool etp = false;         // expert tensor parallelism searched
  bool pruning = false;     // several expert prunings
  bool batch = false;       // several global batches
  bool schedule = false;    // several pipeline schedules (--schedules)
  bool stages = false;      // the stage split searched (--stages balanced)
  bool simulated = false;   // vs estimate: a step engine's step
  bool campaigned = false;  // ETTR: a campaign's
  bool priced = false;      // cost: every cluster priced
  bool deadline = false;    // deadline: --max-days
};
// Under the table, where a row's v is marked (its chunks count the embedding or
// the loss as a layer): which, and why; empty where none is.
std::string counted_layers_note(const std::vector<Rescored>& best);

PlanColumns plan_columns(const PlanVariants& v, const std::vector<Rescored>& best,
                         const PlanOptions& options, bool rescored, bool deadline);

// What tells search `index` apart from the others where its hardware and GPU
// count may not: its --vary values that are not the same in every search
// ("cluster.network.planes_down=1"), cluster.gpus left out (a column of its own).
std::string variant_label(const PlanVariants& v, std::size_t index);

// The --set overrides that reproduce `l` on the user's scenario: its search's
// own, then the layout's and its pruning (where the search varied it).
std::vector<std::string> best_overrides(const PlanVariants& v, const PlannedLayout& l);

// The first of each cluster, at whichever GPU count, best first.
std::vector<const PlannedLayout*> firsts_by_hardware(const PlanVariants& v,
                                                     const PlanSearch& search,
                                                     const PlanOptions& options);

// One layout the HTML report draws: the scenario as played, its estimate and
// figures (growth included), its search, whether it is on the Pareto front of
// the objective and memory, and its rank among the best (0: not among them).
struct PlanPoint {
  models::scenario::Scenario s;
  StepReport report;
  LayoutMetrics m;
  std::size_t variant = 0;
  std::size_t index = 0;
  bool front = false;
  int rank = 0;
};
// The sampled layouts and the best (as the search kept them: a balanced stage
// split), in index order, each estimated again.
std::vector<PlanPoint> plan_points(const PlanVariants& v, const PlanOptions& options,
                                   const PlanSearch& search, const std::vector<PlannedLayout>& best,
                                   GrowthPhases& growth);

}  // namespace myriad::sim
