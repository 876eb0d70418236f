// `myriad sweep SCENARIO --vary KEY=VALUES ...`: the analytic engine over every
// configuration the axes span (sim/planning/sweep.hpp), as a table, CSV or JSON
// Lines, with the Pareto front of the objectives asked for. A configuration the
// scenario checks refuse is a row with its reason, not a failure of the sweep.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "models/scenario/loader.hpp"
#include "models/scenario/text_file.hpp"
#include "sim/analytic/estimator.hpp"
#include "sim/planning/growth.hpp"
#include "sim/planning/layout_search.hpp"
#include "sim/planning/sweep.hpp"
#include "sim/planning/sweep_run.hpp"
#include "tools/cli/configuration_report.hpp"
#include "tools/cli/csv.hpp"
#include "tools/cli/report_table.hpp"
#include "tools/cli/sweep_options.hpp"

namespace myriad::cli {
namespace {

// Beyond this many configurations a report is refused: a browser draws them slowly.
constexpr std::size_t kMostReportRows = 20000;

using Row = sim::SweepRow;

// The first line of a scenario error without its count header, for a table cell.
std::string first_problem(const std::string& what) {
  std::istringstream in(what);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.find("problem") != std::string::npos) continue;
    return line;
  }
  return what;
}

Row evaluate(const std::string& text, const std::string& name,
             const std::vector<std::string>& config, const SweepOptions& o, const Environment& env,
             ProfileCache& cache, bool keep) {
  Row row;
  row.values = sim::setting_values(config);
  std::vector<std::string> sets = o.scenario.overrides;
  sets.insert(sets.end(), config.begin(), config.end());
  models::scenario::Scenario s;
  try {
    s = models::scenario::load_scenario_text(
        text, name, models::scenario::LoadOptions(preset_path(o.scenario, env), sets));
  } catch (const models::scenario::ScenarioError& e) {
    // The first error, by key: the file and line are the base scenario's, the same
    // on every row.
    const models::scenario::Diagnostic* d = e.diagnostics().first_error();
    row.problem = d == nullptr     ? first_problem(e.what())
                  : d->key.empty() ? d->message
                                   : d->key + ": " + d->message;
    return row;
  }
  std::ostringstream quiet;
  std::ostringstream why;
  const auto profile = profile_for(s, o.profile, {quiet, why, why}, env, &cache);
  if (!profile) {
    row.problem = first_problem(why.str());
    return row;
  }
  sim::evaluate_row(row, s, *profile, keep);
  return row;
}

std::string number_or_empty(double v, const char* format) {
  return std::isfinite(v) ? fmt::format(fmt::runtime(format), v) : std::string{};
}

std::string to_csv(const std::vector<sim::SweepAxis>& axes, const std::vector<Row>& rows) {
  std::string out;
  for (const auto& a : axes) out += csv_field(a.key) + ",";
  out +=
      "gpus,step_time_s,mfu,tokens_per_s,days,gpu_hours,cost_usd,memory_fraction,fits,"
      "pareto,problem\n";
  for (const auto& r : rows) {
    for (const auto& v : r.values) out += csv_field(v) + ",";
    if (r.valid()) {
      out += fmt::format("{},{:.9g},{:.6g},{:.9g},{:.6g},{:.9g},{},{:.6g},{},{},\n", r.m.gpus,
                         r.m.step_time_s, r.m.mfu, r.m.tokens_per_s, r.m.days, r.m.gpu_hours,
                         number_or_empty(r.m.cost, "{:.9g}"), r.m.memory, r.m.fits, r.front);
    } else {
      out += ",,,,,,,,false,false," + csv_field(r.problem) + "\n";
    }
  }
  return out;
}

