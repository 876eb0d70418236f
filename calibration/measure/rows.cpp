#include "calibration/measure/rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "models/names/enum_names.hpp"
#include "models/scenario/json_file.hpp"
#include "models/scenario/text_file.hpp"

namespace myriad::calibration {
namespace {

constexpr const char* kFormat = "myriad-calibration-rows/2";
constexpr std::string_view kDeviceCopy = ".device_copy";

constexpr models::EnumName<RowKind> kRowKinds[] = {
    {RowKind::ceiling, "ceiling"},
    {RowKind::kernel, "kernel"},
    {RowKind::collective, "collective"},
    {RowKind::composite, "composite"},
};

const char* class_name(models::OpClass c) {
  switch (c) {
    case models::OpClass::gemm:
      return "gemm";
    case models::OpClass::attention:
      return "attention";
    case models::OpClass::elementwise:
      return "elementwise";
    case models::OpClass::optimizer:
      return "optimizer";
  }
  return "elementwise";
}

// Reads one row, appending a message per problem ("rows[3].best_s: expected ...").
class RowReader {
 public:
  RowReader(const nlohmann::json& j, std::string where, std::vector<std::string>& problems)
      : j_(j), where_(std::move(where)), problems_(problems) {}

  std::string text(const char* key) {
    if (!j_.contains(key) || !j_[key].is_string()) {
      problem(key, "a string");
      return {};
    }
    return j_[key].get<std::string>();
  }
  double number(const nlohmann::json& j, const std::string& key, double min = 0) {
    if (!j.contains(key) || !j[key].is_number() || j[key].get<double>() < min) {
      problem(key, fmt::format("a number >= {}", min));
      return 0;
    }
    return j[key].get<double>();
  }
  double number(const char* key, double min = 0) { return number(j_, key, min); }
  void problem(const std::string& key, const std::string& expected) {
    problems_.push_back(fmt::format("{}.{}: expected {}", where_, key, expected));
  }
  [[nodiscard]] const nlohmann::json& json() const { return j_; }

