// cuDNN's fused attention forward through the backend graph API (see
// attention_cudnn.hpp). libcudnn.so.9 is opened on first use, beside libcudart
// (a CUDA install keeps them together) else by its soname, as
// cublaslt_loader.cpp does for cuBLASLt; cudnn_graph.h is included for types
// and enums only, and every entry point comes from dlsym.
//
// The graph is the one cudnn-frontend's SDPA node lowers to for cuDNN 9 before
// 9.21 (composite softmax and diagonal band masks), tensor by tensor:
//   S  = Q · K^T                      matmul, fp32        K^T is K with the last two dims swapped
//   S' = S * scale                    pointwise MUL       scale by value
//   S''= mask(S')                     GEN_INDEX rows/cols, CMP_GE / CMP_GT, BINARY_SELECT
//   m  = max_j S''; e = exp(S'' - m); l = sum_j e
//   stats = m + log(l)                the saved log-sum-exp, natural log
//   P  = e / l                        bf16, as FlashAttention rounds P
//   O  = P · V                        matmul
// GQA needs nothing more: K and V carry kv_heads, and cuDNN broadcasts them
// over the q_heads / kv_heads query heads of each group.
#include "kernels/ops/attention_cudnn.hpp"

#include <cudnn_graph.h>
#include <dlfcn.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <exception>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/cuda_library.hpp"

namespace myriad::kernels::ops {
namespace {

// ---- The library ----------------------------------------------------------

const std::string kSoname = "libcudnn.so." + std::to_string(CUDNN_MAJOR);

// The entry points this file calls, resolved once.
struct CudnnApi {
  std::string error;  // empty once the library is open and every entry point resolved
  decltype(&cudnnGetVersion) get_version = nullptr;
  decltype(&cudnnGetErrorString) error_string = nullptr;
  decltype(&cudnnGetLastErrorString) last_error = nullptr;
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnDestroy) destroy = nullptr;
  decltype(&cudnnSetStream) set_stream = nullptr;
  decltype(&cudnnBackendCreateDescriptor) create_descriptor = nullptr;
  decltype(&cudnnBackendDestroyDescriptor) destroy_descriptor = nullptr;
  decltype(&cudnnBackendSetAttribute) set_attribute = nullptr;
  decltype(&cudnnBackendGetAttribute) get_attribute = nullptr;
  decltype(&cudnnBackendFinalize) finalize = nullptr;
  decltype(&cudnnBackendExecute) execute = nullptr;
};

void* open_library(std::string& error) {
  std::string why;
  void* handle = open_cuda_library(kSoname, why);
  if (handle == nullptr) error = kSoname + " could not be loaded (" + why + ")";
  return handle;
}

template <typename F>
void resolve(void* library, const char* name, F& slot, std::string& error) {
  slot = reinterpret_cast<F>(dlsym(library, name));
  if (slot == nullptr && error.empty()) error = kSoname + " has no entry point " + name;
}

const CudnnApi& api() {
  static const CudnnApi loaded = [] {
    CudnnApi a;
    void* lib = open_library(a.error);
    if (lib == nullptr) return a;
    resolve(lib, "cudnnGetVersion", a.get_version, a.error);
    resolve(lib, "cudnnGetErrorString", a.error_string, a.error);
    resolve(lib, "cudnnGetLastErrorString", a.last_error, a.error);
    resolve(lib, "cudnnCreate", a.create, a.error);
    resolve(lib, "cudnnDestroy", a.destroy, a.error);
    resolve(lib, "cudnnSetStream", a.set_stream, a.error);
    resolve(lib, "cudnnBackendCreateDescriptor", a.create_descriptor, a.error);
    resolve(lib, "cudnnBackendDestroyDescriptor", a.destroy_descriptor, a.error);
    resolve(lib, "cudnnBackendSetAttribute", a.set_attribute, a.error);
    resolve(lib, "cudnnBackendGetAttribute", a.get_attribute, a.error);
    resolve(lib, "cudnnBackendFinalize", a.finalize, a.error);
    resolve(lib, "cudnnBackendExecute", a.execute, a.error);
    return a;
  }();
  return loaded;
}

// The library, or std::runtime_error saying why it is not there.
const CudnnApi& loaded_api() {
  const CudnnApi& a = api();
  if (!a.error.empty()) throw std::runtime_error("attention_cudnn: " + a.error);
  return a;
}

// The status name and cuDNN's last message on this thread.
std::string status_text(cudnnStatus_t status) {
  const CudnnApi& a = api();
  std::string text = a.error_string(status);
  std::array<char, 1024> detail{};
  a.last_error(detail.data(), detail.size());
  if (detail[0] != '\0') text += " (" + std::string(detail.data()) + ")";
  return text;
}

void check(cudnnStatus_t status, const std::string& call) {
  if (status != CUDNN_STATUS_SUCCESS) {
    throw std::runtime_error("attention_cudnn: " + call + " failed: " + status_text(status));
  }
}

// ---- Backend descriptors --------------------------------------------------

// One backend descriptor, destroyed with its owner; `what` names it in errors.
class Descriptor {
 public:
  Descriptor(cudnnBackendDescriptorType_t type, std::string what) : what_(std::move(what)) {
    check(api().create_descriptor(type, &d_), "cudnnBackendCreateDescriptor(" + what_ + ")");
  }
  Descriptor(Descriptor&& other) noexcept
      : d_(std::exchange(other.d_, nullptr)), what_(std::move(other.what_)) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  Descriptor& operator=(Descriptor&&) = delete;
  ~Descriptor() {
    if (d_ != nullptr) (void)api().destroy_descriptor(d_);
  }

  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count,
           const void* values, const char* attribute) {
    check(api().set_attribute(d_, name, type, count, values),
          "cudnnBackendSetAttribute(" + what_ + ", " + attribute + ")");
  }
  void finalize() { check(api().finalize(d_), "cudnnBackendFinalize(" + what_ + ")"); }
  [[nodiscard]] cudnnBackendDescriptor_t get() const { return d_; }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
  std::string what_;
};

