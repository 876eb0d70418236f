// cudnn_graph.hpp. libcudnn.so.9 is opened on first use, beside libcudart (a
// CUDA install keeps them together) else by its soname, as cublaslt_loader.cpp
// does for cuBLASLt.
#include "kernels/ops/cudnn_graph.hpp"

#include <dlfcn.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "kernels/device/cuda_check.hpp"
#include "kernels/ops/attention_cudnn.hpp"
#include "kernels/ops/cuda_library.hpp"

namespace myriad::kernels::ops::cudnn_graph {
namespace {

const std::string kSoname = "libcudnn.so." + std::to_string(CUDNN_MAJOR);

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

// The status name and cuDNN's last message on this thread.
std::string status_text(cudnnStatus_t status) {
  const Api& a = api();
  std::string text = a.error_string(status);
  std::array<char, 1024> detail{};
  a.last_error(detail.data(), detail.size());
  if (detail[0] != '\0') text += " (" + std::string(detail.data()) + ")";
  return text;
}

bool aligned(const void* p) {
  return p != nullptr && reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

// A window that reaches past every key masks nothing.
std::int64_t mask_window(const AttentionShape& s) {
  return s.window > 0 && s.window < s.seq ? s.window : 0;
}

}  // namespace

// ---- The library ------------------------------------------------------------

const Api& api() {
  static const Api loaded = [] {
    Api a;
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

const Api& loaded_api() {
  const Api& a = api();
  if (!a.error.empty()) throw std::runtime_error("attention_cudnn: " + a.error);
  return a;
}

std::string version_text(std::size_t version) {
  return std::to_string(version / 10000) + "." + std::to_string(version % 10000 / 100) + "." +
         std::to_string(version % 100);
}

void check(cudnnStatus_t status, const std::string& call) {
  if (status != CUDNN_STATUS_SUCCESS) {
    throw std::runtime_error("attention_cudnn: " + call + " failed: " + status_text(status));
  }
}

// ---- Backend descriptors ------------------------------------------------------

Descriptor::Descriptor(cudnnBackendDescriptorType_t type, std::string what)
    : what_(std::move(what)) {
  check(api().create_descriptor(type, &d_), "cudnnBackendCreateDescriptor(" + what_ + ")");
}

Descriptor::~Descriptor() {
  if (d_ != nullptr) (void)api().destroy_descriptor(d_);
}

void Descriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                     std::int64_t count, const void* values, const char* attribute) {
  check(api().set_attribute(d_, name, type, count, values),
        "cudnnBackendSetAttribute(" + what_ + ", " + attribute + ")");
}

void Descriptor::finalize() { check(api().finalize(d_), "cudnnBackendFinalize(" + what_ + ")"); }

// ---- Plan keys ----------------------------------------------------------------

PlanKey checked_key(const AttentionShape& s, Direction direction,
                    std::initializer_list<const void*> pointers, const std::string& names) {
  const std::string why = attention_cudnn_can_implement(s);
  if (!why.empty()) throw std::invalid_argument("attention_cudnn: " + why);
  for (const void* p : pointers) {
    if (!aligned(p)) {
      throw std::invalid_argument("attention_cudnn: " + names +
                                  " must be device pointers, 16-byte aligned");
    }
  }
  const Api& a = loaded_api();
  const PlanKey key{direction, s.batch,    s.q_heads, s.kv_heads,
                    s.seq,     s.head_dim, s.causal,  mask_window(s)};
  const std::size_t version = a.get_version();
  if (key.window > 0 && !key.causal && version < 91002) {
    throw std::invalid_argument(
        "attention_cudnn: a sliding window without the causal mask needs "
        "cuDNN 9.10.2 or newer, not " +
        version_text(version));
  }
  return key;
}

// ---- Graphs -----------------------------------------------------------------

Dims packed(Dims dims) { return {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1}; }

cudnnBackendDescriptor_t GraphBuilder::tensor(std::int64_t uid, cudnnDataType_t type, Dims dims,
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

cudnnBackendDescriptor_t GraphBuilder::transposed(std::int64_t uid, Dims dims) {
  const Dims strides = packed(dims);
  return tensor(uid, CUDNN_DATA_BFLOAT16, {dims[0], dims[1], dims[3], dims[2]},
                {strides[0], strides[1], strides[3], strides[2]}, Role::kBound);
}

AttentionTensors GraphBuilder::attention_tensors() {
  AttentionTensors t{};
  t.q = tensor(kUidQ, CUDNN_DATA_BFLOAT16, q_dims(), Role::kBound);
  t.kt = transposed(kUidK, kv_dims());
  t.v = key_.direction == Direction::kBackward
            ? transposed(kUidV, kv_dims())
            : tensor(kUidV, CUDNN_DATA_BFLOAT16, kv_dims(), Role::kBound);
  t.o = tensor(kUidO, CUDNN_DATA_BFLOAT16, q_dims(), Role::kBound);
  t.stats = tensor(kUidStats, CUDNN_DATA_FLOAT, rows(), Role::kBound);
  t.scale = scalar(kUidScale);
  return t;
}

cudnnBackendDescriptor_t GraphBuilder::scaled_scores(const AttentionTensors& t) {
  const cudnnBackendDescriptor_t s = scratch(CUDNN_DATA_FLOAT, scores());
  matmul(t.q, t.kt, s);
  const cudnnBackendDescriptor_t scaled = scratch(CUDNN_DATA_FLOAT, scores());
  pointwise(CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, {s, t.scale, nullptr}, scaled);
  return scaled;
}

void GraphBuilder::add_operation(Descriptor& op) {
  op.finalize();
  ops_.push_back(op.get());
}

void GraphBuilder::pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t compute,
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
  add_operation(op);
}

void GraphBuilder::reduction(cudnnReduceTensorOp_t op_kind, cudnnBackendDescriptor_t x,
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
  add_operation(op);
}

void GraphBuilder::matmul(cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b,
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
  add_operation(op);
}

// As the frontend lowers its reshape node before cuDNN 9.22: X and Y, no mode.
void GraphBuilder::reshape(cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y) {
  Descriptor& op = keep(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, "reshape operation");
  MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
  MYRIAD_CUDNN_SET(op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
  add_operation(op);
}

// One side of the diagonal band, as the frontend's composite band mask builds it
// (each side generates its own indices). Right: keep row + shift >= col, where
// shift is 0 when causal, else window - 1. Left: keep col + window > row.
cudnnBackendDescriptor_t GraphBuilder::band(cudnnBackendDescriptor_t x, bool right) {
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
    const auto window = scalar(kUidWindowLeft);
    const cudnnBackendDescriptor_t reach = scratch(CUDNN_DATA_FLOAT, scores());
    pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, {col, window, nullptr}, reach);
    pointwise(CUDNN_POINTWISE_CMP_GT, CUDNN_DATA_BOOLEAN, {reach, row, nullptr}, keep_it);
  }
  const cudnnBackendDescriptor_t y = scratch(CUDNN_DATA_FLOAT, scores());
  pointwise(CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, {x, mask_value_, keep_it}, y);
  return y;
}

cudnnBackendDescriptor_t GraphBuilder::mask(cudnnBackendDescriptor_t x) {
  if (!key_.masked()) return x;
  mask_value_ = scalar(kUidMaskValue);
  x = band(x, /*right=*/true);
  if (key_.window > 0) x = band(x, /*right=*/false);
  return x;
}

void GraphBuilder::finalize(cudnnHandle_t handle) {
  Descriptor& g = keep(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
  MYRIAD_CUDNN_SET(g, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
  MYRIAD_CUDNN_SET(g, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                   static_cast<std::int64_t>(ops_.size()), ops_.data());
  g.finalize();
  graph_ = g.get();
}

// ---- Plans --------------------------------------------------------------------

namespace {

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
std::unique_ptr<Plan> first_runnable(cudnnHandle_t handle, GraphBuilder& graph,
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
std::unique_ptr<Plan> make_plan(cudnnHandle_t handle, const PlanKey& key, BuildGraph build) {
  GraphBuilder graph(key);
  build(graph);
  graph.finalize(handle);
  std::string refusals;
  for (const cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    try {
      if (auto plan = first_runnable(handle, graph, mode, refusals)) return plan;
    } catch (const std::runtime_error& e) {
      refusals += (refusals.empty() ? "" : "; ") + std::string(e.what());
    }
  }
  const char* what = key.direction == Direction::kForward ? "forward" : "backward";
  throw std::runtime_error(std::string("attention_cudnn: no cuDNN engine runs this attention ") +
                           what + " (" + refusals + ")");
}

}  // namespace

// ---- Handles and plans per device and thread ------------------------------------

DeviceContext::~DeviceContext() {
  plans.clear();
  if (handle != nullptr) (void)api().destroy(handle);
}

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

DeviceContext& context_on(cudaStream_t stream) {
  int device = 0;
  MYRIAD_CUDA_CHECK(cudaGetDevice(&device));
  DeviceContext& c = device_context(device);
  check(loaded_api().set_stream(c.handle, stream), "cudnnSetStream");
  return c;
}

const Plan& plan_for(DeviceContext& c, const PlanKey& key, BuildGraph build) {
  std::unique_ptr<Plan>& slot = c.plans[key];
  if (slot == nullptr) slot = make_plan(c.handle, key, build);
  return *slot;
}

// ---- Execution ----------------------------------------------------------------

Scalars scalars(const AttentionShape& s, const PlanKey& key) {
  // Before 9.10 cuDNN wanted the lowest float for masked scores, as the frontend does.
  const std::size_t version = loaded_api().get_version();
  return Scalars{s.scale > 0.0F ? s.scale : 1.0F / std::sqrt(static_cast<float>(s.head_dim)),
                 version < 91000 ? std::numeric_limits<float>::lowest()
                                 : -std::numeric_limits<float>::infinity(),
                 static_cast<float>(key.window), static_cast<std::int32_t>(key.window - 1)};
}

void VariantPack::add_attention(const void* q, const void* k, const void* v, const void* o,
                                const void* lse) {
  add(kUidQ, q);
  add(kUidK, k);
  add(kUidV, v);
  add(kUidO, o);
  add(kUidStats, lse);
}

void VariantPack::add_scalars(const PlanKey& key, Scalars& v) {
  add(kUidScale, &v.scale);
  if (key.masked()) add(kUidMaskValue, &v.mask_value);
  if (key.window > 0) add(kUidWindowLeft, &v.window_left);
  if (key.window > 0 && !key.causal) add(kUidWindowRight, &v.window_right);
}

StreamWorkspace::StreamWorkspace(std::int64_t bytes, cudaStream_t stream) : stream_(stream) {
  if (bytes > 0) MYRIAD_CUDA_CHECK(cudaMallocAsync(&p_, static_cast<std::size_t>(bytes), stream));
}

StreamWorkspace::~StreamWorkspace() {
  if (p_ != nullptr) (void)cudaFreeAsync(p_, stream_);
}

void execute(const DeviceContext& c, const Plan& plan, const VariantPack& pack, void* workspace) {
  Descriptor d(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack");
  const auto n = static_cast<std::int64_t>(pack.uids().size());
  MYRIAD_CUDNN_SET(d, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, pack.uids().data());
  MYRIAD_CUDNN_SET(d, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n,
                   pack.pointers().data());
  MYRIAD_CUDNN_SET(d, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace);
  d.finalize();
  check(api().execute(c.handle, plan.plan.get(), d.get()), "cudnnBackendExecute");
}

}  // namespace myriad::kernels::ops::cudnn_graph
