#include "sim/planning/layout_search.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>

#include "models/plan/pipeline_schedule.hpp"
#include "models/plan/step_plan.hpp"
#include "models/scenario/pipeline_checks.hpp"
#include "models/scenario/scenario_checks.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/analytic/fit_remedies.hpp"
#include "sim/planning/memory_axes.hpp"
#include "sim/stage_split/pipeline_split.hpp"

namespace myriad::sim {
namespace {

std::vector<int> powers_of_two(int up_to) {
  std::vector<int> out;
  for (int v = 1; v <= up_to; v *= 2) out.push_back(v);
  return out;
}

template <class T>
std::vector<T> or_base(const std::vector<T>& values, T base) {
  return values.empty() ? std::vector<T>{base} : values;
}

bool better(const PlannedLayout& a, const PlannedLayout& b, const PlanOptions& o) {
  return ranks_before(a, b, o);
}

// Alike: the same search, step time and memory (so the same objective).
bool alike(const PlannedLayout& a, const PlannedLayout& b) {
  return a.variant == b.variant && a.metrics.step_time_s == b.metrics.step_time_s &&
         a.metrics.memory == b.metrics.memory;
}

}  // namespace

bool ranks_before(const PlannedLayout& a, const PlannedLayout& b, const PlanOptions& options) {
  const bool a_meets = a.metrics.days <= options.max_days;
  const bool b_meets = b.metrics.days <= options.max_days;
  if (a_meets != b_meets) return a_meets;
  const Objective& o = options.objective;
  const double x = a_meets ? a.metrics.objective(o.name) : a.metrics.days;
  const double y = b_meets ? b.metrics.objective(o.name) : b.metrics.days;
  if (x != y) return a_meets && o.maximize ? x > y : x < y;
  if (a.variant != b.variant) return a.variant < b.variant;
  return a.index < b.index;
}

int batch_in_range(const models::scenario::ParallelSpec& p, const SearchSpace::BatchRange& range) {
  const long long model_parallel = static_cast<long long>(p.tp) * p.pp * p.cp;
  if (model_parallel <= 0 || range.gpus % model_parallel != 0) return range.lo;
  long long step = p.micro_batch * (range.gpus / model_parallel);
  // The interleaved schedule (a layout's with virtual stages: apply_layout derives
  // it) runs micro-batches in groups of pp (scenario checks).
  if (p.virtual_stages > 1 || p.schedule == models::scenario::Schedule::interleaved) step *= p.pp;
  const long long largest = range.hi / step * step;
  return largest >= range.lo ? static_cast<int>(largest) : range.lo;
}

double LayoutMetrics::objective(const std::string& name) const {
  if (name == "gpu-hours") return gpu_hours;
  if (name == "cost") return cost;
  if (name == "gpus") return gpus;
  if (name == "step-time") return step_time_s;
  if (name == "tokens-per-s") return tokens_per_s;
  if (name == "mfu") return mfu;
  if (name == "memory") return memory;
  return days;
}

LayoutMetrics metrics_of(const models::scenario::Scenario& s, const StepReport& r) {
  LayoutMetrics m;
  m.gpus = s.cluster.gpus;
  m.step_time_s = r.step_time_s;
  m.set_rates(step_rates(s, r.model_flops, r.hardware_flops, r.step_time_s));
  m.memory = r.memory_usable() > 0 ? r.memory_needed() / r.memory_usable()
                                   : std::numeric_limits<double>::infinity();
  m.fits = r.fits;
  return m;
}

SearchSpace default_space(const models::scenario::Scenario& s) {
  SearchSpace space;
  space.tp = powers_of_two(s.cluster.gpus_per_node);
  space.pp = powers_of_two(std::min(s.model.layers, 64));
  space.virtual_stages = {1, 2, 3, 4, 5, 6, 8};
  space.cp = s.model.seq_length >= 8192 ? std::vector<int>{1, 2, 4} : std::vector<int>{1};
  space.ep = {1};
  if (s.model.is_moe()) {
    space.ep.clear();
    // An ep group is made of GPUs: a degree above the cluster is never valid.
    for (int e = 1; e <= std::min(s.model.moe.experts, s.cluster.gpus); e *= 2) {
      if (s.model.moe.experts % e == 0) space.ep.push_back(e);
    }
  }
  if (s.model.is_moe()) space.etp = {0, 1};
  space.micro_batch = {1, 2, 4, 8};
  space.zero = {0, 1, 2, 3};
  space.global_batch = {s.parallelism.global_batch};
  space.recompute = {models::scenario::Recompute::none, models::scenario::Recompute::selective,
                     models::scenario::Recompute::full};
  space.placement = {models::scenario::RankOrder::tp_cp_dp_pp,
                     models::scenario::RankOrder::tp_cp_pp_dp};
  return space;
}

namespace {

// The space's lists, each the scenario's own value where the space leaves it empty.
struct Lists {
  std::vector<int> tp, pp, v, cp, ep, etp, mb, zero, batch;
  std::vector<models::scenario::Recompute> recompute;
  std::vector<models::scenario::RankOrder> placement;
  std::vector<models::scenario::Schedule> schedule;
  bool schedules_searched = false;  // SearchSpace::schedule listed
  std::vector<models::scenario::PruneSpec> prune;
  std::optional<SearchSpace::BatchRange> batch_range;
  int layers = 0;    // the model's
  bool moe = false;  // whether it has experts