// Sets an attribute, naming it in the error.
#define MYRIAD_CUDNN_SET(desc, attribute, type, count, values) \
  (desc).set(attribute, type, count, values, #attribute)

// ---- The graph --------------------------------------------------------------

// Tensor uids; the variant pack names the non-virtual ones.
constexpr std::int64_t kUidQ = 1;
constexpr std::int64_t kUidK = 2;  // bound as K^T: [b, kv_heads, head_dim, seq]
constexpr std::int64_t kUidV = 3;
constexpr std::int64_t kUidO = 4;
constexpr std::int64_t kUidStats = 5;        // lse, fp32 [b, q_heads, seq, 1]
constexpr std::int64_t kUidScale = 6;        // by value, fp32
constexpr std::int64_t kUidMaskValue = 7;    // by value, fp32: what masked scores become
constexpr std::int64_t kUidWindowLeft = 8;   // by value, fp32: window, keep j + window > i
constexpr std::int64_t kUidWindowRight = 9;  // by value, int32: window - 1, keep i + it >= j
constexpr std::int64_t kFirstVirtualUid = 100;

using Dims = std::array<std::int64_t, 4>;

// What the plan depends on; scale and the mask's scalars are passed by value at run time.
struct PlanKey {
  std::int64_t batch, q_heads, kv_heads, seq, head_dim;
  bool causal;
  std::int64_t window;  // 0 when the window masks nothing
  [[nodiscard]] auto tied() const {
    return std::tie(batch, q_heads, kv_heads, seq, head_dim, causal, window);
  }
  bool operator<(const PlanKey& other) const { return tied() < other.tied(); }
};

// A window that reaches past every key masks nothing.
std::int64_t mask_window(const AttentionShape& s) {
  return s.window > 0 && s.window < s.seq ? s.window : 0;
}

// Packed strides of `dims`, innermost last.
Dims packed(Dims dims) { return {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1}; }

// A tensor bound to memory in the variant pack, an intermediate the engine keeps
// to itself, or a host scalar passed in the variant pack by value.
enum class Role { kBound, kVirtual, kByValue };

// Builds the operation graph; owns every descriptor the graph refers to.
class SdpaGraph {
 public:
  explicit SdpaGraph(const PlanKey& key) : key_(key) {}

  // Adds every operation, then finalizes the graph on `handle`.
  void build(cudnnHandle_t handle);

  std::deque<Descriptor> take_parts() { return std::move(parts_); }
  [[nodiscard]] cudnnBackendDescriptor_t graph() const { return graph_; }

 private:
  Dims scores() const { return {key_.batch, key_.q_heads, key_.seq, key_.seq}; }
  Dims rows() const { return {key_.batch, key_.q_heads, key_.seq, 1}; }

  Descriptor& keep(cudnnBackendDescriptorType_t type, std::string what) {
    return parts_.emplace_back(type, std::move(what));
  }
  cudnnBackendDescriptor_t tensor(std::int64_t uid, cudnnDataType_t type, Dims dims, Dims strides,
                                  Role role);
  cudnnBackendDescriptor_t tensor(std::int64_t uid, cudnnDataType_t type, Dims dims, Role role) {
    return tensor(uid, type, dims, packed(dims), role);
  }
  cudnnBackendDescriptor_t scratch(cudnnDataType_t type, Dims dims) {
    return tensor(next_virtual_++, type, dims, Role::kVirtual);
  }
  void pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t compute,
                 std::array<cudnnBackendDescriptor_t, 3> in, cudnnBackendDescriptor_t y,
                 std::int64_t axis = -1);
  void reduction(cudnnReduceTensorOp_t op, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y);
  void matmul(cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c);
  cudnnBackendDescriptor_t band(cudnnBackendDescriptor_t x, bool right);
  cudnnBackendDescriptor_t mask(cudnnBackendDescriptor_t x);
  cudnnBackendDescriptor_t softmax(cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t stats);

  PlanKey key_;
  std::deque<Descriptor> parts_;  // a deque: keep() hands out references that must stay valid
  std::vector<cudnnBackendDescriptor_t> ops_;
  std::int64_t next_virtual_ = kFirstVirtualUid;
  cudnnBackendDescriptor_t mask_value_ = nullptr;
  cudnnBackendDescriptor_t graph_ = nullptr;
};

