// `myriad validate [SUITE...]`: predicted against published, per row and suite.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "sim/analytic/leave_one_out.hpp"
#include "sim/analytic/validation_suite.hpp"
#include "tools/cli/report_table.hpp"
#include "tools/cli/validate_options.hpp"

namespace myriad::cli {
namespace {

std::vector<std::string> suite_files(const ValidateOptions& o, const Environment& env, Streams io,
                                     bool& ok) {
  std::vector<std::string> available;
  for (const auto& e : std::filesystem::directory_iterator(env.validation_dir)) {
    if (e.path().extension() == ".yaml") available.push_back(e.path().stem().string());
  }
  std::sort(available.begin(), available.end());
  if (o.suites.empty()) {
    std::vector<std::string> all;
    all.reserve(available.size());
    for (const auto& name : available)
      all.push_back((env.validation_dir / (name + ".yaml")).string());
    return all;
  }
  std::vector<std::string> files;
  for (const auto& s : o.suites) {
    if (std::filesystem::exists(s)) {
      files.push_back(s);
    } else if (std::find(available.begin(), available.end(), s) != available.end()) {
      files.push_back((env.validation_dir / (s + ".yaml")).string());
    } else {
      std::string list;
      for (const auto& a : available) list += (list.empty() ? "" : ", ") + a;
      io.err << fmt::format("myriad validate: error: no suite '{}'{}; suites: {}\n", s,
                            models::scenario::did_you_mean(s, available), list);
      ok = false;
    }
  }
  return files;
}

std::string format_value(const std::string& metric, double v) {
  if (metric == "mfu") return percent(v);
  if (metric == "normalized_throughput") return fmt::format("{:.3f}x", v);
  return seconds(v);
}

void print_result(const sim::ValidationResult& r, std::ostream& out) {
  out << fmt::format("{}: {}\n  source: {}\n", r.name, r.title, r.source);
  Table t({"case", r.metric, "published", "predicted", "error"}, "llrrr");
  for (const auto& row : r.rows) {
    t.add({row.name, row.metric, format_value(r.metric, row.published),
           format_value(r.metric, row.predicted), fmt::format("{:+.1f} %", row.rel_error * 100)});
  }
  out << t.str();
  out << fmt::format(
      "  mean |error| {:.1f} % (bound {:.0f} %), max |error| {:.1f} % (bound {:.0f} %): {}\n\n",
      r.mean_abs_rel_error * 100, r.bound_mean * 100, r.max_abs_rel_error * 100, r.bound_max * 100,
      r.within_bounds() ? "within bounds" : "OUT OF BOUNDS");
}

nlohmann::json to_json(const std::vector<sim::ValidationResult>& results) {
  nlohmann::json suites = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& row : r.rows) {
      rows.push_back({{"case", row.name},
                      {"metric", row.metric},
                      {"published", row.published},
                      {"predicted", row.predicted},
                      {"rel_error", row.rel_error}});
    }
    suites.push_back({{"name", r.name},
                      {"mean_abs_rel_error", r.mean_abs_rel_error},
                      {"max_abs_rel_error", r.max_abs_rel_error},
                      {"within_bounds", r.within_bounds()},
                      {"rows", rows}});
  }
  return {{"suites", suites}};
}

std::string leave_one_out_text(const std::vector<sim::HeldOutSuite>& held,
                               const std::vector<sim::FreeParameter>& params,
                               const sim::ParameterFit* all, const std::string& title) {
  std::vector<std::string> header = {"suite left out"};
  std::string align = "l";
  for (const auto& p : params) {
    header.push_back(p.name);
    align += "r";
  }
  for (const char* h : {"fit error", "held out mean", "max", "shipped mean", "max"}) {
    header.emplace_back(h);
    align += "r";
  }
  Table t(header, align);
  const auto row = [&](const std::string& name, const sim::ParameterFit& fit,
                       std::vector<std::string> tail) {
    std::vector<std::string> cells = {name};
    for (double v : fit.values) cells.push_back(fmt::format("{:.4g}", v));
    cells.push_back(percent(fit.mean_abs_rel_error));
    cells.insert(cells.end(), tail.begin(), tail.end());
    t.add(cells);
  };
  for (const auto& h : held) {
    row(h.suite, h.fit,
        {percent(h.mean), percent(h.max), percent(h.shipped_mean), percent(h.shipped_max)});
  }
  if (all != nullptr) row("(none: fitted on all)", *all, {"", "", "", ""});
  return title + t.str();
}

nlohmann::json leave_one_out_json(const std::vector<sim::HeldOutSuite>& held,
                                  const std::vector<sim::FreeParameter>& params,
                                  const std::string& over) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& h : held) {
    nlohmann::json fitted = nlohmann::json::object();
    for (std::size_t k = 0; k < h.fit.values.size(); ++k) fitted[params[k].name] = h.fit.values[k];
    out.push_back({{"suite", h.suite},
                   {"over", over},
                   {"fitted", fitted},
                   {"fit_mean_abs_rel_error", h.fit.mean_abs_rel_error},
                   {"held_out_mean_abs_rel_error", h.mean},
                   {"held_out_max_abs_rel_error", h.max},
                   {"shipped_mean_abs_rel_error", h.shipped_mean},
                   {"shipped_max_abs_rel_error", h.shipped_max}});
  }
  return out;
}