  Lists(const SearchSpace& space, const models::scenario::ParallelSpec& p0,
        const models::scenario::PruneSpec& prune0, const models::scenario::ModelSpec& model)
      : tp(or_base(space.tp, p0.tp)),
        pp(or_base(space.pp, p0.pp)),
        v(or_base(space.virtual_stages, p0.virtual_stages)),
        cp(or_base(space.cp, p0.cp)),
        ep(or_base(space.ep, p0.ep)),
        etp(or_base(space.etp, p0.etp == p0.tp ? 0 : p0.etp)),
        mb(or_base(space.micro_batch, p0.micro_batch)),
        zero(or_base(space.zero, p0.zero)),
        batch(or_base(space.global_batch, p0.global_batch)),
        recompute(or_base(space.recompute, p0.recompute)),
        placement(or_base(space.placement, p0.placement)),
        schedule(or_base(space.schedule, p0.schedule)),
        schedules_searched(!space.schedule.empty()),
        prune(or_base(space.prune, prune0)),
        batch_range(space.batch_range),
        layers(model.layers),
        moe(model.is_moe()) {}

  // Layouts per pruning variant.
  [[nodiscard]] std::size_t layouts() const {
    return tp.size() * pp.size() * v.size() * cp.size() * ep.size() * etp.size() * mb.size() *
           zero.size() * batch.size() * recompute.size() * placement.size() * schedule.size();
  }
  [[nodiscard]] std::size_t size() const { return layouts() * prune.size(); }

