#include "sim/analytic/validation_suite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/scenario/config_tree.hpp"
#include "sim/analytic/estimator.hpp"

namespace myriad::sim {
namespace {

using scenario::ConfigNode;
using scenario::Diagnostics;

const std::vector<std::string> kSuiteKeys = {"name",   "title",  "source", "notes",
                                             "metric", "bounds", "base",   "cases"};
const std::vector<std::string> kCaseKeys = {"case", "published", "scenario", "note"};
const std::vector<std::string> kMetrics = {"iteration_time_s", "mfu", "tflops_per_gpu"};

void check_keys(const ConfigNode& node, const std::vector<std::string>& known,
                const std::string& path, Diagnostics& d) {
  for (const auto& e : node.entries()) {
    if (std::find(known.begin(), known.end(), e.key) == known.end()) {
      d.error(e.key_where, path.empty() ? e.key : path + "." + e.key,
              "unknown key" + scenario::did_you_mean(e.key, known));
    }
  }
}

std::string text(const ConfigNode& node, const std::string& key) {
  const ConfigNode* v = node.find(key);
  return v != nullptr && v->is_scalar() ? v->text() : std::string{};
}

bool number(const ConfigNode& node, const std::string& key, const std::string& path, Diagnostics& d,
            double& out) {
  const ConfigNode* v = node.find(key);
  if (v == nullptr) {
    d.error(node.where(), path + "." + key, "missing: expected a number");
    return false;
  }
  try {
    std::size_t used = 0;
    out = std::stod(v->text(), &used);
    if (v->is_scalar() && used == v->text().size() && out > 0) return true;
  } catch (const std::exception&) {
  }
  d.error(v->where(), path + "." + key, "expected a positive number, found " + v->describe());
  return false;
}

struct Published {
  std::string metric;
  double value = 0;
};

bool read_published(const ConfigNode& c, const std::string& path, Diagnostics& d, Published& out) {
  const ConfigNode* p = c.find("published");
  if (p == nullptr || !p->is_map() || p->entries().size() != 1) {
    d.error(p != nullptr ? p->where() : c.where(), path + ".published",
            "expected one of {iteration_time_s: x}, {mfu: x}, {tflops_per_gpu: x}");
    return false;
  }
  out.metric = p->entries().front().key;
  if (std::find(kMetrics.begin(), kMetrics.end(), out.metric) == kMetrics.end()) {
    d.error(p->entries().front().key_where, path + ".published." + out.metric,
            "unknown metric" + scenario::did_you_mean(out.metric, kMetrics));
    return false;
  }
  return number(*p, out.metric, path + ".published", d, out.value);
}

ValidationRow run_case(const ConfigNode& base, const ConfigNode& c, const std::string& metric,
                       const std::string& path, const scenario::LoadOptions& options,
                       const ProfileLookup& profile_for, Diagnostics& d) {
  ValidationRow row;
  row.name = text(c, "case");
  row.note = text(c, "note");
  row.metric = metric;
  Published published;
  if (!read_published(c, path, d, published)) return row;
  const ConfigNode* own = c.find("scenario");
  const ConfigNode merged = own != nullptr ? scenario::merge(base, *own) : base;
  const scenario::Scenario s = scenario::load_scenario_tree(merged, path, options);
  const StepReport r = estimate(s, profile_for(s));
  if (metric == "mfu") {
    if (published.metric != "mfu") {
      d.error(c.where(), path + ".published", "this suite compares mfu: publish an mfu");
      return row;
    }
    row.predicted = r.mfu;
    row.published = published.value;
  } else {
    row.predicted = r.step_time_s;
    if (published.metric == "tflops_per_gpu") {
      row.published = r.hardware_flops / (s.cluster.gpus * published.value * 1e12);
    } else if (published.metric == "mfu") {
      row.published = r.model_flops / (s.cluster.gpus * s.cluster.gpu.bf16_flops * published.value);
    } else {
      row.published = published.value;
    }
  }
  row.rel_error = (row.predicted - row.published) / row.published;
  return row;
}

}  // namespace

ValidationResult run_suite(const std::string& path, const scenario::LoadOptions& options,
                           const ProfileLookup& profile_for) {
  Diagnostics d;
  const ConfigNode root = scenario::load_yaml_file(path, d);
  if (d.has_errors()) throw scenario::ScenarioError(d);
  if (!root.is_map()) {
    d.error(root.where(), "", "a validation suite must be a mapping");
    throw scenario::ScenarioError(d);
  }
  check_keys(root, kSuiteKeys, "", d);
  ValidationResult result;
  result.name = text(root, "name");
  result.title = text(root, "title");
  result.source = text(root, "source");
  result.metric = text(root, "metric");
  if (result.metric != "iteration_time_s" && result.metric != "mfu") {
    d.error(root.where(), "metric",
            "expected iteration_time_s or mfu, found '" + result.metric + "'");
  }
  const ConfigNode* bounds = root.find("bounds");
  if (bounds == nullptr || !bounds->is_map()) {
    d.error(root.where(), "bounds", "expected {mean_abs_rel_error: x, max_abs_rel_error: y}");
  } else {
    number(*bounds, "mean_abs_rel_error", "bounds", d, result.bound_mean);
    number(*bounds, "max_abs_rel_error", "bounds", d, result.bound_max);
  }
  const ConfigNode* base = root.find("base");
  const ConfigNode* cases = root.find("cases");
  if (cases == nullptr || !cases->is_list() || cases->items().empty()) {
    d.error(root.where(), "cases", "expected a non-empty list of cases");
  }
  if (d.has_errors()) throw scenario::ScenarioError(d);
  const ConfigNode empty = ConfigNode::map(root.where());
  for (std::size_t i = 0; i < cases->items().size(); ++i) {
    const ConfigNode& c = cases->items()[i];
    const std::string case_path = fmt::format("cases[{}]", i);
    check_keys(c, kCaseKeys, case_path, d);
    try {
      ValidationRow row = run_case(base != nullptr ? *base : empty, c, result.metric, case_path,
                                   options, profile_for, d);
      if (row.published > 0) result.rows.push_back(std::move(row));
    } catch (const scenario::ScenarioError& e) {
      for (const auto& diag : e.diagnostics().all()) {
        d.error(diag.where, case_path + ": " + diag.key, diag.message);
      }
    }
  }
  if (d.has_errors()) throw scenario::ScenarioError(d);
  double sum = 0;
  for (const auto& row : result.rows) {
    sum += std::fabs(row.rel_error);
    result.max_abs_rel_error = std::max(result.max_abs_rel_error, std::fabs(row.rel_error));
  }
  result.mean_abs_rel_error =
      result.rows.empty() ? 0 : sum / static_cast<double>(result.rows.size());
  return result;
}

}  // namespace myriad::sim
