#include "sim/planning/plan_run.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/plan/pipeline_schedule.hpp"
#include "models/scenario/text_file.hpp"
#include "sim/planning/sweep.hpp"

namespace myriad::sim {
namespace {

int odd_part(int n) {
  while (n > 0 && n % 2 == 0) n /= 2;
  return n;
}

int whole_number(const std::string& v, const char* what) {
  std::size_t used = 0;
  int n = 0;
  try {
    n = std::stoi(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != v.size() || n < 1) {
    throw std::invalid_argument(fmt::format("'{}' is not {}", v, what));
  }
  return n;
}

}  // namespace

std::optional<std::pair<int, int>> plain_range(const std::string& text) {
  static const std::regex plain(R"(^\s*(\d{1,9})\s*\.\.\s*(\d{1,9})\s*$)");
  std::smatch m;
  if (!std::regex_match(text, m, plain)) return std::nullopt;
  const int lo = std::stoi(m[1]);
  const int hi = std::stoi(m[2]);
  if (lo < 1 || hi < lo) {
    throw std::invalid_argument(
        fmt::format("'{}': expected A..B with 1 <= A <= B", models::scenario::printable(text)));
  }
  return std::pair{lo, hi};
}

void batch_into(const std::string& spec, const models::scenario::Scenario& s, SearchSpace& space) {
  if (spec.empty()) return;
  if (const auto range = plain_range(spec)) {
    space.batch_range = SearchSpace::BatchRange{range->first, range->second, s.cluster.gpus};
    space.global_batch = {range->second};  // one slot, which each layout fills from the range
    return;
  }
  space.global_batch.clear();
  for (const auto& v : parse_axis("parallelism.global_batch=" + spec).values) {
    space.global_batch.push_back(whole_number(v, "a batch"));
  }
}

std::vector<int> gpu_counts(const std::string& spec, int per_node, bool* ranged) {
  if (ranged != nullptr) *ranged = false;
  std::vector<int> counts;
  if (const auto range = plain_range(spec)) {
    if (ranged != nullptr) *ranged = true;
    for (int nodes = (range->first + per_node - 1) / per_node;
         static_cast<long long>(nodes) * per_node <= range->second; ++nodes) {
      if (odd_part(nodes) <= 7) counts.push_back(nodes * per_node);
    }
    return counts;
  }
  for (const auto& v : parse_axis("cluster.gpus=" + spec).values) {
    counts.push_back(whole_number(v, "a GPU count"));
  }
  return counts;
}

std::string plan_objective(const std::string& given, double max_days, bool priced) {
  if (!given.empty()) return given;
  if (max_days <= 0) return "days";
  return priced ? "cost" : "gpu-hours";
}

const PlanVariant& PlanVariants::of(std::size_t index) const {
  const auto after =
      std::upper_bound(all.begin(), all.end(), index,
                       [](std::size_t i, const PlanVariant& v) { return i < v.offset; });
  return *std::prev(after);
}

std::size_t PlanVariants::candidates() const {
  std::size_t n = 0;
  for (const auto& v : all) n += v.candidates;
  return n;
}

bool PlanVariants::priced() const {
  return std::all_of(all.begin(), all.end(),
                     [](const PlanVariant& v) { return v.base.cluster.price_per_gpu_hour > 0; });
}

bool PlanVariants::several_counts() const {
  return std::any_of(all.begin(), all.end(), [&](const PlanVariant& v) {
    return v.base.cluster.gpus != all.front().base.cluster.gpus;
  });
}

bool PlanVariants::several_hardware() const {
  return std::any_of(all.begin(), all.end(),
                     [&](const PlanVariant& v) { return v.hardware != all.front().hardware; });
}

void LayoutSample::add(std::size_t index) {
  if (seen_++ % stride_ != 0) return;
  if (kept_.size() == kMostReportLayouts) {
    thin();
    if ((seen_ - 1) % stride_ != 0) return;
  }
  kept_.push_back(index);
}

void LayoutSample::absorb(const std::vector<std::size_t>& kept, std::size_t seen) {
  kept_.insert(kept_.end(), kept.begin(), kept.end());
  std::sort(kept_.begin(), kept_.end());
  seen_ += seen;
  while (kept_.size() > kMostReportLayouts) thin();
}

void LayoutSample::thin() {
  std::vector<std::size_t> half;
  for (std::size_t i = 0; i < kept_.size(); i += 2) half.push_back(kept_[i]);
  kept_ = std::move(half);
  stride_ *= 2;
}

void merge_searches(const PlanVariants& v, const std::vector<std::vector<PlanResult>>& shards,
                    const PlanOptions& options, PlanSearch& out) {
  // Each search merged over the processes, then all of them over one numbering.
  std::vector<PlanResult> searches;
  for (std::size_t i = 0; i < v.all.size(); ++i) {
    PlanResult r = merge_plans(shards[i], options);
    for (auto& l : r.top) {
      l.index += v.all[i].offset;
      l.variant = i;
    }
    for (auto& [key, by] : r.pruned_by) by.first += v.all[i].offset;
    if (!r.top.empty()) out.firsts.push_back(r.top.front());
    searches.push_back(std::move(r));
  }
  out.result = merge_plans(searches, options);
}

const GrowthPhase* GrowthPhases::of(std::size_t variant) {
  const PlanVariant& v = variants_.all.at(variant);
  if (!v.base.training.growth.given()) return nullptr;
  auto it = phases_.find(variant);
  if (it == phases_.end()) {
    it = phases_.emplace(variant, growth_phase(v.base, v.profile)).first;
  }
  return &it->second;
}

PlanColumns plan_columns(const PlanVariants& v, const std::vector<Rescored>& best,
                         const PlanOptions& options, bool rescored, bool deadline) {
  const SearchSpace& space = v.all.front().space;
  PlanColumns c;
  c.rescored = rescored;
  c.hardware = v.several_hardware();
  for (std::size_t i = 0; i < v.all.size() && !c.variant; ++i) {
    for (std::size_t j = i + 1; j < v.all.size(); ++j) {
      if (v.all[i].hardware == v.all[j].hardware &&
          v.all[i].base.cluster.gpus == v.all[j].base.cluster.gpus) {
        c.variant = true;
        break;
      }
    }
  }
  c.gpus = v.several_counts();
  c.etp = !space.etp.empty();
  c.pruning = space.prune.size() > 1;
  // Several searched, or the scenario's own kept where a layout runs it (1F1B or
  // interleaved elsewhere).
  c.schedule =
      space.schedule.size() > 1 ||
      (space.schedule.empty() && models::named_schedule(v.all.front().base.parallelism.schedule));
  c.batch = space.global_batch.size() > 1 || space.batch_range.has_value();
  c.stages = options.balanced_stages;
  c.simulated = std::any_of(best.begin(), best.end(),
                            [](const Rescored& x) { return x.simulated_step_s.has_value(); });
  c.campaigned =
      std::any_of(best.begin(), best.end(), [](const Rescored& x) { return x.days.has_value(); });
  c.priced = v.priced();
  c.deadline = deadline;
  return c;
}

std::string variant_label(const PlanVariants& v, std::size_t index) {
  std::vector<std::string> shown;
  for (const auto& set : v.all[index].sets) {
    if (set.starts_with("cluster.gpus=")) continue;
    const bool everywhere = std::all_of(v.all.begin(), v.all.end(), [&](const PlanVariant& x) {
      return std::find(x.sets.begin(), x.sets.end(), set) != x.sets.end();
    });
    if (!everywhere) shown.push_back(set);
  }
  return fmt::format("{}", fmt::join(shown, ", "));
}

std::vector<std::string> best_overrides(const PlanVariants& v, const PlannedLayout& l) {
  std::vector<std::string> sets = v.all[l.variant].sets;
  for (auto& set : layout_overrides(l.parallelism, v.all[l.variant].base.parallelism)) {
    sets.push_back(std::move(set));
  }
  if (!v.all.front().space.prune.empty()) {
    for (auto& set : prune_overrides(l.prune)) sets.push_back(std::move(set));
  }
  return sets;
}

std::vector<const PlannedLayout*> firsts_by_hardware(const PlanVariants& v,
                                                     const PlanSearch& search,
                                                     const PlanOptions& options) {
  std::vector<const PlannedLayout*> firsts;
  for (const auto& l : search.firsts) {
    const auto same = std::find_if(firsts.begin(), firsts.end(), [&](const auto* f) {
      return v.all[f->variant].hardware == v.all[l.variant].hardware;
    });
    if (same == firsts.end()) {
      firsts.push_back(&l);
    } else if (ranks_before(l, **same, options)) {
      *same = &l;
    }
  }
  std::stable_sort(firsts.begin(), firsts.end(),
                   [&](const auto* a, const auto* b) { return ranks_before(*a, *b, options); });
  return firsts;
}

std::vector<PlanPoint> plan_points(const PlanVariants& v, const PlanOptions& options,
                                   const PlanSearch& search, const std::vector<PlannedLayout>& best,
                                   GrowthPhases& growth) {
  std::vector<std::size_t> indices = search.sample.kept();
  std::map<std::size_t, int> rank_of;
  std::map<std::size_t, const PlannedLayout*> best_of;
  for (std::size_t i = 0; i < best.size(); ++i) {
    rank_of[best[i].index] = static_cast<int>(i) + 1;
    best_of[best[i].index] = &best[i];
    if (std::find(indices.begin(), indices.end(), best[i].index) == indices.end()) {
      indices.push_back(best[i].index);
    }
  }
  std::sort(indices.begin(), indices.end());
  std::vector<PlanPoint> points;
  points.reserve(indices.size());
  std::vector<std::vector<double>> values;
  std::vector<bool> candidate;
  for (const std::size_t index : indices) {
    const PlanVariant& x = v.of(index);
    const std::size_t local = index - x.offset;
    PlanPoint e{x.base, {}, {}, static_cast<std::size_t>(&x - v.all.data()), index, false, 0};
    PlannedLayout l{local, layout_at(x.base, x.space, local), prune_at(x.base, x.space, local), {}};
    // A best layout as the search kept it (its balanced stage split, if any).
    if (const auto found = best_of.find(index); found != best_of.end()) {
      l.parallelism = found->second->parallelism;
      e.rank = rank_of.at(index);
    }
    apply_planned(e.s, l);
    e.report = estimate(e.s, x.profile, Detail::summary);
    e.m = metrics_of(e.s, e.report);
    if (const GrowthPhase* g = growth.of(e.variant)) e.m = with_growth(e.m, *g);
    values.push_back({e.m.objective(options.objective.name), e.m.memory});
    candidate.push_back(e.m.memory <= options.headroom && e.m.days <= options.max_days);
    points.push_back(std::move(e));
  }
  const std::vector<bool> front =
      pareto_front(values, {options.objective, {"memory", false}}, candidate);
  for (std::size_t i = 0; i < points.size(); ++i) points[i].front = front[i];
  return points;
}

// What the v column's * says, where a row shown has it: which of the embedding and
// the loss take a layer's place in the pipeline split.
std::string counted_layers_note(const std::vector<Rescored>& best) {
  bool both = false;  // rows that count the embedding and the loss
  bool embedding = false;
  bool loss = false;
  for (const auto& b : best) {
    const auto& p = b.layout.parallelism;
    both = both || (p.embedding_as_layer && p.loss_as_layer);
    embedding = embedding || (p.embedding_as_layer && !p.loss_as_layer);
    loss = loss || (p.loss_as_layer && !p.embedding_as_layer);
  }
  const int kinds = int{both} + int{embedding} + int{loss};
  if (kinds == 0) return "";
  const char* what = kinds > 1 ? "the embedding, the loss or both take"
                     : both    ? "the embedding and the loss each take"
                     : loss    ? "the loss takes"
                               : "the embedding takes";
  return fmt::format(
      "v*: the model's layers do not split evenly over pp x v model chunks, so {} a layer's "
      "place in the split, the first or last chunk a layer short, as the row's --set line says "
      "(parallelism.embedding_as_layer and loss_as_layer: Megatron-LM's "
      "--account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split).\n",
      what);
}

}  // namespace myriad::sim
