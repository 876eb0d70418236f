// A PyTorch profiler (Kineto) trace as calibration rows (import.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <unordered_map>

#include "calibration/import/json_lists.hpp"
#include "calibration/import/readers.hpp"

namespace myriad::calibration {
namespace {

using nlohmann::json;

// The most elements a recorded tensor may have: 2^48 (a petabyte of bytes and
// more); past it a shape is a corrupt or hostile trace, and products overflow.
constexpr double kMaxTensorElements = 281474976710656.0;
// The most distinct op shapes, op names and kernel names a trace may hold: a
// training step has thousands.
constexpr std::size_t kMaxDistinct = 200'000;

// Why an op Myriad prices had no row: the profiler recorded no shapes
// (torch.profiler.profile without record_shapes=True writes no "Input Dims").
constexpr const char* kNoShapes = "no input shapes (\"Input Dims\")";

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
  if (!dims.is_array()) import_fail(path, where + ".args.Input Dims", "expected a list of shapes");
  for (std::size_t i = 0; i < dims.size(); ++i) {
    Tensor t;
    if (dims[i].is_array()) {
      double product = 1;
      for (const json& d : dims[i]) {
        if (!d.is_number() || d.get<double>() < 0) {
          import_fail(path, fmt::format("{}.args.Input Dims[{}]", where, i),
                      "expected non-negative sizes");
        }
        t.dims.push_back(d.get<double>());
        // Each size and the running product within 2^48: no overflow on the way.
        product *= t.dims.back();
        if (t.dims.back() > kMaxTensorElements || product > kMaxTensorElements) {
          import_fail(path, fmt::format("{}.args.Input Dims[{}]", where, i),
                      "a tensor of more than 2^48 elements: not a shape a trace records");
        }
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
    // An empty tensor launches no GEMM worth fitting (and m, n, k, batch >= 1 in a row).
    if (m < 1 || n < 1 || k < 1 || batch < 1) return std::nullopt;
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
    if (b < 1 || h < 1 || sq < 1 || d < 1 || sk < 1) return std::nullopt;
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

// Why describe() made no row of an op Myriad prices, from what it was given.
std::string why_not_priced(const std::string& op, const std::vector<Tensor>& in,
                           std::optional<bool> causal) {
  if (in.empty()) return kNoShapes;
  if (op == "aten::_scaled_dot_product_flash_attention" && !causal) {
    return "is_causal not recorded among its \"Concrete Inputs\"";
  }
  for (const Tensor& t : in) {
    if (!t.dims.empty() && t.elem == 0) return "an input type of no size Myriad knows";
  }
  return "an empty or mismatched shape";
}

// What one op call became, shared by the calls of one op, shapes and types: the
// row describe() made of it, named, or nullopt with why: `why` is empty for an
// op Myriad does not price.
struct OpShape {
  std::string op;
  std::optional<Row> row;
  std::string why;
  std::size_t event = 0;  // its first call's place in traceEvents
};

// A kernel launch linked to an op call.
struct Launch {
  long long id;  // the op call's External id
  double seconds;
  std::uint32_t kernel;  // its name, in kernel_names
};

// Calls of an op Myriad prices that became no row, for one reason.
struct Unusable {
  int calls = 0;
  double seconds = 0;
  std::size_t event = 0;  // the first call's place in traceEvents
};

bool may_be_priced(const std::string& op) {
  return op == "aten::mm" || op == "aten::addmm" || op == "aten::bmm" ||
         op == "aten::_scaled_dot_product_flash_attention" || memory_bound_family(op);
}

// Reads the trace's events one by one, keeping a few bytes an op call and a
// launch; the rows are made at the end, when every launch has met its op.
class TraceReader {
 public:
  explicit TraceReader(const std::string& path) : path_(path) {}

  void event(std::size_t i, const json& e) {
    const auto where = [&] { return fmt::format("traceEvents[{}]", i); };
    if (!e.is_object()) import_fail(path_, where(), "expected an event object");
    const std::string cat = e.value("cat", std::string{});
    if (cat != "cpu_op" && cat != "kernel" && cat != "Kernel") {
      count_other(cat, e);
      return;
    }
    if (!e.contains("name") || !e["name"].is_string()) {
      import_fail(path_, where() + ".name", "expected a string");
    }
    const json args = e.value("args", json::object());
    std::optional<long long> id;
    if (args.contains("External id") && args["External id"].is_number_integer()) {
      id = args["External id"].get<long long>();
    }
    if (cat == "cpu_op") {
      if (args.contains("Input Dims")) ++ops_with_shapes_;
      if (id) {
        ops_.emplace_back(*id, op_shape(e["name"].get<std::string>(), args, i));
      } else if (ops_without_id_++ == 0) {
        first_op_without_id_ = i;
      }
      return;
    }
    if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) {
      import_fail(path_, where() + ".dur", "expected a kernel's duration in microseconds");
    }
    const double seconds = e["dur"].get<double>() * 1e-6;
    ++kernels_;
    kernel_total_s_ += seconds;
    if (!id) {
      ++unlinked_;
      return;
    }
    launches_.push_back(
        {*id, seconds,
         intern(kernel_index_, e["name"].get<std::string>(), where(), "kernel names")});
    if (kernel_index_.size() > kernel_names_.size()) {
      kernel_names_.push_back(e["name"].get<std::string>());
    }
  }

  Imported finish(const std::string& device);

 private:
  // The rows, a sample an op call (its kernels summed), by row name in the order
  // of their first External id.
  struct Joined {
    std::map<std::string, Row> rows;
    std::vector<std::string> order;
    std::map<std::string, std::pair<int, double>> left;  // unpriced ops: calls, seconds
    std::map<std::pair<std::string, std::string>, Unusable> unusable;  // by why, op
    int zero_calls = 0;  // op calls whose kernels took 0 us
    double imported_s = 0;
  };
  Joined join();
  void add_call(Joined& out, const OpShape& shape, double seconds,
                const std::vector<std::uint32_t>& kernels) const;

  // The index of `key` in `index`, a new one when it is not there yet.
  std::uint32_t intern(std::unordered_map<std::string, std::uint32_t>& index,
                       const std::string& key, const std::string& where, const char* what) const {
    const auto [it, fresh] = index.try_emplace(key, static_cast<std::uint32_t>(index.size()));
    if (fresh && index.size() > kMaxDistinct) {
      import_fail(path_, where,
                  fmt::format("more than {} distinct {}: more than a trace Myriad imports holds",
                              kMaxDistinct, what));
    }
    return it->second;
  }

  // The op call's shape: ops Myriad cannot price are told apart by name alone.
  std::uint32_t op_shape(const std::string& op, const json& args, std::size_t event) {
    const std::string where = fmt::format("traceEvents[{}]", event);
    if (!may_be_priced(op)) return add_shape("\x1e" + op, op, event, {}, std::nullopt);
    if (!args.contains("Input Dims")) return add_shape("\x1d" + op, op, event, {}, std::nullopt);
    std::vector<Tensor> inputs = inputs_of(args, path_, where);
    std::optional<bool> causal;  // SDPA's is_causal, when its concrete inputs were recorded
    const json concrete = args.value("Concrete Inputs", json::array());
    if (concrete.is_array() && concrete.size() > 4 && concrete[4].is_string()) {
      const std::string flag = concrete[4].get<std::string>();
      if (flag == "True" || flag == "False") causal = flag == "True";
    }
    // Everything describe() reads: the op, the shapes, the element sizes, is_causal.
    std::string key = op + "\x1f" + shape_text(inputs) + "\x1f";
    for (const Tensor& t : inputs) key += fmt::format("{},", t.elem);
    key += causal ? (*causal ? "1" : "0") : "-";
    return add_shape(key, op, event, inputs, causal);
  }

  std::uint32_t add_shape(const std::string& key, const std::string& op, std::size_t event,
                          const std::vector<Tensor>& inputs, std::optional<bool> causal) {
    const std::uint32_t at =
        intern(shape_index_, key, fmt::format("traceEvents[{}]", event), "op shapes");
    if (at == shapes_.size()) {
      std::optional<Row> row = describe(op, inputs, causal);
      std::string why;
      if (row) {
        row->name = fmt::format("{} {}", op, shape_text(inputs));
      } else if (may_be_priced(op)) {
        why = why_not_priced(op, inputs, causal);
      }
      shapes_.push_back({op, std::move(row), std::move(why), event});
    }
    return at;
  }

  // An event neither an ATen op nor a kernel, counted by its category (the
  // first kMaxCategories named, the rest together) with its time when on the GPU.
  void count_other(const std::string& cat, const json& e) {
    static constexpr std::size_t kMaxCategories = 64;
    const std::string name = cat.empty() ? "(no cat)" : cat;
    auto it = other_.find(name);
    if (it == other_.end()) {
      it = other_.size() < kMaxCategories ? other_.emplace(name, Other{}).first
                                          : other_.try_emplace("(other categories)").first;
    }
    ++it->second.events;
    if (cat.rfind("gpu_", 0) == 0 && e.contains("dur") && e["dur"].is_number()) {
      it->second.gpu_s += std::max(0.0, e["dur"].get<double>()) * 1e-6;
    }
  }
  std::vector<std::string> left_out_notes(
      const std::map<std::pair<std::string, std::string>, Unusable>& unusable) const;

  struct Other {
    long long events = 0;
    double gpu_s = 0;  // the durations of GPU events (gpu_memcpy, gpu_memset)
  };
  const std::string& path_;
  std::map<std::string, Other> other_;
  long long ops_with_shapes_ = 0, ops_without_id_ = 0;
  std::size_t first_op_without_id_ = 0;
  std::unordered_map<std::string, std::uint32_t> shape_index_, kernel_index_;
  std::vector<OpShape> shapes_;
  std::vector<std::string> kernel_names_;
  std::vector<std::pair<long long, std::uint32_t>> ops_;  // External id, shape; in file order
  std::vector<Launch> launches_;                          // in file order
  int kernels_ = 0, unlinked_ = 0;
  double kernel_total_s_ = 0;
};

TraceReader::Joined TraceReader::join() {
  const auto by_id = [](const auto& a, const auto& b) { return a.first < b.first; };
  // Of two calls with one id, the last in the file counts (as a later event would).
  std::stable_sort(ops_.begin(), ops_.end(), by_id);
  std::stable_sort(launches_.begin(), launches_.end(),
                   [](const Launch& a, const Launch& b) { return a.id < b.id; });
  Joined out;
  std::vector<std::uint32_t> kernels;
  for (std::size_t i = 0; i < launches_.size();) {
    const long long id = launches_[i].id;
    double seconds = 0;
    kernels.clear();
    for (; i < launches_.size() && launches_[i].id == id; ++i) {
      seconds += launches_[i].seconds;
      kernels.push_back(launches_[i].kernel);
    }
    const auto op = std::upper_bound(ops_.begin(), ops_.end(), std::make_pair(id, UINT32_MAX));
    if (op == ops_.begin() || std::prev(op)->first != id) {
      ++unlinked_;
      continue;
    }
    add_call(out, shapes_[std::prev(op)->second], seconds, kernels);
  }
  return out;
}

void TraceReader::add_call(Joined& out, const OpShape& shape, double seconds,
                           const std::vector<std::uint32_t>& kernels) const {
  if (!shape.row && !shape.why.empty()) {
    auto [it, fresh] = out.unusable.try_emplace({shape.why, shape.op});
    if (fresh || shape.event < it->second.event) it->second.event = shape.event;
    ++it->second.calls;
    it->second.seconds += seconds;
    return;
  }
  if (!shape.row) {
    auto& l = out.left[shape.op];
    ++l.first;
    l.second += seconds;
    return;
  }
  if (seconds <= 0) {  // a row's samples are > 0 s
    ++out.zero_calls;
    return;
  }
  auto [it, fresh] = out.rows.try_emplace(shape.row->name, *shape.row);
  Row& r = it->second;
  if (fresh) {
    out.order.push_back(r.name);
    r.check = "pass";
    r.arguments = {{"source", "kineto"},
                   {"file", path_},
                   {"op", shape.op},
                   {"verified", "not verified by the source"},
                   {"kernels", json::array()}};
  }
  std::vector<std::string> names;
  names.reserve(kernels.size());
  for (const std::uint32_t k : kernels) names.push_back(kernel_names_[k]);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  json& listed = r.arguments["kernels"];
  for (const std::string& k : names) {
    if (std::find(listed.begin(), listed.end(), k) == listed.end()) listed.push_back(k);
  }
  r.times_s.push_back(seconds);
  out.imported_s += seconds;
}

// Ops Myriad prices whose calls became no row, and why; refused when the trace
// has no shapes at all: it was recorded without record_shapes.
std::vector<std::string> TraceReader::left_out_notes(
    const std::map<std::pair<std::string, std::string>, Unusable>& unusable) const {
  std::vector<std::string> out;
  // Calls without shapes in a trace where no op has them: refused at the first.
  const Unusable* first = nullptr;
  std::string first_op;
  int calls = 0;
  std::size_t ops = 0;
  for (const auto& [key, u] : unusable) {
    if (key.first != kNoShapes || ops_with_shapes_ > 0) continue;
    calls += u.calls;
    ++ops;
    if (first == nullptr || u.event < first->event) {
      first = &u;
      first_op = key.second;
    }
  }
  if (first != nullptr) {
    import_fail(path_, fmt::format("traceEvents[{}]", first->event),
                fmt::format("{} records no input shapes (\"Input Dims\"), nor does any op in the "
                            "trace ({} calls of {} ops Myriad prices have kernels): it was "
                            "recorded without shapes, and Myriad prices GEMMs, attention and "
                            "memory-bound ops by them. Record again with "
                            "torch.profiler.profile(record_shapes=True, ...)",
                            first_op, calls, ops));
  }
  out.reserve(unusable.size() + 2);
  for (const auto& [key, u] : unusable) {
    out.push_back(fmt::format(
        "kernels of {} calls of {} ({:.3g} ms), an op Myriad prices, left out: {} (the first "
        "at traceEvents[{}])",
        u.calls, key.second, u.seconds * 1e3, key.first, u.event));
  }
  if (ops_without_id_ > 0) {
    out.push_back(fmt::format(
        "{} ATen op events without an integer \"External id\": no kernel is linked to them (the "
        "first at traceEvents[{}])",
        ops_without_id_, first_op_without_id_));
  }
  if (!other_.empty()) {
    std::vector<std::pair<long long, std::string>> kinds;
    long long events = 0;
    for (const auto& [cat, o] : other_) {
      events += o.events;
      kinds.emplace_back(o.events, o.gpu_s > 0 ? fmt::format("{} {} ({:.3g} ms on the GPU)",
                                                             o.events, cat, o.gpu_s * 1e3)
                                               : fmt::format("{} {}", o.events, cat));
    }
    std::stable_sort(kinds.begin(), kinds.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    std::vector<std::string> named;
    for (std::size_t i = 0; i < std::min<std::size_t>(6, kinds.size()); ++i) {
      named.push_back(kinds[i].second);
    }
    out.push_back(fmt::format("{} events neither ATen ops nor kernels, not read: {}{}", events,
                              fmt::join(named, ", "), kinds.size() > 6 ? ", ..." : ""));
  }
  return out;
}

Imported TraceReader::finish(const std::string& device) {
  if (kernels_ == 0) import_fail(path_, "traceEvents", "no GPU kernel events (cat \"kernel\")");
  Joined joined = join();
  std::vector<std::string> left_out = left_out_notes(joined.unusable);
  Imported out;
  out.device = device;
  for (const std::string& name : joined.order) {
    Row& r = joined.rows.at(name);
    r.best_s = *std::min_element(r.times_s.begin(), r.times_s.end());
    out.rows.push_back(std::move(r));
  }
  out.notes.push_back(fmt::format(
      "{} kernels, {:.4g} ms in all; {:.1f} % of that time became {} rows (a sample per op call, "
      "its kernels summed)",
      kernels_, kernel_total_s_ * 1e3,
      kernel_total_s_ > 0 ? 100 * joined.imported_s / kernel_total_s_ : 0, out.rows.size()));
  if (unlinked_ > 0) {
    out.notes.push_back(fmt::format(
        "{} kernels name no ATen op (no \"External id\", or none recorded): left out", unlinked_));
  }
  if (joined.zero_calls > 0) {
    out.notes.push_back(
        fmt::format("{} op calls whose kernels took 0 us in all: left out (a sample is a time > 0)",
                    joined.zero_calls));
  }
  std::vector<std::pair<double, std::string>> worst;
  worst.reserve(joined.left.size());
  for (const auto& [name, l] : joined.left) {
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
  out.notes.insert(out.notes.end(), left_out.begin(), left_out.end());
  return out;
}

}  // namespace

Imported import_kineto(std::istream& in, const std::string& path) {
  TraceReader trace(path);
  std::string device;  // deviceProperties[0].name
  const auto found = stream_json_lists(
      in, path, {{"traceEvents", "deviceProperties"}, true},
      [&](const std::string& list, std::size_t i, const json& e) {
        if (list == "traceEvents") {
          trace.event(i, e);
        } else if (i == 0 && e.is_object() && e.contains("name") && e["name"].is_string()) {
          device = e["name"].get<std::string>();
        }
      });
  if (found.count("traceEvents") == 0) {
    import_fail(path, "traceEvents", "expected a Chrome trace: a list of events");
  }
  return trace.finish(device);
}

}  // namespace myriad::calibration
