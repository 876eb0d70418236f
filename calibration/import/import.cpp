#include "calibration/import/import.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace myriad::calibration {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& where, const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {}: {}", path, where, what));
}

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// A number, or nullopt (for "N/A" and the like).
std::optional<double> number(const std::string& text) {
  try {
    std::size_t used = 0;
    const double x = std::stod(text, &used);
    if (used != text.size() || !std::isfinite(x)) return std::nullopt;
    return x;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// "all_reduce_perf" -> all_reduce; "alltoall_perf" -> all_to_all.
std::optional<models::CollectiveKind> collective_of_binary(std::string name) {
  if (name.size() > 5 && name.substr(name.size() - 5) == "_perf") name.resize(name.size() - 5);
  if (name == "alltoall") return models::CollectiveKind::all_to_all;
  if (name == "sendrecv") return models::CollectiveKind::send_recv;
  return models::collective_from_key(name);
}

// Over 100 lines: issue 43 rewrites this reader (streaming, bounded).
// NOLINTNEXTLINE(readability-function-size)
Imported import_nccl_tests(std::string_view text, const std::string& path, const ImportOptions& o) {
  std::optional<models::CollectiveKind> named = o.collective;
  int rank_lines = 0;
  std::string device;
  std::optional<int> header_ranks;  // nThread x nGpus of the header line
  struct Size {
    int line;
    double bytes;
    std::string redop;
    double time_s, algbw, busbw;
    std::string wrong;
  };
  std::vector<Size> sizes;
  std::istringstream in{std::string(text)};
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    const auto w = words(line);
    if (w.empty()) continue;
    if (w[0] == "#") {
      if (w.size() >= 2 && w[1] == "Rank") {
        ++rank_lines;
        // "#  Rank  0 Group  0 Pid 4242 on node01 device  0 [0x1b] NVIDIA H100 80GB HBM3"
        const auto bus = line.find("] ");
        if (device.empty() && bus != std::string::npos) device = line.substr(bus + 2);
      }
      const auto test = line.find("Collective test starting:");
      if (test != std::string::npos && !o.collective) {
        const auto rest = words(line.substr(test + 25));
        if (!rest.empty()) named = collective_of_binary(rest[0]);
        if (!named && !rest.empty()) {
          fail(path, fmt::format("line {}", line_no),
               fmt::format("collective test '{}' is not one Myriad prices", rest[0]));
        }
      }
      const auto threads = std::find(w.begin(), w.end(), "nThread");
      const auto gpus = std::find(w.begin(), w.end(), "nGpus");
      if (threads != w.end() && gpus != w.end() && threads + 1 != w.end() && gpus + 1 != w.end()) {
        const auto t = number(*(threads + 1)), g = number(*(gpus + 1));
        if (t && g) header_ranks = static_cast<int>(*t * *g);
      }
      continue;
    }
    // size count type redop root time algbw busbw #wrong [in-place: time algbw busbw #wrong]
    if (w.size() != 9 && w.size() != 13) {
      fail(path, fmt::format("line {}", line_no),
           fmt::format("expected a result line of 9 or 13 columns (size count type redop root "
                       "time algbw busbw #wrong ...), found {} columns",
                       w.size()));
    }
    const auto bytes = number(w[0]), time_us = number(w[5]), algbw = number(w[6]),
               busbw = number(w[7]);
    if (!bytes || *bytes <= 0 || !time_us || *time_us <= 0 || !algbw || !busbw) {
      fail(path, fmt::format("line {}", line_no),
           "expected a positive size (B) and time (us), and algbw and busbw (GB/s), numbers");
    }
    sizes.push_back({line_no, *bytes, w[3], *time_us * 1e-6, *algbw, *busbw, w[8]});
  }
  if (sizes.empty()) fail(path, "results", "no result lines (size count type redop root time ...)");
  const int ranks = o.ranks ? *o.ranks : rank_lines > 0 ? rank_lines : header_ranks.value_or(0);
  if (ranks < 2) {
    fail(path, "ranks",
         "the output names no ranks (\"#  Rank\" lines or nThread x nGpus): give --ranks");
  }
  if (!named) {
    // The ratio busbw / algbw is the bus bandwidth factor; with the reduction
    // operator it tells all-reduce and reduce-scatter apart. Gathers and
    // all-to-alls share it.
    const Size& big = *std::max_element(
        sizes.begin(), sizes.end(), [](const Size& a, const Size& b) { return a.bytes < b.bytes; });
    const double ratio = big.algbw > 0 ? big.busbw / big.algbw : 0;
    const double n = ranks;
    if (big.redop != "none" && std::abs(ratio - 2 * (n - 1) / n) < 0.02) {
      named = models::CollectiveKind::all_reduce;
    } else if (big.redop != "none" && std::abs(ratio - (n - 1) / n) < 0.02) {
      named = models::CollectiveKind::reduce_scatter;
    } else {
      fail(path, fmt::format("line {}", big.line),
           "the output does not say which collective ran (all_gather_perf and alltoall_perf "
           "print alike): give --collective");
    }
  }
  Imported out;
  out.device = device;
  const std::string family =
      fmt::format("{}.{}", models::collective_key(*named), models::algorithm_name(o.algorithm));
  for (const Size& s : sizes) {
    Row r;
    r.kind = RowKind::collective;
    r.family = family;
    r.name = fmt::format("{} ranks={} bytes={:.0f}", family, ranks, s.bytes);
    r.bytes = s.bytes;
    r.collective = {*named,
                    o.algorithm,
                    false,
                    ranks,
                    s.bytes,
                    models::busbw_factor(*named, ranks),
                    models::ring_steps(*named, ranks)};
    r.times_s = {s.time_s};
    r.best_s = s.time_s;
    r.arguments = {{"ranks", ranks},       {"bytes", s.bytes}, {"source", "nccl-tests"},
                   {"file", path},         {"line", s.line},   {"algbw_GBps", s.algbw},
                   {"busbw_GBps", s.busbw}};
    const auto wrong = number(s.wrong);
    if (!wrong) {
      r.check = "pass";
      r.arguments["verified"] = "not verified by the source (#wrong is " + s.wrong + ")";
    } else {
      r.check = *wrong == 0 ? "pass" : fmt::format("{:.0f} wrong elements (nccl-tests)", *wrong);
    }
    out.rows.push_back(std::move(r));
  }
  out.notes.push_back(fmt::format(
      "{} sizes of {} on {} ranks, the out-of-place time (nccl-tests' average over its "
      "iterations: one sample a size); algorithm taken as {}{}",
      sizes.size(), models::collective_key(*named), ranks, models::algorithm_name(o.algorithm),
      o.collective ? "" : ", collective read from the output"));
  return out;
}

// A benchmark's family from its label ("family=norm.rms.fwd", alone or among
// other words), else `fallback`.
std::string family_of(const nlohmann::json& benchmark, const std::string& fallback) {
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

// Over 100 lines: issue 43 rewrites this reader (streaming, bounded).
// NOLINTNEXTLINE(readability-function-size)
Imported import_google_benchmark(std::string_view text, const std::string& path,
                                 const ImportOptions& o) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail(path, "JSON", e.what());
  }
  if (!j.is_object() || !j.contains("benchmarks") || !j["benchmarks"].is_array()) {
    fail(path, "benchmarks", "expected Google Benchmark's --benchmark_out JSON: a list");
  }
  std::map<std::string, Row> rows;  // by run name
  std::vector<std::string> order;
  int aggregates = 0;
  const auto& list = j["benchmarks"];
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& b = list[i];
    const std::string where = fmt::format("benchmarks[{}]", i);
    if (!b.is_object() || !b.contains("name") || !b["name"].is_string()) {
      fail(path, where, "name: expected a string");
    }
    if (b.value("run_type", std::string("iteration")) == "aggregate") {
      ++aggregates;
      continue;
    }
    if (b.contains("error_occurred") && b["error_occurred"].is_boolean() &&
        b["error_occurred"].get<bool>()) {
      fail(path, where,
           fmt::format("benchmark {} reported an error: {}", b["name"].dump(),
                       b.value("error_message", std::string("?"))));
    }
    const std::string name = b.value("run_name", b["name"].get<std::string>());
    const auto counter = [&](const char* key) -> std::optional<double> {
      if (!b.contains(key)) return std::nullopt;
      if (!b[key].is_number() || b[key].get<double>() < 0) {
        fail(path, where + "." + key, "expected a non-negative number");
      }
      return b[key].get<double>();
    };
    const double unit = seconds_in(b.value("time_unit", std::string("ns")));
    const auto real = counter("real_time");
    if (unit == 0) fail(path, where + ".time_unit", "expected ns, us, ms or s");
    if (!real || *real <= 0) fail(path, where + ".real_time", "expected a positive time");
    auto [it, fresh] = rows.try_emplace(name);
    Row& r = it->second;
    if (fresh) {
      order.push_back(name);
      r.name = name;
      r.kind = RowKind::kernel;
      r.check = "pass";
      r.arguments = {{"source", "google-benchmark"},
                     {"file", path},
                     {"verified", "not verified by the source"}};
      const auto m = counter("m"), n = counter("n"), k = counter("k");
      if (m && n && k) {
        r.family = "gemm";
        r.op_class = models::OpClass::gemm;
        r.gemm = {*m, *n, *k, counter("batch").value_or(1)};
        r.flops = counter("flops").value_or(2 * *m * *n * *k * r.gemm.batch);
      } else if (const std::string family = family_of(b, o.family); !family.empty()) {
        r.family = family;
        r.op_class = family.rfind("attention", 0) == 0 ? models::OpClass::attention
                                                       : models::OpClass::elementwise;
        r.backward = family.size() > 4 && family.substr(family.size() - 4) == ".bwd";
        r.flops = counter("flops").value_or(0);
      } else {
        fail(path, where,
             fmt::format("benchmark {} has no m, n and k counters and no \"family=...\" label: "
                         "give --family (e.g. norm.rms.fwd) for what it measures",
                         b["name"].dump()));
      }
      const auto bytes = counter("bytes");
      if (!bytes && r.op_class != models::OpClass::gemm) {
        fail(path, where + ".bytes",
             "expected a counter of the bytes one iteration moves (state.counters[\"bytes\"])");
      }
      r.bytes = bytes.value_or(0);
      if (r.op_class == models::OpClass::attention && r.flops <= 0) {
        fail(path, where + ".flops", "expected a counter of one iteration's FLOPs");
      }
    }
    r.times_s.push_back(*real * unit);
  }
  if (order.empty()) {
    fail(path, "benchmarks",
         aggregates > 0 ? "only aggregates: run without --benchmark_report_aggregates_only, so "
                          "that every repetition is a sample"
                        : "no benchmarks");
  }
  Imported out;
  for (const std::string& name : order) {
    Row r = rows.at(name);
    r.best_s = *std::min_element(r.times_s.begin(), r.times_s.end());
    out.rows.push_back(std::move(r));
  }
  out.notes.push_back(
      fmt::format("{} benchmarks, a sample per repetition{}", order.size(),
                  aggregates > 0 ? fmt::format(" ({} aggregate entries left out: the rows keep the "
                                               "repetitions themselves)",
                                               aggregates)
                                 : ""));
  return out;
}

}  // namespace