cudnnBackendDescriptor_t SdpaGraph::tensor(std::int64_t uid, cudnnDataType_t type, Dims dims,
                                           Dims strides, Role role) {
  Descriptor& t = keep(CUDNN_BACKEND_TENSOR_DESCRIPTOR, "tensor " + std::to_string(uid));
  const std::int64_t alignment = 16;
  const bool yes = true;
  MYRIAD_CUDNN_SET(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  MYRIAD_CUDNN_SET(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
  MYRIAD_CUDNN_SET(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
  MYRIAD_CUDNN_SET(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  MYRIAD_CUDNN_SET(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
  if (role == Role::kVirtual) {
    MYRIAD_CUDNN_SET(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &yes);
  }
  if (role == Role::kByValue) {
    MYRIAD_CUDNN_SET(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &yes);
  }
  t.finalize();
  return t.get();
}

// y = mode(x[, b[, t]]); in = {x, b, t}, nullptr where the mode takes fewer.
void SdpaGraph::pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t compute,
                          std::array<cudnnBackendDescriptor_t, 3> in, cudnnBackendDescriptor_t y,
                          std::int64_t axis) {
  Descriptor& pw =
      keep(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, "pointwise mode " + std::to_string(mode));
  MYRIAD_CUDNN_SET(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
  MYRIAD_CUDNN_SET(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  if (mode == CUDNN_POINTWISE_GEN_INDEX) {
    MYRIAD_CUDNN_SET(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
  }
  pw.finalize();
  Descriptor& op = keep(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
                        "pointwise operation, mode " + std::to_string(mode));
  const cudnnBackendDescriptor_t desc = pw.get();
  const float one = 1.0F;
  MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                   1, &desc);
  MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                   &in[0]);
  MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
  if (in[1] != nullptr) {
    MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                     &in[1]);
  }
  if (in[2] != nullptr) {
    MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                     &in[2]);
  }
  MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one);
  MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one);
  op.finalize();
  ops_.push_back(op.get());
}

// y = op over the last dimension of x (y's last dimension is 1).
void SdpaGraph::reduction(cudnnReduceTensorOp_t op_kind, cudnnBackendDescriptor_t x,
                          cudnnBackendDescriptor_t y) {
  Descriptor& red = keep(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, "reduction");
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  MYRIAD_CUDNN_SET(red, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1,
                   &op_kind);
  MYRIAD_CUDNN_SET(red, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  red.finalize();
  Descriptor& op = keep(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, "reduction operation");
  const cudnnBackendDescriptor_t desc = red.get();
  MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                   &desc);
  MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
  MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
  op.finalize();
  ops_.push_back(op.get());
}

// c = a · b over the last two dimensions, batched over the first two, fp32 accumulation.
void SdpaGraph::matmul(cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
                       cudnnBackendDescriptor_t c) {
  Descriptor& mm = keep(CUDNN_BACKEND_MATMUL_DESCRIPTOR, "matmul");
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  MYRIAD_CUDNN_SET(mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute);
  mm.finalize();
  Descriptor& op = keep(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, "matmul operation");
  const cudnnBackendDescriptor_t desc = mm.get();
  MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a);
  MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
  MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c);
  MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &desc);
  op.finalize();
  ops_.push_back(op.get());
}