std::string to_jsonl(const std::vector<sim::SweepAxis>& axes, const std::vector<Row>& rows) {
  std::string out;
  for (const auto& r : rows) {
    nlohmann::ordered_json j;
    nlohmann::ordered_json set = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < axes.size(); ++i) set[axes[i].key] = r.values[i];
    j["set"] = set;
    if (r.valid()) {
      j["gpus"] = r.m.gpus;
      j["step_time_s"] = r.m.step_time_s;
      j["mfu"] = r.m.mfu;
      j["tokens_per_s"] = r.m.tokens_per_s;
      j["days"] = r.m.days;
      j["gpu_hours"] = r.m.gpu_hours;
      j["cost_usd"] = std::isfinite(r.m.cost) ? nlohmann::ordered_json(r.m.cost)
                                              : nlohmann::ordered_json(nullptr);
      j["memory_fraction"] = r.m.memory;
      j["fits"] = r.m.fits;
      j["pareto"] = r.front;
    } else {
      j["problem"] = r.problem;
    }
    out += j.dump() + "\n";
  }
  return out;
}

std::string to_table(const std::vector<sim::SweepAxis>& axes, const std::vector<Row>& rows,
                     bool with_front) {
  std::vector<std::string> headers;
  std::string align;
  for (const auto& a : axes) {
    headers.push_back(a.key);
    align += 'r';
  }
  const bool priced =
      std::any_of(rows.begin(), rows.end(), [](const Row& r) { return std::isfinite(r.m.cost); });
  for (const char* h : {"step time", "MFU", "tokens/s", "days", "GPU-hours"}) {
    headers.emplace_back(h);
    align += 'r';
  }
  if (priced) {
    headers.emplace_back("cost");
    align += 'r';
  }
  headers.emplace_back("memory");
  align += 'r';
  if (with_front) {
    headers.emplace_back("front");
    align += 'l';
  }
  headers.emplace_back("status");
  align += 'l';
  Table table(headers, align);
  for (const auto& r : rows) {
    std::vector<std::string> cells = r.values;
    if (r.valid()) {
      for (const std::string& c :
           {seconds(r.m.step_time_s), percent(r.m.mfu), si_count(r.m.tokens_per_s),
            fmt::format("{:.1f}", r.m.days), si_count(r.m.gpu_hours)}) {
        cells.push_back(c);
      }
      if (priced) cells.push_back(std::isfinite(r.m.cost) ? "$" + si_count(r.m.cost) : "-");
      cells.push_back(percent(r.m.memory, 0));
      if (with_front) cells.emplace_back(r.front ? "*" : "");
      // Within the GPU's memory but not fitting: the offloaded activations overflow the host.
      cells.emplace_back(r.m.fits ? "ok" : r.m.memory <= 1.0 ? "host memory over" : "does not fit");
    } else {
      for (std::size_t i = 0; i < 6 + (priced ? 1 : 0); ++i) cells.emplace_back("-");
      if (with_front) cells.emplace_back("");
      constexpr std::size_t kCell = 100;  // the CSV and JSON Lines carry it whole
      cells.push_back("invalid: " + (r.problem.size() > kCell
                                         ? r.problem.substr(0, kCell - 3) + "..."
                                         : r.problem));
    }
    table.add(std::move(cells));
  }
  return table.str();
}

