#include "tools/cli/configuration_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "models/scenario/loader.hpp"
#include "models/scenario/resolved.hpp"

namespace myriad::cli {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::string resolved_yaml(const models::scenario::Scenario& s) {
  return models::scenario::to_yaml(models::scenario::resolve_for_output(s), false);
}

// Six significant digits: what the page shows, at a third of the bytes.
double rounded(double v) {
  if (!std::isfinite(v) || v == 0) return v;
  return std::stod(fmt::format("{:.6g}", v));
}

nlohmann::json finite_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(rounded(v)) : nlohmann::json(nullptr);
}

}  // namespace

std::string metric_key(const std::string& objective) {
  if (objective == "step-time") return "step_time_s";
  if (objective == "tokens-per-s") return "tokens_per_s";
  if (objective == "gpu-hours") return "gpu_hours";
  return objective;
}

const std::vector<ReportColumn>& report_metrics() {
  static const std::vector<ReportColumn> metrics = {
      {"step_time_s", "step time (s)"}, {"mfu", "MFU"},
      {"tokens_per_s", "tokens/s"},     {"days", "days"},
      {"gpu_hours", "GPU-hours"},       {"cost", "cost ($)"},
      {"memory", "memory (of usable)"}, {"gpus", "GPUs"}};
  return metrics;
}

ConfigurationReport::ConfigurationReport(std::string title, std::string subtitle,
                                         const models::scenario::Scenario& base,
                                         std::string command,
                                         const std::vector<ReportColumn>& parameters)
    : base_lines_(lines_of(resolved_yaml(base))), command_(std::move(command)) {
  head_["kind"] = "configurations";
  head_["title"] = std::move(title);
  head_["subtitle"] = std::move(subtitle);
  nlohmann::json params = nlohmann::json::array();
  for (const auto& p : parameters) params.push_back({{"key", p.key}, {"label", p.label}});
  head_["parameters"] = params;
  nlohmann::json metrics = nlohmann::json::array();
  for (const auto& m : report_metrics()) {
    if (m.key == "cost" && !(base.cluster.price_per_gpu_hour > 0)) continue;
    metrics.push_back({{"key", m.key}, {"label", m.label}});
  }
  head_["metrics"] = metrics;
  head_["objective"] = {{"key", "days"}, {"maximize", false}};
  head_["defaults"] = {{"x", "memory"}, {"y", "days"}, {"color", "front"}};
  head_["notes"] = nlohmann::json::array();
  std::string base_yaml;
  for (const auto& line : base_lines_) base_yaml += line + "\n";
  head_["base_yaml"] = base_yaml;
  head_["command"] = command_;
}

void ConfigurationReport::add(const nlohmann::json& parameters, const models::scenario::Scenario& s,
                              const sim::StepReport& r, const sim::LayoutMetrics& m,
                              const std::vector<std::string>& sets, bool front, int rank) {
  nlohmann::json row;
  row["id"] = rows_.size();
  row["p"] = parameters;
  row["m"] = {{"step_time_s", finite_or_null(m.step_time_s)},
              {"mfu", finite_or_null(m.mfu)},
              {"tokens_per_s", finite_or_null(m.tokens_per_s)},
              {"days", finite_or_null(m.days)},
              {"gpu_hours", finite_or_null(m.gpu_hours)},
              {"cost", finite_or_null(m.cost)},
              {"memory", finite_or_null(m.memory)},
              {"gpus", m.gpus}};
  row["fits"] = m.fits;
  row["front"] = front;
  if (rank > 0) row["rank"] = rank;
  nlohmann::json breakdown = nlohmann::json::object();
  for (const auto& part : r.breakdown) {
    if (part.seconds > 0) breakdown[part.name] = rounded(part.seconds);
  }
  row["breakdown"] = breakdown;
  row["memory"] = {{"weights", rounded(r.memory.weights)},
                   {"gradients", rounded(r.memory.gradients)},
                   {"optimizer", rounded(r.memory.optimizer)},
                   {"activations", rounded(r.memory.activations)},
                   {"fragmentation", rounded(r.memory_fragmentation)},
                   {"usable", rounded(r.memory_usable())}};
  row["sets"] = sets;
  // The scenario as the lines that differ from the base's (the whole text when
  // the shapes differ).
  const std::vector<std::string> lines = lines_of(resolved_yaml(s));
  if (lines.size() == base_lines_.size()) {
    nlohmann::json diff = nlohmann::json::array();
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i] != base_lines_[i]) diff.push_back({i, lines[i]});
    }
    row["yaml"] = diff;
  } else {
    std::string full;
    for (const auto& line : lines) full += line + "\n";
    row["yaml_full"] = full;
  }
  rows_.push_back(std::move(row));
}

void ConfigurationReport::add_invalid(const nlohmann::json& parameters,
                                      const std::string& problem) {
  rows_.push_back({{"id", rows_.size()}, {"p", parameters}, {"problem", problem}});
}

void ConfigurationReport::set_objective(const sim::Objective& objective) {
  const std::string key = metric_key(objective.name);
  head_["objective"] = {{"key", key}, {"maximize", objective.maximize}};
  head_["defaults"]["y"] = key;
}

void ConfigurationReport::set_front(const std::vector<std::string>& keys, const std::string& note) {
  head_["front"] = {{"keys", keys}, {"note", note}};
}

void ConfigurationReport::add_note(const std::string& note) { head_["notes"].push_back(note); }

nlohmann::json ConfigurationReport::data() const {
  nlohmann::json out = head_;
  out["rows"] = rows_;
  return out;
}

}  // namespace myriad::cli