// One side of the diagonal band, as the frontend's composite band mask builds it
// (each side generates its own indices). Right: keep row + shift >= col, where
// shift is 0 when causal, else window - 1. Left: keep col + window > row.
cudnnBackendDescriptor_t SdpaGraph::band(cudnnBackendDescriptor_t x, bool right) {
  const cudnnBackendDescriptor_t row = scratch(CUDNN_DATA_INT32, scores());
  const cudnnBackendDescriptor_t col = scratch(CUDNN_DATA_INT32, scores());
  pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, {x, nullptr, nullptr}, row, 2);
  pointwise(CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, {x, nullptr, nullptr}, col, 3);
  const cudnnBackendDescriptor_t keep_it = scratch(CUDNN_DATA_BOOLEAN, scores());
  if (right) {
    cudnnBackendDescriptor_t bound = row;
    if (!key_.causal) {
      const auto shift = tensor(kUidWindowRight, CUDNN_DATA_INT32, {1, 1, 1, 1}, Role::kByValue);
      bound = scratch(CUDNN_DATA_INT32, scores());
      pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_INT32, {row, shift, nullptr}, bound);
    }
    pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, {bound, col, nullptr}, keep_it);
  } else {
    const auto window = tensor(kUidWindowLeft, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, Role::kByValue);
    const cudnnBackendDescriptor_t reach = scratch(CUDNN_DATA_FLOAT, scores());
    pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, {col, window, nullptr}, reach);
    pointwise(CUDNN_POINTWISE_CMP_GT, CUDNN_DATA_BOOLEAN, {reach, row, nullptr}, keep_it);
  }
  const cudnnBackendDescriptor_t y = scratch(CUDNN_DATA_FLOAT, scores());
  pointwise(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, {x, mask_value_, keep_it}, y);
  return y;
}

// The causal mask and the sliding window; x itself when neither masks anything.
cudnnBackendDescriptor_t SdpaGraph::mask(cudnnBackendDescriptor_t x) {
  if (!key_.causal && key_.window == 0) return x;
  mask_value_ = tensor(kUidMaskValue, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, Role::kByValue);
  x = band(x, /*right=*/true);
  if (key_.window > 0) x = band(x, /*right=*/false);
  return x;
}

// P = softmax(x) over keys, in bf16 for P · V; stats = max + log(sum exp(x - max)).
cudnnBackendDescriptor_t SdpaGraph::softmax(cudnnBackendDescriptor_t x,
                                            cudnnBackendDescriptor_t stats) {
  const cudnnBackendDescriptor_t max = scratch(CUDNN_DATA_FLOAT, rows());
  reduction(CUDNN_REDUCE_TENSOR_MAX, x, max);
  const cudnnBackendDescriptor_t shifted = scratch(CUDNN_DATA_FLOAT, scores());
  pointwise(CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, {x, max, nullptr}, shifted);
  const cudnnBackendDescriptor_t e = scratch(CUDNN_DATA_FLOAT, scores());
  pointwise(CUDNN_POINTWISE_EXP, CUDNN_DATA_FLOAT, {shifted, nullptr, nullptr}, e);
  const cudnnBackendDescriptor_t sum = scratch(CUDNN_DATA_FLOAT, rows());
  reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
  const cudnnBackendDescriptor_t log_sum = scratch(CUDNN_DATA_FLOAT, rows());
  pointwise(CUDNN_POINTWISE_LOG, CUDNN_DATA_FLOAT, {sum, nullptr, nullptr}, log_sum);
  pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, {max, log_sum, nullptr}, stats);
  const cudnnBackendDescriptor_t p = scratch(CUDNN_DATA_BFLOAT16, scores());
  pointwise(CUDNN_POINTWISE_DIV, CUDNN_DATA_FLOAT, {e, sum, nullptr}, p);
  return p;
}