// A number where the text is one (for the report's axes), else the text.
nlohmann::json axis_value(const std::string& text) {
  std::size_t used = 0;
  try {
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  return text;
}

bool write_report(const SweepOptions& o, const std::vector<sim::SweepAxis>& axes,
                  const std::vector<Row>& rows, const std::vector<sim::Objective>& objectives,
                  const models::scenario::Scenario& base, Streams io, const Environment& env) {
  std::vector<ReportColumn> columns;
  columns.reserve(axes.size());
  for (const auto& a : axes) columns.push_back({a.key, a.key});
  std::string command = "myriad estimate " + o.scenario.scenario;
  for (const auto& set : o.scenario.overrides) command += " --set " + set;
  ConfigurationReport report(
      fmt::format("myriad sweep {}", scenario_name(o.scenario)),
      fmt::format("{} configurations over {}; the analytic engine's figures", rows.size(),
                  axes.empty() ? std::string("the scenario as it stands")
                               : fmt::format("{}", fmt::join(o.vary, ", "))),
      base, command, columns);
  if (!objectives.empty()) {
    report.set_objective(objectives.front());
    std::vector<std::string> keys;
    keys.reserve(objectives.size());
    std::string names;
    for (const auto& ob : objectives) {
      names += (names.empty() ? "" : ", ") + ob.name;
      keys.push_back(metric_key(ob.name));
    }
    report.set_front(keys, fmt::format("Diamonds: the Pareto front of {} (--pareto), among the "
                                       "configurations that fit in memory.",
                                       names));
  }
  std::size_t invalid = 0;
  for (const Row& r : rows) {
    nlohmann::json params = nlohmann::json::object();
    std::vector<std::string> sets;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      params[axes[a].key] = axis_value(r.values[a]);
      sets.push_back(axes[a].key + "=" + r.values[a]);
    }
    if (r.valid() && r.kept) {
      report.add(params, r.kept->first, r.kept->second, r.m, sets, r.front);
    } else {
      ++invalid;
      report.add_invalid(params, r.problem);
    }
  }
  if (invalid > 0) {
    report.add_note(
        fmt::format("{} configurations are invalid and not drawn (the CSV and the "
                    "table say why).",
                    invalid));
  }
  return write_html_report(o.report_file, report.data(), "sweep", io, env);
}

// The scenario once, checked as it stands (with the --set overrides), so that a
// broken base is reported as such rather than as every row's problem; or, when it
// is valid only with the axes' values (a key the axes set is missing, or invalid
// as written), as the first configuration. Nothing, said, when neither loads.
std::optional<models::scenario::Scenario> load_base(const SweepOptions& o, Streams io,
                                                    const Environment& env, std::string& text) {
  std::ostringstream base_out;
  std::ostringstream base_err;
  auto base = load_for_cli(o.scenario, {base_out, base_err, base_err}, env, &text);
  if (!base && !o.vary.empty() && !text.empty()) {
    std::vector<std::string> sets = o.scenario.overrides;
    try {
      for (const auto& v : o.vary) {
        const sim::SweepAxis axis = sim::parse_axis(v);
        if (!axis.values.empty()) sets.push_back(axis.key + "=" + axis.values.front());
      }
      models::scenario::Scenario first = models::scenario::load_scenario_text(
          text, scenario_name(o.scenario),
          models::scenario::LoadOptions(preset_path(o.scenario, env), sets));
      base = std::move(first);
      base_err.str("");
    } catch (const std::exception&) {
      // The base's own errors are the ones to show.
    }
  }
  io.err << base_err.str();
  return base;
}

// What a sweep varies and ranks by: --vary's axes, else the scenario's sweep
// section (whose zip and pareto the command line's override).
struct SweepPlan {
  SweepOptions resolved;
  bool from_scenario = false;
  std::vector<sim::SweepAxis> axes;
  std::vector<std::vector<std::string>> configs;
  std::vector<sim::Objective> objectives;
};

// The axes of `resolved`; an axis of the scenario's section that does not parse
// is reported at its place in the file.
std::vector<sim::SweepAxis> parse_axes(const SweepPlan& plan,
                                       const models::scenario::Scenario& base) {
  std::vector<sim::SweepAxis> axes;
  for (std::size_t i = 0; i < plan.resolved.vary.size(); ++i) {
    try {
      axes.push_back(sim::parse_axis(plan.resolved.vary[i]));
    } catch (const std::invalid_argument& e) {
      if (!plan.from_scenario) throw;
      const std::string key = fmt::format("sweep.axes[{}].values", i);
      const auto at = base.origins.find(key);
      std::string why = e.what();
      if (why.rfind("--vary ", 0) == 0) why.erase(0, 7);  // the section's, not --vary's
      throw std::invalid_argument(fmt::format(
          "{}: {}: {}", at == base.origins.end() ? base.file : at->second.str(), key, why));
    }
  }
  return axes;
}

