#include "tools/cli/plan_search.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "models/scenario/loader.hpp"
#include "models/scenario/run_title.hpp"
#include "sim/planning/sweep.hpp"

namespace myriad::cli {
namespace {

// "myriad plan: error: OPTION: WHY", and false.
bool plan_error(Streams io, const std::string& option, const std::string& why) {
  io.err << fmt::format("myriad plan: error: {}{}{}\n", option, option.empty() ? "" : ": ", why);
  return false;
}

// The user's overrides, then the search's own.
std::vector<std::string> joined_sets(const std::vector<std::string>& user,
                                     const std::vector<std::string>& own) {
  std::vector<std::string> all = user;
  all.insert(all.end(), own.begin(), own.end());
  return all;
}

// Loads a plan's searches: each configuration --vary spans at each GPU count.
class VariantLoader {
 public:
  VariantLoader(const PlanCliOptions& o, Streams io, const Environment& env,
                const std::string& text, const models::scenario::Scenario& scenario)
      : o_(o), io_(io), env_(env), text_(text) {
    for (const auto& w : scenario.warnings) said_.insert(w.str());
  }

  // The searches of one --vary configuration; false, said, on bad input.
  bool add_cluster(const std::vector<std::string>& config, PlanVariants& out) {
    models::scenario::Scenario cluster;
    try {
      cluster = load(config);
    } catch (const models::scenario::ScenarioError& e) {
      io_.err << fmt::format("myriad plan: error: with --set {}:\n", fmt::join(config, " --set "))
              << e.what();
      return false;
    }
    std::vector<int> counts = {cluster.cluster.gpus};
    if (!o_.gpus.empty()) {
      try {
        bool ranged = false;
        counts = gpu_counts(o_.gpus, cluster.cluster.gpus_per_node, &ranged);
        out.gpus_origin =
            ranged ? fmt::format("--gpus {}: whole nodes, 2^k x 1, 3, 5 or 7 of them", o_.gpus)
                   : fmt::format("--gpus {}", o_.gpus);
      } catch (const std::invalid_argument& e) {
        return plan_error(io_, "--gpus", e.what());
      }
    }
    const std::string hardware =
        fmt::format("{} in {}", cluster.cluster.gpu.name, cluster.cluster.name);
    if (counts.empty()) {
      out.skipped.push_back(fmt::format("{}: no count in --gpus {} makes whole nodes of {}",
                                        hardware, o_.gpus, cluster.cluster.gpus_per_node));
    }
    for (const int gpus : counts) {
      if (!add_count(cluster, config, hardware, gpus, out)) return false;
    }
    return true;
  }

 private:
  models::scenario::Scenario load(const std::vector<std::string>& sets) const {
    models::scenario::LoadOptions options{preset_path(o_.scenario, env_),
                                          joined_sets(o_.scenario.overrides, sets)};
    options.layout_searched = true;
    return models::scenario::load_scenario_text(text_, scenario_name(o_.scenario), options);
  }

  // One search: the cluster at `gpus`; skipped (with why) when it cannot take them.
  bool add_count(const models::scenario::Scenario& cluster, const std::vector<std::string>& config,
                 const std::string& hardware, int gpus, PlanVariants& out) {
    PlanVariant v;
    v.sets = config;
    if (!o_.gpus.empty()) v.sets.push_back(fmt::format("cluster.gpus={}", gpus));
    v.hardware = hardware;
    if (gpus % cluster.cluster.gpus_per_node != 0) {
      out.skipped.push_back(fmt::format("{} x {}: not whole nodes of {}", hardware,
                                        models::scenario::grouped(gpus),
                                        cluster.cluster.gpus_per_node));
      return true;
    }
    try {
      v.base = load(v.sets);
    } catch (const models::scenario::ScenarioError& e) {
      const auto* first = e.diagnostics().first_error();
      out.skipped.push_back(fmt::format("{} x {}: {}", hardware, models::scenario::grouped(gpus),
                                        first != nullptr ? first->str() : e.what()));
      return true;
    }
    for (const auto& w : v.base.warnings) {
      if (w.key.starts_with("parallelism.") || !said_.insert(w.str()).second) continue;
      io_.err << w.str() << '\n';
    }
    const auto profile = profile_for(v.base, o_.profile, io_, env_, &profiles_);
    if (!profile) return false;
    v.profile = *profile;
    v.space = sim::default_space(v.base);
    try {
      sim::batch_into(o_.global_batch, v.base, v.space);
    } catch (const std::invalid_argument& e) {
      return plan_error(io_, "--global-batch", e.what());
    }
    try {
      v.space.prune = sim::parse_prune_axis(v.base, o_.prune);
    } catch (const std::invalid_argument& e) {
      return plan_error(io_, "--prune", e.what());
    }
    try {
      v.space.schedule = sim::parse_schedule_axis(o_.schedules);
    } catch (const std::invalid_argument& e) {
      return plan_error(io_, "--schedules", e.what());
    }
    v.offset = out.candidates();
    v.candidates = sim::candidate_count(v.space);
    out.all.push_back(std::move(v));
    return true;
  }