  // Candidate `index` of the enumeration: the pruning variant outermost, then tp,
  // placement innermost.
  [[nodiscard]] models::scenario::ParallelSpec at(const models::scenario::ParallelSpec& p0,
                                                  std::size_t index) const {
    index %= layouts();
    const auto next = [&index](const auto& list) {
      const auto& value = list[index % list.size()];
      index /= list.size();
      return value;
    };
    models::scenario::ParallelSpec p = p0;
    p.placement = next(placement);
    p.schedule = next(schedule);
    p.recompute = next(recompute);
    p.global_batch = next(batch);
    p.zero = next(zero);
    p.micro_batch = next(mb);
    const int expert_tp = next(etp);
    p.ep = next(ep);
    p.cp = next(cp);
    p.virtual_stages = next(v);
    p.pp = next(pp);
    p.tp = next(tp);
    p.sp = p.tp > 1;
    p.etp = expert_tp == 0 ? p.tp : expert_tp;
    // The scenario's zero-bubble schedule where the layout can run it; 1F1B or
    // interleaved elsewhere. A searched one stays, for the checks to refuse.
    if (!schedules_searched && models::splits_backward(p.schedule) &&
        (p.virtual_stages > 1 || p.pp < 2)) {
      p.schedule = models::scenario::Schedule::one_f_one_b;
    }
    // Likewise the scenario's combined 1F1B: interleaved when pp > 1, with
    // expert parallelism.
    if (!schedules_searched && p.schedule == models::scenario::Schedule::combined_1f1b &&
        !models::combined_1f1b_runs(p.ep, p.pp, p.virtual_stages)) {
      p.schedule = models::scenario::Schedule::one_f_one_b;
    }
    // Its delayed weight gradients go with it.
    if (p.schedule != models::scenario::Schedule::combined_1f1b) p.delay_wgrad_compute = false;
    p.first_stage_layers = 0;
    p.last_stage_layers = 0;
    p.stage_layers.clear();
    // The scenario's pipeline layout where the search keeps its stages and chunks.
    if (p.pp != p0.pp || p.virtual_stages != p0.virtual_stages) {
      p.pipeline_layout.clear();
      p.layout_layers.clear();
    }
    // Model chunks that cannot hold alike layers (Qwen3-235B's 94 on 8 x 4, Llama
    // 3 405B's 126 on 16 x 8): the embedding or the loss as a layer, as those ran.
    if (p.pipeline_layout.empty()) even_chunks(p);
    // Stages that cannot hold alike layers (DeepSeek-V3's 61 on 16): one more on each
    // stage between the first and the last, from the second on, as far as it takes.
    if (p.virtual_stages == 1 && p.pp > 2 && layers % p.pp != 0 && layers >= p.pp &&
        !p.embedding_as_layer && !p.loss_as_layer) {
      const int rest = layers % p.pp;
      p.stage_layers.assign(static_cast<std::size_t>(p.pp), layers / p.pp);
      for (int k = 0; k < rest; ++k) {
        const int stage = 1 + k % (p.pp - 2);
        ++p.stage_layers[static_cast<std::size_t>(stage)];
      }
    }
    // Recomputing whole layers or attention already recomputes otherwise; partial
    // recomputation is the scenario's, kept where full recomputation is.
    if (p.recompute != models::scenario::Recompute::none) p.recompute_norms_and_up = false;
    if (p.recompute == models::scenario::Recompute::full) p.recompute_moe_act = false;
    if (p.recompute != models::scenario::Recompute::full) p.recompute_layers = 0;
    // Activation offload is the scenario's, kept where Megatron-LM runs it (one
    // stage, no recomputation); its modules' where the recomputation leaves them.
    if (p.pp != 1 || p.recompute != models::scenario::Recompute::none) p.offload_layers = 0;
    if (p.recompute == models::scenario::Recompute::full) p.offload_modules.clear();
    std::erase_if(p.offload_modules, [&](models::scenario::OffloadModule m) {
      return !models::scenario::offload_module_clash(p, moe, m).empty();
    });
    if (batch_range) p.global_batch = batch_in_range(p, *batch_range);
    return p;
  }
  // embedding_as_layer, loss_as_layer (first and last chunk a layer short): the
  // scenario's, else the first of none, both, the loss, the embedding that evens
  // the chunks; none if nothing does, on one stage, or on > 2 without interleaving.
  void even_chunks(models::scenario::ParallelSpec& p) const {
    const int chunks = p.pp * p.virtual_stages;
    const auto evens = [&](bool embedding, bool loss) {
      return chunks > 0 && (layers + int{embedding} + int{loss}) % chunks == 0;
    };
    if (p.pp >= 2 && evens(p.embedding_as_layer, p.loss_as_layer)) return;
    p.embedding_as_layer = false;
    p.loss_as_layer = false;
    if (p.pp < 2 || (p.virtual_stages == 1 && p.pp > 2) || evens(false, false)) return;
    for (const auto& [embedding, loss] : {std::pair{true, true}, {false, true}, {true, false}}) {
      if (evens(embedding, loss)) {
        p.embedding_as_layer = embedding;
        p.loss_as_layer = loss;
        return;
      }
    }
  }
  [[nodiscard]] const models::scenario::PruneSpec& prune_at(std::size_t index) const {
    return prune[index / layouts()];
  }
};

}  // namespace

std::string empty_space_problem(const PlanResult& r) {
  if (r.candidates == 0 || r.evaluated > 0) return "";
  std::vector<std::string> keys;
  for (const auto& [key, by] : r.pruned_by) {
    keys.push_back(fmt::format("{} refused {} ('{}')", key.empty() ? "the scenario" : key, by.count,
                               by.example));
  }
  return fmt::format(
      "the search space is empty: the scenario checks refused all {} candidates, so none was "
      "estimated: {}",
      r.candidates, fmt::join(keys, "; "));
}

std::vector<models::scenario::Schedule> parse_schedule_axis(const std::string& values) {
  std::vector<models::scenario::Schedule> out;
  if (values.empty()) return out;
  for (const auto& name : parse_axis("parallelism.schedule=" + values).values) {
    auto schedule =
        models::value_in<models::scenario::Schedule>(models::scenario::kScheduleNames, name);
    if (!schedule) {
      throw std::invalid_argument(fmt::format(
          "expected schedules among 1f1b, interleaved, zb-h1, dualpipe and combined-1f1b, "
          "comma-separated; "
          "found '{}'",
          name));
    }
    // Interleaved is 1F1B with virtual stages: the layout's say which it runs.
    if (*schedule == models::scenario::Schedule::interleaved) {
      schedule = models::scenario::Schedule::one_f_one_b;
    }
    if (std::find(out.begin(), out.end(), *schedule) == out.end()) out.push_back(*schedule);
  }
  return out;
}

std::size_t candidate_count(const SearchSpace& space) {
  std::size_t n = 1;
  for (std::size_t size :
       {space.tp.size(), space.pp.size(), space.virtual_stages.size(), space.cp.size(),
        space.ep.size(), space.etp.size(), space.micro_batch.size(), space.zero.size(),
        space.global_batch.size(), space.recompute.size(), space.placement.size(),
        space.schedule.size(), space.prune.size()}) {
    n *= std::max<std::size_t>(size, 1);
  }
  return n;
}

std::string search_too_large(const SearchSpace& space) {
  const std::size_t count = candidate_count(space);
  if (count <= kMostCandidates) return {};
  struct List {
    const char* name;
    std::size_t size;
    const char* origin;
  };
  const List lists[] = {
      {"tp", space.tp.size(), "cluster.gpus_per_node"},
      {"pp", space.pp.size(), "model.layers"},
      {"virtual stages", space.virtual_stages.size(), "the search"},
      {"cp", space.cp.size(), "model.seq_length"},
      {"ep", space.ep.size(), "model.moe.experts and cluster.gpus"},
      {"etp", space.etp.size(), "the search"},
      {"micro-batches", space.micro_batch.size(), "the search"},
      {"zero", space.zero.size(), "the search"},
      {"global batches", space.global_batch.size(), "--global-batch"},
      {"recomputations", space.recompute.size(), "the search"},
      {"placements", space.placement.size(), "the search"},
      {"schedules", space.schedule.size(), "--schedules"},
      {"pruning variants", space.prune.size(), "--prune"},
  };
  std::vector<std::string> sizes;
  const List* longest = &lists[0];
  for (const List& l : lists) {
    if (l.size <= 1) continue;
    sizes.push_back(fmt::format("{} {}", l.name, l.size));
    if (l.size > longest->size) longest = &l;
  }
  return fmt::format(
      "the search spans {} candidates ({}), more than the {} a plan may try (about 100,000 "
      "a second, fewer where they are estimated); the most values: {} {} ({}): narrow it",
      count, fmt::join(sizes, " x "), kMostCandidates, longest->name, longest->size,
      longest->origin);
}

models::scenario::ParallelSpec layout_at(const models::scenario::Scenario& base,
                                         const SearchSpace& space, std::size_t index) {
  return Lists(space, base.parallelism, {}, base.model).at(base.parallelism, index);
}

models::scenario::PruneSpec prune_at(const models::scenario::Scenario& base,
                                     const SearchSpace& space, std::size_t index) {
  return Lists(space, base.parallelism, base.model.moe.prune, base.model).prune_at(index);
}

PlanResult search_layouts(const models::scenario::Scenario& base, const DeviceProfile& measured,
                          const SearchSpace& space, const PlanOptions& options) {
  if (options.shards < 1 || options.shard < 0 || options.shard >= options.shards) {
    throw std::invalid_argument("search_layouts: the shard must be in [0, shards)");
  }
  // Put on the scenario's GPU once, not once per candidate.
  const DeviceProfile profile = on_hardware(measured, base.cluster.gpu);
  const Lists lists(space, base.parallelism, base.model.moe.prune, base.model);
  const std::size_t total = lists.size();
  const auto shards = static_cast<std::size_t>(options.shards);

  PlanResult result;
  // The layouts kept: a heap whose top is the worst of them.
  const auto worse_first = [&](const PlannedLayout& a, const PlannedLayout& b) {
    return better(a, b, options);
  };
  std::vector<PlannedLayout> kept;
  models::scenario::Scenario s = base;
  const models::scenario::Location where{base.file, 0, 0};
  for (std::size_t index = static_cast<std::size_t>(options.shard); index < total;
       index += shards) {
    ++result.candidates;
    if (options.progress && result.candidates % options.progress_every == 0) {
      options.progress(result.candidates);
    }
    apply_layout(s, lists.at(base.parallelism, index));
    s.model.moe.prune = lists.prune_at(index);
    models::scenario::Diagnostics d;
    models::scenario::check_layout(s, where, d);
    if (d.has_errors()) {
      ++result.pruned;
      const models::scenario::Diagnostic& first = *d.first_error();
      PrunedBy& by = result.pruned_by[first.key];
      if (by.count++ == 0) {
        by.example = first.message;
        by.first = index;
      }
      continue;
    }
    ++result.evaluated;
    PlannedLayout l{index, s.parallelism, s.model.moe.prune,
                    metrics_of(s, estimate(s, profile, Detail::summary))};
    if (options.balanced_stages && s.parallelism.pp > 1 && s.parallelism.recompute_layers == 0) {
      // The stage split as an axis: the balanced one where it is faster, or fits
      // the headroom where the even one does not.
      const std::vector<int> split = balanced_stage_layers(s, profile, options.headroom);
      if (!split.empty() && split != own_stage_layers(s)) {
        const models::scenario::Scenario balanced = with_stage_layers(s, split);
        const LayoutMetrics m = metrics_of(balanced, estimate(balanced, profile, Detail::summary));
        const bool even_fits = l.metrics.memory <= options.headroom;
        if (m.memory <= options.headroom && (!even_fits || m.step_time_s < l.metrics.step_time_s)) {
          l.parallelism = balanced.parallelism;
          l.metrics = m;
          ++result.balanced;
        }
      }
    }
    if (options.partial_recompute && fewest_recomputed(s, profile, options.headroom, l)) {
      ++result.partial;
    }
    if (options.offload && fewest_offloaded(s, profile, options.headroom, l)) {
      ++result.offloaded;
      if (!l.parallelism.offload_modules.empty()) ++result.offloaded_modules;
    }
    if (options.on_evaluated) options.on_evaluated(index, s.parallelism);
    // Within the headroom, and offloaded activations within the host's memory.
    if (!(l.metrics.memory <= options.headroom) || !l.metrics.fits) {
      ++result.over_memory;
      continue;
    }
    if (l.metrics.days <= options.max_days) ++result.meets_deadline;
    // Alike: the same step time and memory as a layout kept, so the same objective
    // and a later index: folded into it. (Order-free: the layouts kept at the end
    // are the best K of the distinct (step time, memory) groups, each its group's
    // first, with the rest of its group counted.)
    const auto same =
        std::find_if(kept.begin(), kept.end(), [&](const auto& k) { return alike(k, l); });
    if (same != kept.end()) {
      ++same->alike;
      continue;
    }
    if (kept.size() < options.top) {
      kept.push_back(l);
      std::push_heap(kept.begin(), kept.end(), worse_first);
    } else if (options.top > 0 && better(l, kept.front(), options)) {
      std::pop_heap(kept.begin(), kept.end(), worse_first);
      kept.back() = l;
      std::push_heap(kept.begin(), kept.end(), worse_first);
    }
  }
  std::sort(kept.begin(), kept.end(), worse_first);
  result.top = std::move(kept);
  return result;
}

PlanResult merge_plans(const std::vector<PlanResult>& shards, const PlanOptions& options) {
  PlanResult out;
  std::vector<PlannedLayout> groups;
  for (const PlanResult& r : shards) {
    out.candidates += r.candidates;
    out.pruned += r.pruned;
    out.over_memory += r.over_memory;
    out.evaluated += r.evaluated;
    out.balanced += r.balanced;
    out.partial += r.partial;
    out.offloaded += r.offloaded;
    out.offloaded_modules += r.offloaded_modules;
    out.meets_deadline += r.meets_deadline;
    for (const auto& [key, by] : r.pruned_by) {
      PrunedBy& merged = out.pruned_by[key];
      if (merged.count == 0 || by.first < merged.first) {
        merged.example = by.example;
        merged.first = by.first;
      }
      merged.count += by.count;
    }
    // A group the best K hold has every shard's members of it in that shard's
    // best K (a shard with K better groups would put K better ones ahead of it).
    for (const PlannedLayout& l : r.top) {
      const auto same =
          std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return alike(g, l); });
      if (same == groups.end()) {
        groups.push_back(l);
      } else {
        const std::size_t alike = same->alike + l.alike + 1;
        if (std::pair(l.variant, l.index) < std::pair(same->variant, same->index)) *same = l;
        same->alike = alike;
      }
    }
  }
  std::sort(groups.begin(), groups.end(),
            [&](const PlannedLayout& a, const PlannedLayout& b) { return better(a, b, options); });
  if (groups.size() > options.top) groups.resize(options.top);
  out.top = std::move(groups);
  return out;
}