// The sweep's axes, configurations and objectives; nothing, said, on bad input.
std::optional<SweepPlan> sweep_plan(const SweepOptions& o, const models::scenario::Scenario& base,
                                    Streams io) {
  SweepPlan plan;
  plan.resolved = o;
  plan.from_scenario = o.vary.empty() && !base.sweep.axes.empty();
  if (plan.from_scenario) {
    for (const auto& axis : base.sweep.axes) {
      plan.resolved.vary.push_back(axis.key + "=" + axis.values);
    }
    plan.resolved.zip = o.zip || base.sweep.zip;
  }
  if (o.pareto.empty()) plan.resolved.pareto = base.sweep.pareto;
  try {
    plan.axes = parse_axes(plan, base);
    plan.configs = sim::expand_axes(plan.axes, plan.resolved.zip,
                                    static_cast<std::size_t>(plan.resolved.max_configs));
    if (!plan.resolved.pareto.empty()) {
      plan.objectives = sim::parse_objectives(plan.resolved.pareto);
    }
  } catch (const std::invalid_argument& e) {
    io.err << fmt::format("myriad sweep: error: {}\n", e.what());
    return std::nullopt;
  }
  if (!o.report_file.empty() && plan.configs.size() > kMostReportRows) {
    io.err << fmt::format(
        "myriad sweep: error: --report: {} configurations; a report draws at most {} (narrow "
        "the axes, or use --csv)\n",
        plan.configs.size(), kMostReportRows);
    return std::nullopt;
  }
  return plan;
}

// Every configuration this process evaluates: under mpirun, every size-th; rank 0
// gathers the others' (gather_rows) and goes on alone.
std::vector<Row> evaluate_rows(const SweepOptions& o, const SweepPlan& plan,
                               const std::string& text, ProfileCache& cache, Streams io,
                               const Environment& env) {
  const World& world = env.world;
  const auto& configs = plan.configs;
  std::vector<Row> rows(configs.size());
  // Drawn on a terminal by rank 0 (a share of the whole under mpirun), erased when done.
  ProgressLine line(io, env, "sweep");
  for (std::size_t i = static_cast<std::size_t>(world.rank); i < configs.size();
       i += static_cast<std::size_t>(world.size)) {
    if (world.rank == 0) line.update(i, configs.size(), "configurations");
    rows[i] = evaluate(text, scenario_name(o.scenario), configs[i], o, env, cache,
                       !o.report_file.empty());
  }
  return rows;
}

// Under mpirun, every process's rows to rank 0; false on the others.
bool gather_rows(const SweepOptions& o, const SweepPlan& plan, const std::string& text,
                 ProfileCache& cache, std::vector<Row>& rows, const Environment& env) {
  const World& world = env.world;
  if (world.size <= 1) return true;
  const auto& configs = plan.configs;
  nlohmann::json mine = nlohmann::json::array();
  for (std::size_t i = static_cast<std::size_t>(world.rank); i < configs.size();
       i += static_cast<std::size_t>(world.size)) {
    mine.push_back(rows[i].valid()
                       ? nlohmann::json{{"i", i}, {"m", sim::metrics_to_json(rows[i].m)}}
                       : nlohmann::json{{"i", i}, {"problem", rows[i].problem}});
  }
  const std::vector<std::string> parts = world.gather(mine.dump());
  if (world.rank != 0) return false;
  for (std::size_t r = 1; r < parts.size(); ++r) {
    for (const auto& j : nlohmann::json::parse(parts[r])) {
      const auto i = j.at("i").get<std::size_t>();
      Row& row = rows.at(i);
      row.values = sim::setting_values(configs[i]);
      if (j.contains("problem")) {
        row.problem = j.at("problem").get<std::string>();
      } else {
        row.m = sim::metrics_from_json(j.at("m"));
        // The report wants the scenario and the engine's report: evaluated again here.
        if (!o.report_file.empty()) {
          row = evaluate(text, scenario_name(o.scenario), configs[i], o, env, cache, true);
        }
      }
    }
  }
  return true;
}

