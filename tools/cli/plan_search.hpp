// `myriad plan` over several searches: each cluster or GPU that --vary compares,
// at each GPU count of --gpus, is the scenario with those overrides, loaded and
// checked (its own layout may be invalid there: the search replaces it), priced
// on its own device profile and searched; the layouts are ranked together, their
// indices consecutive across the searches (plan_command.cpp prints them,
// plan_report.cpp draws them).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "models/scenario/scenario.hpp"
#include "sim/cost/device_profile.hpp"
#include "sim/plan/growth.hpp"
#include "sim/plan/layout_search.hpp"
#include "tools/cli/plan_options.hpp"
#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

// One search: a cluster at one GPU count.
struct PlanVariant {
  std::vector<std::string> sets;  // its overrides after the user's (--vary values, cluster.gpus)
  std::string hardware;           // "B200 in Llama-3-like RoCE"
  scenario::Scenario base;
  sim::DeviceProfile profile;
  sim::SearchSpace space;
  std::size_t offset = 0;  // its first candidate's index among all
  std::size_t candidates = 0;
};

struct PlanVariants {
  scenario::Scenario scenario;  // as the user gave it, before the searches' overrides
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

// The searches of a plan from its options; prints why and returns nothing on bad input.
std::optional<PlanVariants> plan_variants(const PlanCliOptions& o, Streams io,
                                          const Environment& env);

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

// Every search, this process's share of each under mpirun; rank 0 merges and
// gets the result (indices across searches, variants set), the others nothing.
struct PlanSearch {
  sim::PlanResult result;
  LayoutSample sample;
  std::vector<sim::PlannedLayout> firsts;  // each search's first (none where none fits)
};
std::optional<PlanSearch> search_variants(const PlanVariants& v, sim::PlanOptions options,
                                          bool sample, Streams io, const Environment& env);

// The growth phase of each search (training.growth), computed once when first asked.
class GrowthPhases {
 public:
  explicit GrowthPhases(const PlanVariants& v) : variants_(v) {}
  // Null without growth; throws std::invalid_argument as sim::growth_phase does.
  const sim::GrowthPhase* of(std::size_t variant);

 private:
  const PlanVariants& variants_;
  std::map<std::size_t, sim::GrowthPhase> phases_;
};

// The HTML report (plan_report.cpp): the layouts drawn, the best ranked, the
// deadline and the GPU budget, and which layouts meet the deadline.
bool write_plan_report(const PlanCliOptions& o, const PlanVariants& v,
                       const sim::PlanOptions& options, const PlanSearch& search,
                       const std::vector<sim::PlannedLayout>& best, GrowthPhases& growth,
                       Streams io, const Environment& env);

}  // namespace myriad::cli
