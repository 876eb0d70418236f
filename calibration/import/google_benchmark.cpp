// Google Benchmark's --benchmark_out JSON as calibration rows (import.hpp): read a
// benchmark at a time (json_lists.hpp), a row kept per benchmark name.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "calibration/import/json_lists.hpp"
#include "calibration/import/readers.hpp"

namespace myriad::calibration {
namespace {

using nlohmann::json;

// A benchmark's family from its label ("family=norm.rms.fwd", alone or among
// other words), else `fallback`.
std::string family_of(const json& benchmark, const std::string& fallback) {
  const std::string label = benchmark.value("label", std::string{});
  const auto at = label.find("family=");
  if (at == std::string::npos) return fallback;
  const auto end = label.find_first_of(" ,;", at);
  return label.substr(at + 7, end == std::string::npos ? std::string::npos : end - at - 7);
}

double seconds_in(const std::string& unit) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1;
  return 0;
}

// The rows so far, by run name, in the order of their first repetition.
struct Benchmarks {
  std::map<std::string, Row> rows;
  std::vector<std::string> order;
  int aggregates = 0;
};

class BenchmarkReader {
 public:
  BenchmarkReader(const json& b, std::string where, const std::string& path)
      : b_(b), where_(std::move(where)), path_(path) {}

  // A counter, when the benchmark has it: a number >= `min`.
  std::optional<double> counter(const char* key, double min = 0) const {
    if (!b_.contains(key)) return std::nullopt;
    if (!b_[key].is_number() || b_[key].get<double>() < min) {
      import_fail(path_, where_ + "." + key,
                  min > 0 ? fmt::format("expected a number >= {} (a GEMM dimension)", min)
                          : std::string("expected a non-negative number"));
    }
    return b_[key].get<double>();
  }

  // A new row's descriptor: a GEMM by its m, n and k counters, else the family
  // of its label or --family.
  void describe(Row& r, const ImportOptions& o) const {
    r.kind = RowKind::kernel;
    r.check = "pass";
    r.arguments = {{"source", "google-benchmark"},
                   {"file", path_},
                   {"verified", "not verified by the source"}};
    const auto m = counter("m", 1), n = counter("n", 1), k = counter("k", 1);
    if (m && n && k) {
      r.family = "gemm";
      r.op_class = models::OpClass::gemm;
      r.gemm = {*m, *n, *k, counter("batch", 1).value_or(1)};
      r.flops = counter("flops").value_or(2 * *m * *n * *k * r.gemm.batch);
    } else if (const std::string family = family_of(b_, o.family); !family.empty()) {
      r.family = family;
      r.op_class = family.rfind("attention", 0) == 0 ? models::OpClass::attention
                                                     : models::OpClass::elementwise;
      r.backward = family.size() > 4 && family.substr(family.size() - 4) == ".bwd";
      r.flops = counter("flops").value_or(0);
    } else {
      import_fail(path_, where_,
                  fmt::format("benchmark {} has no m, n and k counters and no \"family=...\" "
                              "label: give --family (e.g. norm.rms.fwd) for what it measures",
                              b_["name"].dump()));
    }
    const auto bytes = counter("bytes");
    if (!bytes && r.op_class != models::OpClass::gemm) {
      import_fail(
          path_, where_ + ".bytes",
          "expected a counter of the bytes one iteration moves (state.counters[\"bytes\"])");
    }
    r.bytes = bytes.value_or(0);
    if (r.op_class == models::OpClass::attention && r.flops <= 0) {
      import_fail(path_, where_ + ".flops", "expected a counter of one iteration's FLOPs");
    }
  }

  void add_to(Benchmarks& all, const ImportOptions& o) const {
    if (!b_.is_object() || !b_.contains("name") || !b_["name"].is_string()) {
      import_fail(path_, where_, "name: expected a string");
    }
    if (b_.value("run_type", std::string("iteration")) == "aggregate") {
      ++all.aggregates;
      return;
    }
    if (b_.contains("error_occurred") && b_["error_occurred"].is_boolean() &&
        b_["error_occurred"].get<bool>()) {
      import_fail(path_, where_,
                  fmt::format("benchmark {} reported an error: {}", b_["name"].dump(),
                              b_.value("error_message", std::string("?"))));
    }
    const std::string name = b_.value("run_name", b_["name"].get<std::string>());
    const double unit = seconds_in(b_.value("time_unit", std::string("ns")));
    const auto real = counter("real_time");
    if (unit == 0) import_fail(path_, where_ + ".time_unit", "expected ns, us, ms or s");
    if (!real || *real <= 0) import_fail(path_, where_ + ".real_time", "expected a positive time");
    auto [it, fresh] = all.rows.try_emplace(name);
    if (fresh) {
      if (all.order.size() >= kMaxImportedRows) {
        import_fail(path_, where_,
                    fmt::format("more than {} benchmarks (a row each, the most one import "
                                "takes): split the file",
                                kMaxImportedRows));
      }
      all.order.push_back(name);
      it->second.name = name;
      describe(it->second, o);
    }
    it->second.times_s.push_back(*real * unit);
  }

 private:
  const json& b_;
  std::string where_;
  const std::string& path_;
};

}  // namespace

Imported import_google_benchmark(std::istream& in, const std::string& path,
                                 const ImportOptions& o) {
  Benchmarks all;
  const auto found = stream_json_lists(
      in, path, {{"benchmarks"}, false}, [&](const std::string&, std::size_t i, const json& b) {
        BenchmarkReader(b, fmt::format("benchmarks[{}]", i), path).add_to(all, o);
      });
  if (found.count("benchmarks") == 0) {
    import_fail(path, "benchmarks", "expected Google Benchmark's --benchmark_out JSON: a list");
  }
  if (all.order.empty()) {
    import_fail(path, "benchmarks",
                all.aggregates > 0
                    ? "only aggregates: run without --benchmark_report_aggregates_only, so that "
                      "every repetition is a sample"
                    : "no benchmarks");
  }
  Imported out;
  out.rows.reserve(all.order.size());
  for (const std::string& name : all.order) {
    Row& r = all.rows.at(name);
    r.best_s = *std::min_element(r.times_s.begin(), r.times_s.end());
    out.rows.push_back(std::move(r));
  }
  out.notes.push_back(fmt::format(
      "{} benchmarks, a sample per repetition{}", all.order.size(),
      all.aggregates > 0 ? fmt::format(" ({} aggregate entries left out: the rows keep the "
                                       "repetitions themselves)",
                                       all.aggregates)
                         : ""));
  return out;
}

}  // namespace myriad::calibration
