// `myriad plan` over several searches (sim/planning/plan_run.hpp): each cluster or
// GPU that --vary compares, at each GPU count of --gpus, is the scenario with
// those overrides, loaded and checked here (its own layout may be invalid there:
// the search replaces it), priced on its own device profile and searched, this
// process's share of each under mpirun (plan_command.cpp prints them,
// plan_report.cpp draws them).
#pragma once

#include <optional>
#include <vector>

#include "sim/planning/layout_search.hpp"
#include "sim/planning/plan_run.hpp"
#include "tools/cli/plan_options.hpp"
#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

using sim::gpu_counts;
using sim::GrowthPhases;
using sim::LayoutSample;
using sim::PlanSearch;
using sim::PlanVariant;
using sim::PlanVariants;

// The searches of a plan from its options; prints why and returns nothing on bad input.
std::optional<PlanVariants> plan_variants(const PlanCliOptions& o, Streams io,
                                          const Environment& env);

// Every search, this process's share of each under mpirun; rank 0 gathers the
// others' (MPI), merges them (sim::merge_searches) and gets the result, the
// others nothing.
std::optional<PlanSearch> search_variants(const PlanVariants& v, sim::PlanOptions options,
                                          bool sample, Streams io, const Environment& env);

// The HTML report (plan_report.cpp): the layouts drawn, the best ranked, the
// deadline and the GPU budget, and which layouts meet the deadline.
bool write_plan_report(const PlanCliOptions& o, const PlanVariants& v,
                       const sim::PlanOptions& options, const PlanSearch& search,
                       const std::vector<sim::PlannedLayout>& best, GrowthPhases& growth,
                       Streams io, const Environment& env);

}  // namespace myriad::cli
