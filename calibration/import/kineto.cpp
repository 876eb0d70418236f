// A PyTorch profiler (Kineto) trace as calibration rows (import.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "calibration/import/import.hpp"

namespace myriad::calibration {
namespace {

using nlohmann::json;

[[noreturn]] void fail(const std::string& path, const std::string& where, const std::string& what) {
  throw std::runtime_error(fmt::format("{}: {}: {}", path, where, what));
}

// Bytes of one element of an ATen type as the profiler writes it; 0 when unknown.
double element_bytes(const std::string& type) {
  static const std::map<std::string, double> sizes = {
      {"float", 4},         {"double", 8},      {"c10::BFloat16", 2},      {"c10::Half", 2},
      {"long int", 8},      {"int", 4},         {"short int", 2},          {"bool", 1},
      {"unsigned char", 1}, {"signed char", 1}, {"c10::Float8_e4m3fn", 1}, {"c10::Float8_e5m2", 1}};
  const auto it = sizes.find(type);
  return it == sizes.end() ? 0 : it->second;
}

// Memory-bound ATen ops and the family each is fitted under: Myriad's own names
// where it prices the kernel, "aten.<op>" otherwise.
std::optional<std::string> memory_bound_family(const std::string& op) {
  static const std::map<std::string, std::string> families = {
      {"aten::native_layer_norm", "norm.layer.fwd"},
      {"aten::native_layer_norm_backward", "norm.layer.bwd"},
      {"aten::_fused_rms_norm", "norm.rms.fwd"},
      {"aten::_fused_rms_norm_backward", "norm.rms.bwd"},
      {"aten::gelu", "activation.gelu.fwd"},
      {"aten::gelu_backward", "activation.gelu.bwd"},
      {"aten::silu", "aten.silu"},
      {"aten::silu_backward", "aten.silu_backward"},
      {"aten::_softmax", "aten.softmax"},
      {"aten::_softmax_backward_data", "aten.softmax_backward"},
      {"aten::add", "aten.add"},
      {"aten::add_", "aten.add"},
      {"aten::mul", "aten.mul"},
      {"aten::mul_", "aten.mul"},
      {"aten::copy_", "copy"},
  };
  const auto it = families.find(op);
  if (it == families.end()) return std::nullopt;
  return it->second;
}

struct Tensor {
  std::vector<double> dims;
  double elem = 0;
  [[nodiscard]] double elements() const {
    if (dims.empty()) return 0;  // a scalar or not a tensor
    double n = 1;
    for (const double d : dims) n *= d;
    return n;
  }
};

// An ATen op's inputs, from the profiler's "Input Dims" and "Input type".
std::vector<Tensor> inputs_of(const json& args, const std::string& path, const std::string& where) {
  std::vector<Tensor> out;
  if (!args.contains("Input Dims")) return out;
  const json& dims = args["Input Dims"];
  const json types = args.value("Input type", json::array());
  if (!dims.is_array()) fail(path, where + ".args.Input Dims", "expected a list of shapes");
  for (std::size_t i = 0; i < dims.size(); ++i) {
    Tensor t;
    if (dims[i].is_array()) {
      for (const json& d : dims[i]) {
        if (!d.is_number() || d.get<double>() < 0) {
          fail(path, fmt::format("{}.args.Input Dims[{}]", where, i),
               "expected non-negative sizes");
        }
        t.dims.push_back(d.get<double>());
      }
    }
    if (i < types.size() && types[i].is_string()) t.elem = element_bytes(types[i]);
    out.push_back(std::move(t));
  }
  return out;
}

std::string shape_text(const std::vector<Tensor>& inputs) {
  std::vector<std::string> parts;
  for (const Tensor& t : inputs) {
    std::vector<std::string> d;
    for (const double x : t.dims) d.push_back(fmt::format("{:.0f}", x));
    parts.push_back(fmt::format("[{}]", fmt::join(d, ",")));
  }
  return fmt::format("{}", fmt::join(parts, ","));
}

// An op as a row's descriptor (no times yet); nullopt for what Myriad does not price.
std::optional<Row> describe(const std::string& op, const std::vector<Tensor>& in,
                            std::optional<bool> causal) {
  Row r;
  r.kind = RowKind::kernel;
  const auto gemm = [&](const Tensor& a, const Tensor& b, double batch) -> std::optional<Row> {
    const std::size_t ra = a.dims.size();
    const std::size_t rb = b.dims.size();
    if (ra < 2 || rb < 2 || a.elem == 0) return std::nullopt;
    const double m = a.dims[ra - 2], k = a.dims[ra - 1], n = b.dims[rb - 1];
    if (b.dims[rb - 2] != k) return std::nullopt;
    r.family = "gemm";
    r.op_class = models::OpClass::gemm;
    r.gemm = {m, n, k, batch};
    r.flops = 2 * m * n * k * batch;
    r.bytes = batch * (m * k + k * n + m * n) * a.elem;
    return r;
  };
  if (op == "aten::mm" && in.size() >= 2) return gemm(in[0], in[1], 1);
  if (op == "aten::addmm" && in.size() >= 3) return gemm(in[1], in[2], 1);
  if (op == "aten::bmm" && in.size() >= 2 && in[0].dims.size() == 3) {
    return gemm(in[0], in[1], in[0].dims[0]);
  }
  // Flash attention's forward through SDPA: q, k, v as [batch, heads, seq, head
  // dim], causal when its fifth input (is_causal) was recorded "True". FLOPs as
  // Myriad counts them: 4 x heads x attended pairs x head dim per sequence.
  if (op == "aten::_scaled_dot_product_flash_attention" && in.size() >= 3 &&
      in[0].dims.size() == 4 && in[1].dims.size() == 4 && causal) {
    const double b = in[0].dims[0], h = in[0].dims[1], sq = in[0].dims[2], d = in[0].dims[3];
    const double sk = in[1].dims[2];
    const double pairs = *causal ? sq * (sq + 1) / 2 : sq * sk;
    r.family = "attention.flash";  // PyTorch's FlashAttention-2, not one of Myriad's kernels
    r.op_class = models::OpClass::attention;
    r.flops = 4 * b * h * pairs * d;
    r.bytes =
        (in[0].elements() + in[1].elements() + in[2].elements() + in[0].elements()) * in[0].elem;
    return r;
  }
  const auto family = memory_bound_family(op);
  if (!family) return std::nullopt;
  // Its tensors read, and one written the size of the largest.
  double bytes = 0, largest = 0;
  for (const Tensor& t : in) {
    bytes += t.elements() * t.elem;
    largest = std::max(largest, t.elements() * t.elem);
  }
  if (bytes <= 0) return std::nullopt;
  r.family = *family;
  r.op_class = models::OpClass::elementwise;
  r.bytes = bytes + largest;
  r.backward = family->size() > 4 && family->substr(family->size() - 4) == ".bwd";
  return r;
}

}  // namespace

// Over 100 lines: issue 43 rewrites this reader (streaming, bounded).
// NOLINTNEXTLINE(readability-function-size)
Imported import_kineto(std::string_view text, const std::string& path) {
  json trace;
  try {
    trace = json::parse(text);
  } catch (const json::parse_error& e) {
    fail(path, "JSON", e.what());
  }
  const json* events = nullptr;
  if (trace.is_object() && trace.contains("traceEvents") && trace["traceEvents"].is_array()) {
    events = &trace["traceEvents"];
  } else if (trace.is_array()) {
    events = &trace;
  } else {
    fail(path, "traceEvents", "expected a Chrome trace: a list of events");
  }
  struct OpCall {
    std::string name;
    std::vector<Tensor> inputs;
    std::optional<bool> causal;  // SDPA's is_causal, when its concrete inputs were recorded
  };
  std::map<long long, OpCall> ops;       // by External id
  std::map<long long, double> kernel_s;  // summed per op call
  std::map<long long, std::set<std::string>> kernel_names;
  int kernels = 0, unlinked = 0;
  double kernel_total_s = 0;
  for (std::size_t i = 0; i < events->size(); ++i) {
    const json& e = (*events)[i];
    const std::string where = fmt::format("traceEvents[{}]", i);
    if (!e.is_object()) fail(path, where, "expected an event object");
    const std::string cat = e.value("cat", std::string{});
    if (cat != "cpu_op" && cat != "kernel" && cat != "Kernel") continue;
    if (!e.contains("name") || !e["name"].is_string())
      fail(path, where + ".name", "expected a string");
    const json args = e.value("args", json::object());
    std::optional<long long> id;
    if (args.contains("External id") && args["External id"].is_number_integer()) {
      id = args["External id"].get<long long>();
    }
    if (cat == "cpu_op") {
      if (id) {
        OpCall call{e["name"].get<std::string>(), inputs_of(args, path, where), std::nullopt};
        const json concrete = args.value("Concrete Inputs", json::array());
        if (concrete.is_array() && concrete.size() > 4 && concrete[4].is_string()) {
          const std::string flag = concrete[4].get<std::string>();
          if (flag == "True" || flag == "False") call.causal = flag == "True";
        }
        ops[*id] = std::move(call);
      }
      continue;
    }
    if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) {
      fail(path, where + ".dur", "expected a kernel's duration in microseconds");
    }
    const double seconds = e["dur"].get<double>() * 1e-6;
    ++kernels;
    kernel_total_s += seconds;
    if (!id) {
      ++unlinked;
      continue;
    }
    kernel_s[*id] += seconds;
    kernel_names[*id].insert(e["name"].get<std::string>());
  }
  if (kernels == 0) fail(path, "traceEvents", "no GPU kernel events (cat \"kernel\")");