  const PlanCliOptions& o_;
  Streams io_;
  const Environment& env_;
  const std::string& text_;
  ProfileCache profiles_;
  std::set<std::string> said_;  // warnings printed once across the searches
};

// The configurations --vary spans ({{}} without it); nothing, said, on bad input.
std::optional<std::vector<std::vector<std::string>>> vary_configs(const PlanCliOptions& o,
                                                                  Streams io) {
  if (o.vary.empty()) return std::vector<std::vector<std::string>>{{}};
  try {
    std::vector<sim::SweepAxis> axes;
    for (const auto& a : o.vary) axes.push_back(sim::parse_axis(a));
    return sim::expand_axes(axes, o.zip, sim::kMostSweepConfigs);
  } catch (const std::invalid_argument& e) {
    plan_error(io, "--vary", e.what());
    return std::nullopt;
  }
}

}  // namespace

std::optional<PlanVariants> plan_variants(const PlanCliOptions& o, Streams io,
                                          const Environment& env) {
  const VerbOutputs outputs{"plan", {{"--csv", o.csv_file}, {"--report", o.report_file}}};
  std::string text;
  const auto scenario = load_for_cli(o.scenario, io, env, &text, &outputs, true);
  if (!scenario) return std::nullopt;
  const auto configs = vary_configs(o, io);
  if (!configs) return std::nullopt;
  PlanVariants out;
  out.scenario = *scenario;
  out.batch_origin = o.global_batch.empty()             ? "the scenario's"
                     : sim::plain_range(o.global_batch) ? "--global-batch, a range"
                                                        : "--global-batch";
  out.gpus_origin = "the scenario's";
  VariantLoader loader(o, io, env, text, *scenario);
  for (const auto& config : *configs) {
    if (!loader.add_cluster(config, out)) return std::nullopt;
  }
  for (const auto& why : out.skipped) io.err << "myriad plan: skipped " << why << "\n";
  if (out.all.empty()) {
    plan_error(io, "", "no cluster and GPU count left to search (above)");
    return std::nullopt;
  }
  return out;
}

namespace {

// Under mpirun: every process's searches and sample to rank 0, which gets them
// all, by search; the others nothing.
std::optional<std::vector<std::vector<sim::PlanResult>>> gather_searches(
    const PlanVariants& v, std::vector<sim::PlanResult>& mine, PlanSearch& out,
    const World& world) {
  std::vector<std::vector<sim::PlanResult>> shards(v.all.size());
  if (world.size <= 1) {
    for (std::size_t i = 0; i < v.all.size(); ++i) shards[i].push_back(std::move(mine[i]));
    return shards;
  }
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
  return shards;
}

}  // namespace

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
      options.on_evaluated = [&out, &x](std::size_t index, const models::scenario::ParallelSpec&) {
        out.sample.add(x.offset + index);
      };
    }
    mine.push_back(sim::search_layouts(x.base, x.profile, x.space, options));
    done += mine.back().candidates;
  }
  line.reset();
  const auto shards = gather_searches(v, mine, out, world);
  if (!shards) return std::nullopt;
  sim::merge_searches(v, *shards, options, out);
  return out;
}

}  // namespace myriad::cli