std::string_view import_format_name(ImportFormat f) {
  switch (f) {
    case ImportFormat::nccl_tests:
      return "nccl-tests";
    case ImportFormat::google_benchmark:
      return "google-benchmark";
    case ImportFormat::kineto:
      return "kineto";
  }
  return "?";
}

std::optional<ImportFormat> import_format_from_name(std::string_view name) {
  for (const ImportFormat f :
       {ImportFormat::nccl_tests, ImportFormat::google_benchmark, ImportFormat::kineto}) {
    if (import_format_name(f) == name) return f;
  }
  return std::nullopt;
}

Imported import_rows(std::string_view text, const std::string& path, ImportFormat format,
                     const ImportOptions& options) {
  Imported out;
  switch (format) {
    case ImportFormat::nccl_tests:
      out = import_nccl_tests(text, path, options);
      break;
    case ImportFormat::google_benchmark:
      out = import_google_benchmark(text, path, options);
      break;
    case ImportFormat::kineto:
      out = import_kineto(text, path);
      break;
  }
  if (out.rows.empty()) fail(path, "rows", "nothing in it becomes a calibration row");
  std::set<std::string> names;
  for (const Row& r : out.rows) {
    if (!names.insert(r.name).second) {
      fail(path, "rows", fmt::format("two results would be rows named '{}'", r.name));
    }
  }
  return out;
}

}  // namespace myriad::calibration