 private:
  const nlohmann::json& j_;
  std::string where_;
  std::vector<std::string>& problems_;
};

Row read_row(const nlohmann::json& j, const std::string& where,
             std::vector<std::string>& problems) {
  Row r;
  if (!j.is_object()) {
    problems.push_back(where + ": expected an object");
    return r;
  }
  static const char* const known[] = {"name",    "kind",   "family", "op_class", "arguments",
                                      "flops",   "bytes",  "gemm",   "backward", "collective",
                                      "times_s", "best_s", "check"};
  for (const auto& item : j.items()) {
    if (std::find_if(std::begin(known), std::end(known),
                     [&](const char* k) { return item.key() == k; }) == std::end(known)) {
      problems.push_back(fmt::format("{}.{}: unknown key", where, item.key()));
    }
  }
  RowReader in(j, where, problems);
  r.name = in.text("name");
  // Composites are judged by `calibrate check`; a rows file holds none.
  const auto kind = row_kind_from_name(in.text("kind"));
  if (!kind || *kind == RowKind::composite) {
    in.problem("kind", "ceiling, kernel or collective");
  } else {
    r.kind = *kind;
  }
  r.family = in.text("family");
  const std::string cls = in.text("op_class");
  if (cls == "gemm") {
    r.op_class = models::OpClass::gemm;
  } else if (cls == "attention") {
    r.op_class = models::OpClass::attention;
  } else if (cls == "optimizer") {
    r.op_class = models::OpClass::optimizer;
  } else if (cls == "elementwise") {
    r.op_class = models::OpClass::elementwise;
  } else {
    in.problem("op_class", "gemm, attention, elementwise or optimizer");
  }
  r.arguments = j.value("arguments", nlohmann::json::object());
  r.flops = in.number("flops");
  r.bytes = in.number("bytes");
  r.backward = j.value("backward", false);
  if (r.op_class == models::OpClass::gemm) {
    const nlohmann::json g = j.value("gemm", nlohmann::json::object());
    r.gemm = {in.number(g, "m", 1), in.number(g, "n", 1), in.number(g, "k", 1),
              in.number(g, "batch", 1)};
  }
  if (r.kind == RowKind::collective) {
    const nlohmann::json c = j.value("collective", nlohmann::json::object());
    const auto collective = models::collective_from_key(c.value("collective", std::string{}));
    if (collective) {
      r.collective.collective = *collective;
    } else {
      in.problem("collective.collective",
                 "all_reduce, all_gather, reduce_scatter, all_to_all, broadcast or send_recv");
    }
    std::string algorithm = c.value("algorithm", std::string{});
    if (algorithm.ends_with(kDeviceCopy)) {
      r.collective.device_copy = true;
      algorithm.resize(algorithm.size() - kDeviceCopy.size());
    }
    if (const auto a = models::algorithm_from_name(algorithm);
        a && *a != models::CollectiveAlgorithm::none) {
      r.collective.algorithm = *a;
    } else {
      in.problem("collective.algorithm",
                 "an algorithm (ring, tree, pairwise, ...), with .device_copy when every rank "
                 "ran on one device");
    }
    r.collective.ranks = static_cast<int>(in.number(c, "ranks", 1));
    r.collective.bytes = in.number(c, "bytes");
    r.collective.busbw_factor = in.number(c, "busbw_factor");
    r.collective.steps = in.number(c, "steps");
  }
  r.check = in.text("check");
  // A case that raised an error has no times; its check says what the error was.
  const bool errored = r.check.rfind("error: ", 0) == 0;
  if (!j.contains("times_s") || !j["times_s"].is_array() || (j["times_s"].empty() && !errored)) {
    in.problem("times_s", "a non-empty list of seconds (empty only when check is \"error: ...\")");
  } else {
    for (const auto& t : j["times_s"]) {
      if (!t.is_number() || t.get<double>() <= 0) {
        in.problem("times_s", "seconds > 0");
        break;
      }
      r.times_s.push_back(t.get<double>());
    }
  }
  r.best_s = in.number("best_s");
  return r;
}

std::string algorithm_text(const CollectiveRun& c) {
  return std::string(models::algorithm_name(c.algorithm)) +
         (c.device_copy ? std::string(kDeviceCopy) : std::string{});
}

}  // namespace

std::string_view row_kind_name(RowKind k) { return models::name_in(kRowKinds, k); }

std::optional<RowKind> row_kind_from_name(std::string_view name) {
  return models::value_in<RowKind>(kRowKinds, name);
}

models::Op Row::op() const {
  models::Op op;
  op.name = family;
  op.cls = op_class;
  op.flops = flops;
  op.bytes = bytes;
  op.gemm = gemm;
  op.backward = backward;
  return op;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

std::string rate_text(const Row& r) {
  if (r.best_s <= 0) return "-";
  if (r.kind == RowKind::collective) {
    return fmt::format("{:.4g} GB/s busbw", r.collective.busbw_factor * r.bytes / r.best_s / 1e9);
  }
  if (r.op_class == models::OpClass::gemm || r.op_class == models::OpClass::attention) {
    return fmt::format("{:.4g} TFLOP/s", r.flops / r.best_s / 1e12);
  }
  return fmt::format("{:.4g} GB/s", r.bytes / r.best_s / 1e9);
}

std::string spread_text(const Row& r) {
  if (r.times_s.size() < 2) return r.times_s.empty() ? "-" : "1 sample";
  const auto [lo, hi] = std::minmax_element(r.times_s.begin(), r.times_s.end());
  return fmt::format("+{:.1f} % over {}", 100 * (*hi / *lo - 1), r.times_s.size());
}

nlohmann::json row_json(const Row& r) {
  nlohmann::json j = {{"name", r.name},           {"kind", row_kind_name(r.kind)},
                      {"family", r.family},       {"op_class", class_name(r.op_class)},
                      {"arguments", r.arguments}, {"flops", r.flops},
                      {"bytes", r.bytes},         {"backward", r.backward},
                      {"times_s", r.times_s},     {"best_s", r.best_s},
                      {"check", r.check}};
  if (r.op_class == models::OpClass::gemm) {
    j["gemm"] = {{"m", r.gemm.m}, {"n", r.gemm.n}, {"k", r.gemm.k}, {"batch", r.gemm.batch}};
  }
  if (r.kind == RowKind::collective) {
    j["collective"] = {{"collective", models::collective_key(r.collective.collective)},
                       {"algorithm", algorithm_text(r.collective)},
                       {"ranks", r.collective.ranks},
                       {"bytes", r.collective.bytes},
                       {"busbw_factor", r.collective.busbw_factor},
                       {"steps", r.collective.steps}};
  }
  return j;
}

std::vector<std::string> row_problems(const Row& r) {
  // As written (a NaN or an infinity becomes null) and read back.
  const nlohmann::json written = nlohmann::json::parse(row_json(r).dump());
  std::vector<std::string> problems;
  (void)read_row(written, "row", problems);
  return problems;
}

nlohmann::json to_json(const RowsFile& file) {
  nlohmann::json rows = nlohmann::json::array();
  for (const Row& r : file.rows) rows.push_back(row_json(r));
  return {{"format", kFormat}, {"backend", file.backend},         {"grid", file.grid},
          {"date", file.date}, {"environment", file.environment}, {"rows", std::move(rows)}};
}

RowsFile rows_from_json(const nlohmann::json& j, const std::string& path) {
  std::vector<std::string> problems;
  RowsFile f;
  if (j.is_object() && j.value("format", std::string{}) == "myriad-calibration-rows/1") {
    throw std::runtime_error(fmt::format(
        "{}: rows of format myriad-calibration-rows/1 kept medians of back-to-back samples; this "
        "myriad fits the fastest of samples spread over passes (\"{}\"): measure again",
        path, kFormat));
  }
  if (!j.is_object() || j.value("format", std::string{}) != kFormat) {
    throw std::runtime_error(
        fmt::format("{}: not a calibration rows file: expected \"format\": \"{}\"", path, kFormat));
  }
  for (const auto& item : j.items()) {
    const std::string& k = item.key();
    if (k != "format" && k != "backend" && k != "grid" && k != "date" && k != "environment" &&
        k != "rows") {
      problems.push_back(fmt::format("{}: unknown key", k));
    }
  }
  f.backend = j.value("backend", std::string{});
  if (f.backend != "cpu" && f.backend != "cuda")
    problems.emplace_back("backend: expected cpu or cuda");
  f.grid = j.value("grid", std::string{});
  f.date = j.value("date", std::string{});
  f.environment = j.value("environment", nlohmann::json::object());
  if (!j.contains("rows") || !j["rows"].is_array() || j["rows"].empty()) {
    problems.emplace_back("rows: expected a non-empty list");
  } else {
    for (std::size_t i = 0; i < j["rows"].size(); ++i) {
      f.rows.push_back(read_row(j["rows"][i], fmt::format("rows[{}]", i), problems));
    }
  }
  if (!problems.empty()) {
    std::string message =
        fmt::format("{}: {} problem(s) in calibration rows:", path, problems.size());
    for (const auto& p : problems) message += "\n  " + p;
    throw std::runtime_error(message);
  }
  return f;
}

RowsFile read_rows(const std::string& path) {
  return rows_from_json(models::scenario::read_json_file(path, "calibration rows"), path);
}

void write_rows(const RowsFile& file, const std::string& path) {
  models::scenario::write_file_atomically(path, to_json(file).dump(1) + "\n", "calibration rows");
}

}  // namespace myriad::calibration