void SdpaGraph::build(cudnnHandle_t handle) {
  const PlanKey& k = key_;
  const auto q =
      tensor(kUidQ, CUDNN_DATA_BFLOAT16, {k.batch, k.q_heads, k.seq, k.head_dim}, Role::kBound);
  // K^T over K's memory: dims [b, h, d, s], the strides of [b, h, s, d] with the last two swapped.
  const Dims k_strides = packed({k.batch, k.kv_heads, k.seq, k.head_dim});
  const auto kt = tensor(kUidK, CUDNN_DATA_BFLOAT16, {k.batch, k.kv_heads, k.head_dim, k.seq},
                         {k_strides[0], k_strides[1], 1, k.head_dim}, Role::kBound);
  const auto v =
      tensor(kUidV, CUDNN_DATA_BFLOAT16, {k.batch, k.kv_heads, k.seq, k.head_dim}, Role::kBound);
  const auto o =
      tensor(kUidO, CUDNN_DATA_BFLOAT16, {k.batch, k.q_heads, k.seq, k.head_dim}, Role::kBound);
  const auto stats = tensor(kUidStats, CUDNN_DATA_FLOAT, rows(), Role::kBound);
  const auto scale = tensor(kUidScale, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, Role::kByValue);
  const cudnnBackendDescriptor_t s = scratch(CUDNN_DATA_FLOAT, scores());
  matmul(q, kt, s);
  const cudnnBackendDescriptor_t scaled = scratch(CUDNN_DATA_FLOAT, scores());
  pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, {s, scale, nullptr}, scaled);
  matmul(softmax(mask(scaled), stats), v, o);

  Descriptor& g = keep(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
  MYRIAD_CUDNN_SET(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  MYRIAD_CUDNN_SET(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                   static_cast<std::int64_t>(ops_.size()), ops_.data());
  g.finalize();
  graph_ = g.get();
}

// ---- Plans ----------------------------------------------------------------

// A finalized execution plan and everything it refers to.
struct Plan {
  std::deque<Descriptor> parts;  // tensors, operations, the graph, the chosen engine config
  Descriptor plan;
  std::int64_t workspace_bytes = 0;
};

// The engine configs the heuristics propose for `graph` in `mode`, best first.
std::deque<Descriptor> engine_configs(cudnnBackendDescriptor_t graph, cudnnBackendHeurMode_t mode) {
  Descriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "engine heuristics");
  MYRIAD_CUDNN_SET(heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                   1, &graph);
  MYRIAD_CUDNN_SET(heuristics, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
  heuristics.finalize();
  std::int64_t count = 0;
  check(api().get_attribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                            CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
        "cudnnBackendGetAttribute(engine heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS count)");
  std::deque<Descriptor> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (std::int64_t i = 0; i < count; ++i) {
    raw.push_back(
        configs
            .emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config " + std::to_string(i))
            .get());
  }
  if (count == 0) return configs;
  std::int64_t returned = 0;
  check(api().get_attribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                            CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned, raw.data()),
        "cudnnBackendGetAttribute(engine heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS)");
  while (static_cast<std::int64_t>(configs.size()) > returned) configs.pop_back();
  return configs;
}

// The first of `mode`'s engine configs whose execution plan finalizes on
// `handle`; nullptr when none does, with the first refusal added to `refusals`.
std::unique_ptr<Plan> first_runnable(cudnnHandle_t handle, SdpaGraph& graph,
                                     cudnnBackendHeurMode_t mode, std::string& refusals) {
  const std::string label = mode == CUDNN_HEUR_MODE_A ? "heuristics mode A" : "fallback list";
  std::deque<Descriptor> configs = engine_configs(graph.graph(), mode);
  std::string first_refusal;
  for (Descriptor& config : configs) {
    Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan");
    const cudnnBackendDescriptor_t chosen = config.get();
    MYRIAD_CUDNN_SET(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    MYRIAD_CUDNN_SET(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                     1, &chosen);
    const cudnnStatus_t status = api().finalize(plan.get());
    if (status != CUDNN_STATUS_SUCCESS) {
      if (first_refusal.empty()) first_refusal = status_text(status);
      continue;
    }
    std::int64_t workspace = 0;
    std::int64_t returned = 0;
    check(api().get_attribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                              CUDNN_TYPE_INT64, 1, &returned, &workspace),
          "cudnnBackendGetAttribute(execution plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE)");
    std::deque<Descriptor> parts = graph.take_parts();
    parts.push_back(std::move(config));
    return std::make_unique<Plan>(Plan{std::move(parts), std::move(plan), workspace});
  }
  refusals += (refusals.empty() ? "" : "; ") + label + ": " + std::to_string(configs.size()) +
              " configs, none finalized" +
              (first_refusal.empty() ? "" : "; first refusal: " + first_refusal);
  return nullptr;
}

