#include "tools/cli/plan_search.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>
#include <regex>
#include <set>

#include "models/scenario/loader.hpp"
#include "models/scenario/run_title.hpp"
#include "models/scenario/text_file.hpp"
#include "sim/plan/sweep.hpp"

namespace myriad::cli {
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

// A plain range "A..B" (no step, no factor): its ends.
std::optional<std::pair<int, int>> plain_range(const std::string& text) {
  static const std::regex plain(R"(^\s*(\d{1,9})\s*\.\.\s*(\d{1,9})\s*$)");
  std::smatch m;
  if (!std::regex_match(text, m, plain)) return std::nullopt;
  const int lo = std::stoi(m[1]);
  const int hi = std::stoi(m[2]);
  if (lo < 1 || hi < lo) {
    throw std::invalid_argument(
        fmt::format("'{}': expected A..B with 1 <= A <= B", models::printable(text)));
  }
  return std::pair{lo, hi};
}

// The user's overrides, then the search's own.
std::vector<std::string> joined_sets(const std::vector<std::string>& user,
                                     const std::vector<std::string>& own) {
  std::vector<std::string> all = user;
  all.insert(all.end(), own.begin(), own.end());
  return all;
}

// Reads --global-batch into the space: a list, or a range for the layouts to take from.
void batch_into(const std::string& spec, const scenario::Scenario& s, sim::SearchSpace& space) {
  if (spec.empty()) return;
  if (const auto range = plain_range(spec)) {
    space.batch_range = sim::SearchSpace::BatchRange{range->first, range->second, s.cluster.gpus};
    space.global_batch = {range->second};  // one slot, which each layout fills from the range
    return;
  }
  space.global_batch.clear();
  for (const auto& v : sim::parse_axis("parallelism.global_batch=" + spec).values) {
    space.global_batch.push_back(whole_number(v, "a batch"));
  }
}

}  // namespace

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
  for (const auto& v : sim::parse_axis("cluster.gpus=" + spec).values) {
    counts.push_back(whole_number(v, "a GPU count"));
  }
  return counts;
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