// The CSV table, the JSON Lines and the HTML report, where asked for.
int write_sweep_outputs(const SweepOptions& o, const SweepPlan& plan, const std::vector<Row>& rows,
                        const models::scenario::Scenario& base, Streams io,
                        const Environment& env) {
  try {
    if (!o.csv_file.empty()) {
      models::scenario::write_file_atomically(o.csv_file, to_csv(plan.axes, rows), "the CSV table");
    }
    if (!o.jsonl_file.empty()) {
      models::scenario::write_file_atomically(o.jsonl_file, to_jsonl(plan.axes, rows),
                                              "the JSON Lines");
    }
  } catch (const std::runtime_error& e) {
    io.err << fmt::format("myriad sweep: error: {}\n", e.what());
    return kExitFailure;
  }
  if (!o.report_file.empty() &&
      !write_report(plan.resolved, plan.axes, rows, plan.objectives, base, io, env)) {
    return kExitFailure;
  }
  return kExitOk;
}

// The table and the counts under it.
std::string sweep_text(const SweepOptions& o, const SweepPlan& plan, const std::vector<Row>& rows) {
  const auto& axes = plan.axes;
  const auto count = [&](auto pred) { return std::count_if(rows.begin(), rows.end(), pred); };
  std::string out = fmt::format(
      "{}: {} configuration{} of {}\n\n", scenario_name(o.scenario), rows.size(),
      rows.size() == 1 ? "" : "s",
      axes.empty() ? std::string("the scenario as it stands")
                   : fmt::format("{} {}{}{}", axes.size(), axes.size() == 1 ? "axis" : "axes",
                                 plan.resolved.zip ? ", zipped" : "",
                                 plan.from_scenario ? " (the scenario's sweep section)" : ""));
  out += to_table(axes, rows, !plan.objectives.empty());
  std::string names;
  for (const auto& ob : plan.objectives) {
    names += (names.empty() ? "" : ", ") + ob.name + (ob.maximize ? " (max)" : " (min)");
  }
  out += fmt::format(
      "\n{} valid, {} fit in memory{}\n", count([](const Row& r) { return r.valid(); }),
      count([](const Row& r) { return r.valid() && r.m.fits; }),
      plan.objectives.empty() ? std::string{}
                              : fmt::format(", {} on the Pareto front of {} (marked *)",
                                            count([](const Row& r) { return r.front; }), names));
  return out;
}

}  // namespace

int run_sweep(const SweepOptions& o, Streams io, const Environment& env) {
  const VerbOutputs outputs{
      "sweep", {{"--csv", o.csv_file}, {"--jsonl", o.jsonl_file}, {"--report", o.report_file}}};
  if (!outputs_ok(outputs.verb, outputs.outputs, {o.scenario.scenario, o.profile}, io)) {
    return kExitBadInput;
  }
  std::string text;
  const auto base = load_base(o, io, env, text);
  if (!base) return kExitBadInput;
  if (!outputs_ok(outputs.verb, outputs.outputs, models::scenario::scenario_inputs(*base), io)) {
    return kExitBadInput;
  }
  const auto plan = sweep_plan(o, *base, io);
  if (!plan) return kExitBadInput;
  ProfileCache cache;
  std::vector<Row> rows = evaluate_rows(o, *plan, text, cache, io, env);
  if (!gather_rows(o, *plan, text, cache, rows, env)) return kExitOk;
  if (sim::front_needs_price(rows, plan->objectives)) {
    io.err << "myriad sweep: error: --pareto cost: the scenario gives no price "
              "(cluster.price_per_gpu_hour); set one, e.g. --set "
              "cluster.price_per_gpu_hour=2.5\n";
    return kExitBadInput;
  }
  sim::mark_front(rows, plan->objectives);
  if (const int code = write_sweep_outputs(o, *plan, rows, *base, io, env); code != kExitOk) {
    return code;
  }
  io.out << sweep_text(o, *plan, rows);
  return kExitOk;
}

}  // namespace myriad::cli