  std::map<std::string, Row> rows;  // by name: op, shapes, types
  std::vector<std::string> order;
  std::map<std::string, std::pair<int, double>> left;  // unpriced ops: calls, seconds
  double imported_s = 0;
  for (const auto& [id, seconds] : kernel_s) {
    const auto op = ops.find(id);
    if (op == ops.end()) {
      ++unlinked;
      continue;
    }
    const std::optional<Row> described =
        describe(op->second.name, op->second.inputs, op->second.causal);
    if (!described) {
      auto& l = left[op->second.name];
      ++l.first;
      l.second += seconds;
      continue;
    }
    const std::string name = fmt::format("{} {}", op->second.name, shape_text(op->second.inputs));
    auto [it, fresh] = rows.try_emplace(name, *described);
    Row& r = it->second;
    if (fresh) {
      order.push_back(name);
      r.name = name;
      r.check = "pass";
      r.arguments = {{"source", "kineto"},
                     {"file", path},
                     {"op", op->second.name},
                     {"verified", "not verified by the source"},
                     {"kernels", json::array()}};
    }
    for (const std::string& k : kernel_names[id]) {
      if (std::find(r.arguments["kernels"].begin(), r.arguments["kernels"].end(), k) ==
          r.arguments["kernels"].end()) {
        r.arguments["kernels"].push_back(k);
      }
    }
    r.times_s.push_back(seconds);
    imported_s += seconds;
  }
  Imported out;
  if (trace.is_object() && trace.contains("deviceProperties") &&
      trace["deviceProperties"].is_array() && !trace["deviceProperties"].empty() &&
      trace["deviceProperties"][0].is_object()) {
    out.device = trace["deviceProperties"][0].value("name", std::string{});
  }
  for (const std::string& name : order) {
    Row r = rows.at(name);
    r.best_s = *std::min_element(r.times_s.begin(), r.times_s.end());
    out.rows.push_back(std::move(r));
  }
  out.notes.push_back(fmt::format(
      "{} kernels, {:.4g} ms in all; {:.1f} % of that time became {} rows (a sample per op call, "
      "its kernels summed)",
      kernels, kernel_total_s * 1e3, kernel_total_s > 0 ? 100 * imported_s / kernel_total_s : 0,
      out.rows.size()));
  if (unlinked > 0) {
    out.notes.push_back(fmt::format(
        "{} kernels name no ATen op (no \"External id\", or none recorded): left out", unlinked));
  }
  std::vector<std::pair<double, std::string>> worst;
  worst.reserve(left.size());
  for (const auto& [name, l] : left) {
    worst.emplace_back(l.second,
                       fmt::format("{} ({} calls, {:.3g} ms)", name, l.first, l.second * 1e3));
  }
  std::sort(worst.rbegin(), worst.rend());
  if (!worst.empty()) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < std::min<std::size_t>(5, worst.size()); ++i) {
      names.push_back(worst[i].second);
    }
    out.notes.push_back(fmt::format("kernels of {} ops Myriad does not price, left out: {}{}",
                                    worst.size(), fmt::join(names, ", "),
                                    worst.size() > 5 ? ", ..." : ""));
  }
  return out;
}

}  // namespace myriad::calibration
