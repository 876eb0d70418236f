// A plan search's result as JSON and back (the shards of an MPI search send
// theirs to the first), exactly: NaN and infinities as null, read back as NaN
// (declared in layout_search.hpp).
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/planning/layout_search.hpp"

namespace myriad::sim {
namespace {

nlohmann::json number(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

double number_of(const nlohmann::json& j) {
  return j.is_number() ? j.get<double>() : std::numeric_limits<double>::quiet_NaN();
}

std::vector<std::string> module_names(const std::vector<models::scenario::OffloadModule>& modules) {
  std::vector<std::string> names;
  names.reserve(modules.size());
  for (const auto m : modules) {
    names.emplace_back(models::name_in(models::scenario::kOffloadModuleNames, m));
  }
  return names;
}

std::vector<models::scenario::OffloadModule> modules_named(const nlohmann::json& j) {
  std::vector<models::scenario::OffloadModule> modules;
  for (const auto& name : j) {
    const std::string text = name.get<std::string>();
    const auto m = models::value_in<models::scenario::OffloadModule>(
        models::scenario::kOffloadModuleNames, text);
    if (!m) throw std::invalid_argument("plan JSON: unknown offload module \"" + text + "\"");
    modules.push_back(*m);
  }
  return modules;
}

}  // namespace

nlohmann::json metrics_to_json(const LayoutMetrics& m) {
  return {{"gpus", m.gpus},         {"step_time_s", number(m.step_time_s)},
          {"mfu", number(m.mfu)},   {"tokens_per_s", number(m.tokens_per_s)},
          {"days", number(m.days)}, {"gpu_hours", number(m.gpu_hours)},
          {"cost", number(m.cost)}, {"memory", number(m.memory)},
          {"fits", m.fits}};
}

LayoutMetrics metrics_from_json(const nlohmann::json& j) {
  LayoutMetrics m;
  m.gpus = j.at("gpus").get<int>();
  m.step_time_s = number_of(j.at("step_time_s"));
  m.mfu = number_of(j.at("mfu"));
  m.tokens_per_s = number_of(j.at("tokens_per_s"));
  m.days = number_of(j.at("days"));
  m.gpu_hours = number_of(j.at("gpu_hours"));
  m.cost = number_of(j.at("cost"));
  m.memory = number_of(j.at("memory"));
  m.fits = j.at("fits").get<bool>();
  return m;
}

nlohmann::json plan_to_json(const PlanResult& r) {
  nlohmann::json pruned = nlohmann::json::object();
  for (const auto& [key, by] : r.pruned_by) {
    pruned[key] = {{"count", by.count}, {"example", by.example}, {"first", by.first}};
  }
  nlohmann::json top = nlohmann::json::array();
  for (const PlannedLayout& l : r.top) {
    top.push_back({{"index", l.index},
                   {"alike", l.alike},
                   {"metrics", metrics_to_json(l.metrics)},
                   {"stage_layers", l.parallelism.stage_layers},
                   {"embedding_as_layer", l.parallelism.embedding_as_layer},
                   {"loss_as_layer", l.parallelism.loss_as_layer},
                   {"recompute_layers", l.parallelism.recompute_layers},
                   {"offload_layers", l.parallelism.offload_layers},
                   {"offload_modules", module_names(l.parallelism.offload_modules)}});
  }
  return {{"candidates", r.candidates},
          {"pruned", r.pruned},
          {"over_memory", r.over_memory},
          {"evaluated", r.evaluated},
          {"balanced", r.balanced},
          {"partial", r.partial},
          {"offloaded", r.offloaded},
          {"offloaded_modules", r.offloaded_modules},
          {"meets_deadline", r.meets_deadline},
          {"pruned_by", pruned},
          {"top", top}};
}

PlanResult plan_from_json(const nlohmann::json& j, const models::scenario::Scenario& base,
                          const SearchSpace& space) {
  PlanResult r;
  r.candidates = j.at("candidates").get<std::size_t>();
  r.pruned = j.at("pruned").get<std::size_t>();
  r.over_memory = j.at("over_memory").get<std::size_t>();
  r.evaluated = j.at("evaluated").get<std::size_t>();
  r.balanced = j.at("balanced").get<std::size_t>();
  r.partial = j.at("partial").get<std::size_t>();
  r.offloaded = j.at("offloaded").get<std::size_t>();
  r.offloaded_modules = j.at("offloaded_modules").get<std::size_t>();
  r.meets_deadline = j.at("meets_deadline").get<std::size_t>();
  for (const auto& [key, by] : j.at("pruned_by").items()) {
    r.pruned_by[key] = {by.at("count").get<std::size_t>(), by.at("example").get<std::string>(),
                        by.at("first").get<std::size_t>()};
  }
  models::scenario::Scenario s = base;
  for (const auto& t : j.at("top")) {
    PlannedLayout l;
    l.index = t.at("index").get<std::size_t>();
    l.alike = t.at("alike").get<std::size_t>();
    apply_layout(s, layout_at(base, space, l.index));
    l.parallelism = s.parallelism;
    l.parallelism.stage_layers = t.at("stage_layers").get<std::vector<int>>();
    l.parallelism.embedding_as_layer = t.at("embedding_as_layer").get<bool>();
    l.parallelism.loss_as_layer = t.at("loss_as_layer").get<bool>();
    l.parallelism.recompute_layers = t.at("recompute_layers").get<int>();
    l.parallelism.offload_layers = t.at("offload_layers").get<int>();
    l.parallelism.offload_modules = modules_named(t.at("offload_modules"));
    l.prune = prune_at(base, space, l.index);
    l.metrics = metrics_from_json(t.at("metrics"));
    r.top.push_back(l);
  }
  return r;
}

}  // namespace myriad::sim