// Over 100 lines with its messages: one pass over the clusters and counts.
// NOLINTNEXTLINE(readability-function-size)
std::optional<PlanVariants> plan_variants(const PlanCliOptions& o, Streams io,
                                          const Environment& env) {
  const VerbOutputs outputs{"plan", {{"--csv", o.csv_file}, {"--report", o.report_file}}};
  std::string text;
  const auto scenario = load_for_cli(o.scenario, io, env, &text, &outputs, true);
  if (!scenario) return std::nullopt;
  const auto fail = [&](const std::string& option, const std::string& why) {
    io.err << fmt::format("myriad plan: error: {}{}{}\n", option, option.empty() ? "" : ": ", why);
    return std::nullopt;
  };
  std::vector<std::vector<std::string>> configs = {{}};
  if (!o.vary.empty()) {
    try {
      std::vector<sim::SweepAxis> axes;
      for (const auto& a : o.vary) axes.push_back(sim::parse_axis(a));
      configs = sim::expand_axes(axes, o.zip, sim::kMostSweepConfigs);
    } catch (const std::invalid_argument& e) {
      return fail("--vary", e.what());
    }
  }
  PlanVariants out;
  out.scenario = *scenario;
  out.batch_origin = o.global_batch.empty()        ? "the scenario's"
                     : plain_range(o.global_batch) ? "--global-batch, a range"
                                                   : "--global-batch";
  out.gpus_origin = "the scenario's";
  ProfileCache profiles;
  std::set<std::string> said;  // warnings printed once across the searches
  for (const auto& w : scenario->warnings) said.insert(w.str());
  const auto load = [&](const std::vector<std::string>& sets) {
    scenario::LoadOptions options{preset_path(o.scenario, env),
                                  joined_sets(o.scenario.overrides, sets)};
    options.layout_searched = true;
    return scenario::load_scenario_text(text, scenario_name(o.scenario), options);
  };
  for (const auto& config : configs) {
    scenario::Scenario cluster;
    try {
      cluster = load(config);
    } catch (const scenario::ScenarioError& e) {
      io.err << fmt::format("myriad plan: error: with --set {}:\n", fmt::join(config, " --set "))
             << e.what();
      return std::nullopt;
    }
    std::vector<int> counts = {cluster.cluster.gpus};
    if (!o.gpus.empty()) {
      try {
        bool ranged = false;
        counts = gpu_counts(o.gpus, cluster.cluster.gpus_per_node, &ranged);
        out.gpus_origin =
            ranged ? fmt::format("--gpus {}: whole nodes, 2^k x 1, 3, 5 or 7 of them", o.gpus)
                   : fmt::format("--gpus {}", o.gpus);
      } catch (const std::invalid_argument& e) {
        return fail("--gpus", e.what());
      }
    }
    const std::string hardware =
        fmt::format("{} in {}", cluster.cluster.gpu.name, cluster.cluster.name);
    if (counts.empty()) {
      out.skipped.push_back(fmt::format("{}: no count in --gpus {} makes whole nodes of {}",
                                        hardware, o.gpus, cluster.cluster.gpus_per_node));
    }
    for (const int gpus : counts) {
      PlanVariant v;
      v.sets = config;
      if (!o.gpus.empty()) v.sets.push_back(fmt::format("cluster.gpus={}", gpus));
      v.hardware = hardware;
      if (gpus % cluster.cluster.gpus_per_node != 0) {
        out.skipped.push_back(fmt::format("{} x {}: not whole nodes of {}", hardware,
                                          scenario::grouped(gpus), cluster.cluster.gpus_per_node));
        continue;
      }
      try {
        v.base = load(v.sets);
      } catch (const scenario::ScenarioError& e) {
        const auto* first = e.diagnostics().first_error();
        out.skipped.push_back(fmt::format("{} x {}: {}", hardware, scenario::grouped(gpus),
                                          first != nullptr ? first->str() : e.what()));
        continue;
      }
      for (const auto& w : v.base.warnings) {
        if (w.key.starts_with("parallelism.") || !said.insert(w.str()).second) continue;
        io.err << w.str() << '\n';
      }
      const auto profile = profile_for(v.base, o.profile, io, env, &profiles);
      if (!profile) return std::nullopt;
      v.profile = *profile;
      v.space = sim::default_space(v.base);
      try {
        batch_into(o.global_batch, v.base, v.space);
      } catch (const std::invalid_argument& e) {
        return fail("--global-batch", e.what());
      }
      try {
        v.space.prune = sim::parse_prune_axis(v.base, o.prune);
      } catch (const std::invalid_argument& e) {
        return fail("--prune", e.what());
      }
      v.offset = out.candidates();
      v.candidates = sim::candidate_count(v.space);
      out.all.push_back(std::move(v));
    }
  }
  for (const auto& why : out.skipped) io.err << "myriad plan: skipped " << why << "\n";
  if (out.all.empty()) return fail("", "no cluster and GPU count left to search (above)");
  return out;
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

std::optional<PlanSearch> search_variants(const PlanVariants& v, sim::PlanOptions options,
                                          bool sample, Streams io, const Environment& env) {
  const World& world = env.world;
  const auto ranks = static_cast<std::size_t>(world.size);
  const auto own = static_cast<std::size_t>(world.rank);
  std::size_t total = 0;  // this process's share of every search's candidates
  for (const auto& x : v.all) total += (x.candidates + ranks - 1 - own) / ranks;
  std::optional<ProgressLine> line;  // erased when the search ends
  std::size_t done = 0;
  if (own == 0) line.emplace(io, env, "plan");
  options.shard = world.rank;
  options.shards = world.size;
  PlanSearch out;
  std::vector<sim::PlanResult> mine;
  for (const auto& x : v.all) {
    if (line) {
      options.progress = [&line, &done, total](std::size_t n) {
        line->update(done + n, total, "candidates");
      };
    }
    if (sample) {
      options.on_evaluated = [&out, &x](std::size_t index, const scenario::ParallelSpec&) {
        out.sample.add(x.offset + index);
      };
    }
    mine.push_back(sim::search_layouts(x.base, x.profile, x.space, options));
    done += mine.back().candidates;
  }
  line.reset();
  std::vector<std::vector<sim::PlanResult>> shards(v.all.size());
  if (world.size > 1) {
    nlohmann::json j = {{"sample", out.sample.kept()},
                        {"seen", out.sample.seen()},
                        {"searches", nlohmann::json::array()}};
    for (const auto& r : mine) j["searches"].push_back(sim::plan_to_json(r));
    const std::vector<std::string> parts = world.gather(j.dump());
    if (world.rank != 0) return std::nullopt;
    LayoutSample all;
    for (const std::string& text : parts) {
      const auto part = nlohmann::json::parse(text);
      for (std::size_t i = 0; i < v.all.size(); ++i) {
        shards[i].push_back(
            sim::plan_from_json(part.at("searches").at(i), v.all[i].base, v.all[i].space));
      }
      all.absorb(part.at("sample").get<std::vector<std::size_t>>(),
                 part.at("seen").get<std::size_t>());
    }
    out.sample = std::move(all);
  } else {
    for (std::size_t i = 0; i < v.all.size(); ++i) shards[i].push_back(std::move(mine[i]));
  }
  // Each search merged over the processes, then all of them over one numbering.
  std::vector<sim::PlanResult> searches;
  for (std::size_t i = 0; i < v.all.size(); ++i) {
    sim::PlanResult r = sim::merge_plans(shards[i], options);
    for (auto& l : r.top) {
      l.index += v.all[i].offset;
      l.variant = i;
    }
    for (auto& [key, by] : r.pruned_by) by.first += v.all[i].offset;
    if (!r.top.empty()) out.firsts.push_back(r.top.front());
    searches.push_back(std::move(r));
  }
  out.result = sim::merge_plans(searches, options);
  return out;
}

const sim::GrowthPhase* GrowthPhases::of(std::size_t variant) {
  const PlanVariant& v = variants_.all.at(variant);
  if (!v.base.training.growth.given()) return nullptr;
  auto it = phases_.find(variant);
  if (it == phases_.end()) {
    it = phases_.emplace(variant, sim::growth_phase(v.base, v.profile)).first;
  }
  return &it->second;
}

}  // namespace myriad::cli
