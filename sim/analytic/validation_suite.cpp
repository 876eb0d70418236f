#include "sim/analytic/validation_suite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "models/scenario/config_tree.hpp"
#include "sim/analytic/estimator.hpp"

namespace myriad::sim {
namespace {

using models::scenario::ConfigNode;
using models::scenario::Diagnostics;

const std::vector<std::string> kSuiteKeys = {
    "name", "title", "source", "notes", "metric", "bounds", "base", "cases", "left_out_of_fits"};
const std::vector<std::string> kCaseKeys = {"case", "published", "scenario", "note"};
const std::vector<std::string> kMetrics = {"iteration_time_s", "mfu", "tflops_per_gpu",
                                           "normalized_throughput"};

void check_keys(const ConfigNode& node, const std::vector<std::string>& known,
                const std::string& path, Diagnostics& d) {
  for (const auto& e : node.entries()) {
    if (std::find(known.begin(), known.end(), e.key) == known.end()) {
      d.error(e.key_where, path.empty() ? e.key : path + "." + e.key,
              "unknown key" + models::scenario::did_you_mean(e.key, known));
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
            "unknown metric" + models::scenario::did_you_mean(out.metric, kMetrics));
    return false;
  }
  return number(*p, out.metric, path + ".published", d, out.value);
}

// A case read and loaded: its scenario and what was published, not yet predicted.
bool load_case(const ConfigNode& base, const ConfigNode& c, const std::string& metric,
               const std::string& path, const models::scenario::LoadOptions& options,
               Diagnostics& d, SuiteCase& out) {
  out.name = text(c, "case");
  out.note = text(c, "note");
  Published published;
  if (!read_published(c, path, d, published)) return false;
  if (metric == "mfu" && published.metric != "mfu") {
    d.error(c.where(), path + ".published", "this suite compares mfu: publish an mfu");
    return false;
  }
  if ((metric == "normalized_throughput") != (published.metric == "normalized_throughput")) {
    d.error(c.where(), path + ".published",
            "a normalized_throughput suite publishes normalized_throughput in every case, and "
            "only such a suite does");
    return false;
  }
  out.published_metric = published.metric;
  out.published_value = published.value;
  const ConfigNode* own = c.find("scenario");
  const ConfigNode merged = own != nullptr ? models::scenario::merge(base, *own) : base;
  out.scenario = models::scenario::load_scenario_tree(merged, path, options);
  return true;
}

// `reference_s`: the first case's predicted step time (normalized_throughput).
ValidationRow predict(const SuiteCase& c, const std::string& metric,
                      const ProfileLookup& profile_for, double reference_s) {
  ValidationRow row;
  row.name = c.name;
  row.note = c.note;
  row.metric = metric;
  const models::scenario::Scenario& s = c.scenario;
  const StepReport r = estimate(s, profile_for(s));
  if (metric == "mfu") {
    row.predicted = r.mfu;
    row.published = c.published_value;
  } else if (metric == "normalized_throughput") {
    row.predicted = reference_s > 0 ? reference_s / r.step_time_s : 1;
    row.published = c.published_value;
  } else {
    row.predicted = r.step_time_s;
    if (c.published_metric == "tflops_per_gpu") {
      row.published = r.hardware_flops / (s.cluster.gpus * c.published_value * 1e12);
    } else if (c.published_metric == "mfu") {
      row.published =
          r.model_flops / (s.cluster.gpus * s.cluster.gpu.bf16_flops * c.published_value);
    } else {
      row.published = c.published_value;
    }
  }
  row.rel_error = (row.predicted - row.published) / row.published;
  return row;
}

}  // namespace

Suite load_suite(const std::string& path, const models::scenario::LoadOptions& options) {
  Diagnostics d;
  const ConfigNode root = models::scenario::load_yaml_file(path, d);
  if (d.has_errors()) throw models::scenario::ScenarioError(d);
  if (!root.is_map()) {
    d.error(root.where(), "", "a validation suite must be a mapping");
    throw models::scenario::ScenarioError(d);
  }
  check_keys(root, kSuiteKeys, "", d);
  Suite suite;
  suite.name = text(root, "name");
  suite.title = text(root, "title");
  suite.source = text(root, "source");
  suite.metric = text(root, "metric");
  suite.left_out_of_fits = text(root, "left_out_of_fits");
  if (suite.metric != "iteration_time_s" && suite.metric != "mfu" &&
      suite.metric != "normalized_throughput") {
    d.error(root.where(), "metric",
            "expected iteration_time_s, mfu or normalized_throughput (each case's throughput "
            "over the first case's), found '" +
                suite.metric + "'");
  }
  const ConfigNode* bounds = root.find("bounds");
  if (bounds == nullptr || !bounds->is_map()) {
    d.error(root.where(), "bounds", "expected {mean_abs_rel_error: x, max_abs_rel_error: y}");
  } else {
    number(*bounds, "mean_abs_rel_error", "bounds", d, suite.bound_mean);
    number(*bounds, "max_abs_rel_error", "bounds", d, suite.bound_max);
  }
  const ConfigNode* base = root.find("base");
  const ConfigNode* cases = root.find("cases");
  if (cases == nullptr || !cases->is_list() || cases->items().empty()) {
    d.error(root.where(), "cases", "expected a non-empty list of cases");
  }
  if (d.has_errors()) throw models::scenario::ScenarioError(d);
  const ConfigNode empty = ConfigNode::map(root.where());
  for (std::size_t i = 0; i < cases->items().size(); ++i) {
    const ConfigNode& c = cases->items()[i];
    const std::string case_path = fmt::format("cases[{}]", i);
    check_keys(c, kCaseKeys, case_path, d);
    try {
      SuiteCase loaded;
      if (load_case(base != nullptr ? *base : empty, c, suite.metric, case_path, options, d,
                    loaded)) {
        suite.cases.push_back(std::move(loaded));
      }
    } catch (const models::scenario::ScenarioError& e) {
      for (const auto& diag : e.diagnostics().all()) {
        d.error(diag.where, case_path + ": " + diag.key, diag.message);
      }
    }
  }
  if (d.has_errors()) throw models::scenario::ScenarioError(d);
  return suite;
}

ValidationResult evaluate(const Suite& suite, const ProfileLookup& profile_for) {
  ValidationResult result;
  static_cast<SuiteHeader&>(result) = suite;
  double sum = 0;
  double reference_s = 0;
  if (suite.metric == "normalized_throughput" && !suite.cases.empty()) {
    const models::scenario::Scenario& first = suite.cases.front().scenario;
    reference_s = estimate(first, profile_for(first), Detail::summary).step_time_s;
  }
  for (const SuiteCase& c : suite.cases) {
    ValidationRow row = predict(c, suite.metric, profile_for, reference_s);
    if (!(row.published > 0)) continue;
    sum += std::fabs(row.rel_error);
    result.max_abs_rel_error = std::max(result.max_abs_rel_error, std::fabs(row.rel_error));
    result.rows.push_back(std::move(row));
  }
  result.mean_abs_rel_error =
      result.rows.empty() ? 0 : sum / static_cast<double>(result.rows.size());
  return result;
}

ValidationResult run_suite(const std::string& path, const models::scenario::LoadOptions& options,
                           const ProfileLookup& profile_for) {
  return evaluate(load_suite(path, options), profile_for);
}

}  // namespace myriad::sim