// Builds the graph on `handle` and the plan of the first engine that takes it:
// heuristics mode A's proposals, then the fallback list's.
std::unique_ptr<Plan> make_plan(cudnnHandle_t handle, const PlanKey& key) {
  SdpaGraph graph(key);
  graph.build(handle);
  std::string refusals;
  for (const cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    try {
      if (auto plan = first_runnable(handle, graph, mode, refusals)) return plan;
    } catch (const std::runtime_error& e) {
      refusals += (refusals.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  throw std::runtime_error("attention_cudnn: no cuDNN engine runs this attention (" + refusals +
                           ")");
}

// ---- Handles and plans per device and thread --------------------------------

// A cuDNN handle on one device, for one thread (a handle holds one stream at a
// time), with the plans built on it, destroyed before the handle.
struct DeviceContext {
  cudnnHandle_t handle = nullptr;
  std::map<PlanKey, std::unique_ptr<Plan>> plans;

  DeviceContext() = default;
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;
  ~DeviceContext() {
    plans.clear();
    if (handle != nullptr) (void)api().destroy(handle);
  }
};

DeviceContext& device_context(int device) {
  thread_local std::map<int, DeviceContext> contexts;
  DeviceContext& c = contexts[device];
  if (c.handle == nullptr) {
    cudnnHandle_t handle = nullptr;
    check(loaded_api().create(&handle), "cudnnCreate on device " + std::to_string(device));
    c.handle = handle;
  }
  return c;
}

const Plan& plan_for(DeviceContext& c, const PlanKey& key) {
  std::unique_ptr<Plan>& slot = c.plans[key];
  if (slot == nullptr) slot = make_plan(c.handle, key);
  return *slot;
}

// ---- Execution --------------------------------------------------------------

// Host values of the by-value tensors, read by cudnnBackendExecute.
struct Scalars {
  float scale;
  float mask_value;
  float window_left;
  std::int32_t window_right;
};

// Device pointers of the bound tensors.
struct Bound {
  const Bf16* q;
  const Bf16* k;
  const Bf16* v;
  Bf16* o;
  float* lse;
};

// Workspace allocated and freed in stream order, so that calls on different
// streams never share one.
class StreamWorkspace {
 public:
  StreamWorkspace(std::int64_t bytes, cudaStream_t stream) : stream_(stream) {
    if (bytes > 0) MYRIAD_CUDA_CHECK(cudaMallocAsync(&p_, static_cast<std::size_t>(bytes), stream));
  }
  StreamWorkspace(const StreamWorkspace&) = delete;
  StreamWorkspace& operator=(const StreamWorkspace&) = delete;
  ~StreamWorkspace() {
    if (p_ != nullptr) (void)cudaFreeAsync(p_, stream_);
  }
  [[nodiscard]] void* get() const { return p_; }

 private:
  void* p_ = nullptr;
  cudaStream_t stream_;
};

void* as_void(const void* p) { return const_cast<void*>(p); }

void execute(const DeviceContext& c, const Plan& plan, const PlanKey& key, const Bound& t,
             Scalars& v, cudaStream_t stream) {
  std::array<std::int64_t, 9> uids = {kUidQ, kUidK, kUidV, kUidO, kUidStats, kUidScale};
  std::array<void*, 9> pointers = {as_void(t.q), as_void(t.k), as_void(t.v), t.o, t.lse, &v.scale};
  std::int64_t n = 6;
  const auto add = [&](std::int64_t uid, void* p) {
    uids[static_cast<std::size_t>(n)] = uid;
    pointers[static_cast<std::size_t>(n++)] = p;
  };
  if (key.causal || key.window > 0) add(kUidMaskValue, &v.mask_value);
  if (key.window > 0) add(kUidWindowLeft, &v.window_left);
  if (key.window > 0 && !key.causal) add(kUidWindowRight, &v.window_right);
  const StreamWorkspace workspace(plan.workspace_bytes, stream);
  void* w = workspace.get();
  Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack");
  MYRIAD_CUDNN_SET(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids.data());
  MYRIAD_CUDNN_SET(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n,
                   pointers.data());
  MYRIAD_CUDNN_SET(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &w);
  pack.finalize();
  check(api().execute(c.handle, plan.plan.get(), pack.get()), "cudnnBackendExecute");
}

std::string version_text(std::size_t v) {
  return std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) + "." +
         std::to_string(v % 100);
}

bool aligned(const void* p) {
  return p != nullptr && reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

}  // namespace

std::string attention_cudnn_can_implement(const AttentionShape& s) {
  if (s.batch < 1 || s.q_heads < 1 || s.kv_heads < 1 || s.seq < 1 || s.head_dim < 1) {
    return "batch, heads, seq and head_dim must be at least 1";
  }
  if (s.q_heads % s.kv_heads != 0) return "kv_heads must divide q_heads";
  if (s.head_dim != 64 && s.head_dim != 128) {
    return "cuDNN's fused attention is asked for head_dim 64 or 128 only, not " +
           std::to_string(s.head_dim);
  }
  if (s.window < 0) return "window must be 0 (none) or positive";
  if (s.seq > std::numeric_limits<std::int32_t>::max()) {
    return "seq must fit the int32 row and column indices of cuDNN's mask";
  }
  if (!(s.scale >= 0.0F) || !std::isfinite(s.scale)) {
    return "scale must be 0 (default) or positive and finite";
  }
  return {};
}

std::string attention_cudnn_available() {
  const CudnnApi& a = api();
  if (!a.error.empty()) return a.error;
  const std::size_t version = a.get_version();
  if (version == 91000 || version == 91001) {
    return "cuDNN " + version_text(version) + " has known bugs in its bf16 attention forward";
  }
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("no CUDA device for cuDNN: ") + cudaGetErrorString(status);
  }
  if (count == 0) return "no CUDA device for cuDNN";
  int device = 0;
  int major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
    return std::string("the current device could not be queried: ") +
           cudaGetErrorString(cudaGetLastError());
  }
  if (major < 8) {
    return "cuDNN's fused attention needs compute capability 8.0 or newer; device " +
           std::to_string(device) + " has " + std::to_string(major) + ".x";
  }
  try {
    (void)device_context(device);
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

void attention_forward_cudnn(const AttentionShape& s, const Bf16* q, const Bf16* k, const Bf16* v,
                             Bf16* o, float* lse, cudaStream_t stream) {
  const std::string why = attention_cudnn_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("attention_cudnn: " + why);
  if (!aligned(q) || !aligned(k) || !aligned(v) || !aligned(o) || !aligned(lse)) {
    throw std::invalid_argument(
        "attention_cudnn: q, k, v, o and lse must be device pointers, 16-byte aligned");
  }
  const CudnnApi& a = loaded_api();
  const PlanKey key{s.batch, s.q_heads, s.kv_heads, s.seq, s.head_dim, s.causal, mask_window(s)};
  const std::size_t version = a.get_version();
  if (key.window > 0 && !key.causal && version < 91002) {
    throw std::invalid_argument(
        "attention_cudnn: a sliding window without the causal mask needs "
        "cuDNN 9.10.2 or newer, not " +
        version_text(version));
  }
  int device = 0;
  MYRIAD_CUDA_CHECK(cudaGetDevice(&device));
  DeviceContext& c = device_context(device);
  check(a.set_stream(c.handle, stream), "cudnnSetStream");
  const Plan& plan = plan_for(c, key);
  // Before 9.10 cuDNN wanted the lowest float for masked scores, as the frontend does.
  Scalars values{s.scale > 0.0F ? s.scale : 1.0F / std::sqrt(static_cast<float>(s.head_dim)),
                 version < 91000 ? std::numeric_limits<float>::lowest()
                                 : -std::numeric_limits<float>::infinity(),
                 static_cast<float>(key.window), static_cast<std::int32_t>(key.window - 1)};
  execute(c, plan, key, Bound{q, k, v, o, lse}, values, stream);
}

}  // namespace myriad::kernels::ops