void apply_layout(models::scenario::Scenario& s, const models::scenario::ParallelSpec& p) {
  s.parallelism = p;
  // Derived afresh: a layout's dp and schedule follow from its other keys.
  s.origins.erase("parallelism.dp");
  s.origins.erase("parallelism.schedule");
  models::scenario::derive_layout(s);
  // A zero-bubble, DualPipe or combined 1F1B schedule stays as the layout names
  // it (1F1B and interleaved follow from virtual_stages).
  if (models::named_schedule(p.schedule)) s.parallelism.schedule = p.schedule;
}

void apply_planned(models::scenario::Scenario& s, const PlannedLayout& l) {
  apply_layout(s, l.parallelism);
  s.model.moe.prune = l.prune;
}

std::vector<std::string> layout_overrides(const models::scenario::ParallelSpec& p,
                                          const models::scenario::ParallelSpec& base) {
  std::vector<std::string> sets = {
      fmt::format("parallelism.tp={}", p.tp),
      fmt::format("parallelism.sp={}", p.sp ? "true" : "false"),
      fmt::format("parallelism.pp={}", p.pp),
      fmt::format("parallelism.virtual_stages={}", p.virtual_stages),
      fmt::format("parallelism.cp={}", p.cp),
      fmt::format("parallelism.ep={}", p.ep),
      fmt::format("parallelism.etp={}", p.etp),
      fmt::format("parallelism.micro_batch={}", p.micro_batch),
      fmt::format("parallelism.global_batch={}", p.global_batch),
      fmt::format("parallelism.zero={}", p.zero),
      fmt::format("parallelism.recompute={}",
                  models::name_in(models::scenario::kRecomputeNames, p.recompute)),
      fmt::format("parallelism.placement={}",
                  models::name_in(models::scenario::kRankOrderNames, p.placement)),
  };
  if (!p.stage_layers.empty() || !base.stage_layers.empty()) {
    sets.push_back(fmt::format("parallelism.stage_layers=[{}]", fmt::join(p.stage_layers, ",")));
  }
  if (base.first_stage_layers != p.first_stage_layers) {
    sets.push_back(fmt::format("parallelism.first_stage_layers={}", p.first_stage_layers));
  }
  if (base.last_stage_layers != p.last_stage_layers) {
    sets.push_back(fmt::format("parallelism.last_stage_layers={}", p.last_stage_layers));
  }
  if (base.embedding_as_layer != p.embedding_as_layer) {
    sets.push_back(
        fmt::format("parallelism.embedding_as_layer={}", p.embedding_as_layer ? "true" : "false"));
  }
  if (base.loss_as_layer != p.loss_as_layer) {
    sets.push_back(fmt::format("parallelism.loss_as_layer={}", p.loss_as_layer ? "true" : "false"));
  }
  if (base.pipeline_layout != p.pipeline_layout) {
    sets.push_back(fmt::format("parallelism.pipeline_layout=\"{}\"", p.pipeline_layout));
  }
  // The scenario's own schedule kept, or left for an interleaved layout.
  if (models::named_schedule(p.schedule) || models::named_schedule(base.schedule)) {
    sets.push_back(fmt::format("parallelism.schedule={}",
                               models::name_in(models::scenario::kScheduleNames, p.schedule)));
  }
  if (base.recompute_norms_and_up != p.recompute_norms_and_up) {
    sets.push_back(fmt::format("parallelism.recompute_norms_and_up={}",
                               p.recompute_norms_and_up ? "true" : "false"));
  }
  if (base.recompute_moe_act != p.recompute_moe_act) {
    sets.push_back(
        fmt::format("parallelism.recompute_moe_act={}", p.recompute_moe_act ? "true" : "false"));
  }
  if (base.recompute_layers != p.recompute_layers) {
    sets.push_back(fmt::format("parallelism.recompute_layers={}", p.recompute_layers));
  }
  if (base.offload_layers != p.offload_layers) {
    sets.push_back(fmt::format("parallelism.offload_layers={}", p.offload_layers));
  }
  if (base.offload_modules != p.offload_modules) {
    sets.push_back("parallelism.offload_modules=" +
                   models::scenario::offload_modules_text(p.offload_modules));
  }
  return sets;
}

}  // namespace myriad::sim