// --leave-one-out: one fit per device profile over the suites whose rows all take
// it, and one across every profile of the shared assumptions, every suite left
// out in turn. False (said why) when there is nothing to fit on.
bool leave_one_out(const std::vector<sim::Suite>& suites,
                   const std::map<std::string, sim::DeviceProfile>& profiles,
                   const sim::ProfileLookup& lookup, Streams io, nlohmann::json& json) {
  std::map<std::string, std::vector<const sim::Suite*>> by_profile;
  std::vector<const sim::Suite*> every;
  for (const auto& suite : suites) {
    if (!suite.left_out_of_fits.empty()) {
      io.out << fmt::format("left out of the fits: {}: {}\n", suite.name, suite.left_out_of_fits);
      continue;
    }
    std::set<std::string> names;
    for (const auto& c : suite.cases) names.insert(c.scenario.cluster.gpu.profile);
    if (names.size() == 1) by_profile[*names.begin()].push_back(&suite);
    every.push_back(&suite);
  }
  nlohmann::json held_json = nlohmann::json::array();
  int fitted = 0;
  for (const auto& [name, group] : by_profile) {
    if (group.size() < 2) continue;
    const sim::DeviceProfile& base = profiles.at(name);
    io.err << "profile " << name << ": fitting " << sim::free_parameters().size() << " parameters, "
           << group.size() + 1 << " times...\n";
    std::vector<sim::Suite> own;
    own.reserve(group.size());
    for (const sim::Suite* suite : group) own.push_back(*suite);
    const auto held = sim::leave_one_suite_out(own, base);
    const sim::ParameterFit all = sim::fit_parameters(group, base);
    io.out << fmt::format("\nprofile {} ({} suites):\n", name, group.size());
    io.out << leave_one_out_text(
        held, sim::free_parameters(), &all,
        "Leave one suite out: the profile's assumed parameters fitted (pooled mean |error|) on "
        "the other suites,\nthen the suite left out predicted; beside it, the shipped "
        "profile's errors on it.\n");
    for (const auto& h : leave_one_out_json(held, sim::free_parameters(), name)) {
      held_json.push_back(h);
    }
    ++fitted;
  }
  std::set<std::string> every_profile;
  for (const sim::Suite* suite : every) {
    for (const auto& c : suite->cases) every_profile.insert(c.scenario.cluster.gpu.profile);
  }
  if (every.size() > 1 && every_profile.size() > 1) {
    io.err << "every profile: fitting " << sim::shared_parameters().size() << " shared parameters, "
           << every.size() << " times...\n";
    const auto held = sim::leave_one_suite_out_across_profiles(every, lookup);
    io.out << fmt::format("\nacross profiles ({} suites):\n", every.size());
    io.out << leave_one_out_text(
        held, sim::shared_parameters(), nullptr,
        "Leave one suite out across profiles: the assumptions every profile makes alike fitted "
        "as one value on the\nother suites, each on its own profile, then the suite left out "
        "predicted on its own; beside it, the shipped profile's errors on it.\n");
    for (const auto& h : leave_one_out_json(held, sim::shared_parameters(), "every profile")) {
      held_json.push_back(h);
    }
    ++fitted;
  }
  if (fitted == 0) {
    io.err << fmt::format(
        "myriad validate: error: --leave-one-out fits over two or more suites; these {} "
        "suite(s) are too few\n",
        every.size());
    return false;
  }
  json["leave_one_out"] = held_json;
  return true;
}

}  // namespace

int run_validate(const ValidateOptions& o, Streams io, const Environment& env) {
  bool ok = true;
  const auto files = suite_files(o, env, io, ok);
  if (!ok || !outputs_ok("validate", {{"--json", o.json_file}}, files, io)) return kExitBadInput;
  ScenarioOptions so;
  so.preset_path = o.preset_path;
  const models::scenario::LoadOptions load{preset_path(so, env)};
  std::map<std::string, sim::DeviceProfile> profiles;
  bool missing_profile = false;
  const sim::ProfileLookup lookup =
      [&](const models::scenario::Scenario& s) -> const sim::DeviceProfile& {
    const auto it = profiles.find(s.cluster.gpu.profile);
    if (it != profiles.end()) return it->second;
    auto p = profile_for(s, "", io, env);
    if (!p) {
      missing_profile = true;
      throw std::runtime_error("no device profile for " + s.cluster.gpu.name);
    }
    return profiles.emplace(s.cluster.gpu.profile, std::move(*p)).first->second;
  };
  std::vector<sim::Suite> suites;
  std::vector<sim::ValidationResult> results;
  for (const auto& f : files) {
    try {
      suites.push_back(sim::load_suite(f, load));
      results.push_back(sim::evaluate(suites.back(), lookup));
      print_result(results.back(), io.out);
    } catch (const models::scenario::ScenarioError& e) {
      io.err << e.what();
      return kExitBadInput;
    }
  }
  if (missing_profile) return kExitBadInput;
  nlohmann::json json = to_json(results);
  if (o.leave_one_out && !leave_one_out(suites, profiles, lookup, io, json)) {
    return kExitBadInput;
  }
  if (!o.json_file.empty()) {
    if (!write_json(o.json_file, json, "validate", io)) return kExitFailure;
  }
  return kExitOk;
}

}  // namespace myriad::cli
