// The machinery cuDNN's fused attention forward (attention_cudnn.cpp) and
// backward (attention_cudnn_backward.cpp) share, internal to those two files:
// libcudnn opened on first use, backend descriptors owned RAII, a builder for
// operation graphs (tensors, pointwise, reduction, matmul, reshape, the causal
// and sliding-window masks), plans chosen by cuDNN's heuristics and cached per
// shape, device and thread, and execution with a variant pack. C++ only: it
// includes cudnn_graph.h for types and enums; every entry point comes from dlsym.
#pragma once

#include <cuda_runtime_api.h>
#include <cudnn_graph.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/ops/attention_shape.hpp"

namespace myriad::kernels::ops::cudnn_graph {

// ---- The library ------------------------------------------------------------

// The entry points the attention files call, resolved once.
struct Api {
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

// The library as loaded on first use; `error` says why it is not there.
const Api& api();
// The library, or std::runtime_error saying why it is not there.
const Api& loaded_api();
// "9.10.2" for 91002.
std::string version_text(std::size_t version);
// Throws std::runtime_error naming `call`, the status and cuDNN's last message.
void check(cudnnStatus_t status, const std::string& call);

// ---- Backend descriptors ------------------------------------------------------

// One backend descriptor, destroyed with its owner; `what` names it in errors.
class Descriptor {
 public:
  Descriptor(cudnnBackendDescriptorType_t type, std::string what);
  Descriptor(Descriptor&& other) noexcept
      : d_(std::exchange(other.d_, nullptr)), what_(std::move(other.what_)) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  Descriptor& operator=(Descriptor&&) = delete;
  ~Descriptor();

  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count,
           const void* values, const char* attribute);
  void finalize();
  [[nodiscard]] cudnnBackendDescriptor_t get() const { return d_; }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
  std::string what_;
};

// Sets an attribute, naming it in the error.
#define MYRIAD_CUDNN_SET(desc, attribute, type, count, values) \
  (desc).set(attribute, type, count, values, #attribute)

// ---- Plan keys and tensor uids --------------------------------------------------

// Uids both directions bind; each direction numbers its own from 10 and its
// intermediates from kFirstVirtualUid.
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

enum class Direction { kForward, kBackward };

// What a plan depends on; scale and the mask's scalars are passed by value at run time.
struct PlanKey {
  Direction direction;
  std::int64_t batch, q_heads, kv_heads, seq, head_dim;
  bool causal;
  std::int64_t window;  // 0 when the window masks nothing
  [[nodiscard]] auto tied() const {
    return std::tie(direction, batch, q_heads, kv_heads, seq, head_dim, causal, window);
  }
  bool operator<(const PlanKey& other) const { return tied() < other.tied(); }
  [[nodiscard]] bool masked() const { return causal || window > 0; }
};

// The key of `s` after the checks both directions share: the shape
// (attention_cudnn_can_implement), each of `pointers` non-null and 16-byte
// aligned (else std::invalid_argument naming `names`), the library loaded (else
// std::runtime_error), and cuDNN new enough for a window without the causal mask.
PlanKey checked_key(const AttentionShape& s, Direction direction,
                    std::initializer_list<const void*> pointers, const std::string& names);

// ---- Graphs -----------------------------------------------------------------

using Dims = std::array<std::int64_t, 4>;

// Packed strides of `dims`, innermost last.
Dims packed(Dims dims);

// A tensor bound to memory in the variant pack, an intermediate the engine keeps
// to itself, or a host scalar passed in the variant pack by value.
enum class Role { kBound, kVirtual, kByValue };

// The tensors both directions bind, and the by-value scale.
struct AttentionTensors {
  cudnnBackendDescriptor_t q;      // bf16 [b, q_heads, seq, head_dim]
  cudnnBackendDescriptor_t kt;     // K^T, bf16 [b, kv_heads, head_dim, seq] over K's memory
  cudnnBackendDescriptor_t v;      // forward: V [b, kv_heads, seq, head_dim]; backward: V^T
  cudnnBackendDescriptor_t o;      // bf16 [b, q_heads, seq, head_dim]
  cudnnBackendDescriptor_t stats;  // fp32 [b, q_heads, seq, 1]
  cudnnBackendDescriptor_t scale;  // fp32 by value
};

// Builds one operation graph; owns every descriptor the graph refers to.
// Operations are recorded in the order they are added.
class GraphBuilder {
 public:
  explicit GraphBuilder(const PlanKey& key) : key_(key) {}

  [[nodiscard]] const PlanKey& key() const { return key_; }
  [[nodiscard]] Dims q_dims() const { return {key_.batch, key_.q_heads, key_.seq, key_.head_dim}; }
  [[nodiscard]] Dims kv_dims() const {
    return {key_.batch, key_.kv_heads, key_.seq, key_.head_dim};
  }
  [[nodiscard]] Dims scores() const { return {key_.batch, key_.q_heads, key_.seq, key_.seq}; }
  [[nodiscard]] Dims rows() const { return {key_.batch, key_.q_heads, key_.seq, 1}; }

  cudnnBackendDescriptor_t tensor(std::int64_t uid, cudnnDataType_t type, Dims dims, Dims strides,
                                  Role role);
  cudnnBackendDescriptor_t tensor(std::int64_t uid, cudnnDataType_t type, Dims dims, Role role) {
    return tensor(uid, type, dims, packed(dims), role);
  }
  // A by-value fp32 scalar.
  cudnnBackendDescriptor_t scalar(std::int64_t uid) {
    return tensor(uid, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, Role::kByValue);
  }
  cudnnBackendDescriptor_t scratch(cudnnDataType_t type, Dims dims, Dims strides) {
    return tensor(next_virtual_++, type, dims, strides, Role::kVirtual);
  }
  cudnnBackendDescriptor_t scratch(cudnnDataType_t type, Dims dims) {
    return scratch(type, dims, packed(dims));
  }
  // Bound bf16 memory laid out as `dims` [b, h, s, d], described as its
  // transpose [b, h, d, s] (the last two dimensions and strides swapped).
  cudnnBackendDescriptor_t transposed(std::int64_t uid, Dims dims);

  // Q, K^T, V (V^T for the backward), O, stats and scale, uids kUidQ to kUidScale.
  AttentionTensors attention_tensors();
  // S * scale, S = Q · K^T: fp32 [b, q_heads, seq, seq].
  cudnnBackendDescriptor_t scaled_scores(const AttentionTensors& t);

  // y = mode(x[, b[, t]]); in = {x, b, t}, nullptr where the mode takes fewer.
  void pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t compute,
                 std::array<cudnnBackendDescriptor_t, 3> in, cudnnBackendDescriptor_t y,
                 std::int64_t axis = -1);
  // y = op over every dimension where y is smaller than x.
  void reduction(cudnnReduceTensorOp_t op, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y);
  // c = a · b over the last two dimensions, batched (and broadcast) over the first two.
  void matmul(cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t b, cudnnBackendDescriptor_t c);
  // y = x seen through y's dimensions and strides (and data type).
  void reshape(cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y);
  // The causal mask and the sliding window of the key, scores masked to
  // kUidMaskValue; x itself when neither masks anything.
  cudnnBackendDescriptor_t mask(cudnnBackendDescriptor_t x);

  // Finalizes the graph of every operation added, on `handle`.
  void finalize(cudnnHandle_t handle);
  [[nodiscard]] cudnnBackendDescriptor_t graph() const { return graph_; }
  std::deque<Descriptor> take_parts() { return std::move(parts_); }

 private:
  Descriptor& keep(cudnnBackendDescriptorType_t type, std::string what) {
    return parts_.emplace_back(type, std::move(what));
  }
  void add_operation(Descriptor& op);
  cudnnBackendDescriptor_t band(cudnnBackendDescriptor_t x, bool right);

  PlanKey key_;
  std::deque<Descriptor> parts_;  // a deque: keep() hands out references that must stay valid
  std::vector<cudnnBackendDescriptor_t> ops_;
  std::int64_t next_virtual_ = kFirstVirtualUid;
  cudnnBackendDescriptor_t mask_value_ = nullptr;
  cudnnBackendDescriptor_t graph_ = nullptr;
};

// Adds a direction's operations to the builder.
using BuildGraph = void (*)(GraphBuilder& graph);

// ---- Plans, handles, execution ------------------------------------------------

// A finalized execution plan and everything it refers to.
struct Plan {
  std::deque<Descriptor> parts;  // tensors, operations, the graph, the chosen engine config
  Descriptor plan;
  std::int64_t workspace_bytes = 0;
};

// A cuDNN handle on one device, for one thread (a handle holds one stream at a
// time), with the plans built on it, destroyed before the handle.
struct DeviceContext {
  cudnnHandle_t handle = nullptr;
  std::map<PlanKey, std::unique_ptr<Plan>> plans;

  DeviceContext() = default;
  DeviceContext(const DeviceContext&) = delete;
  DeviceContext& operator=(const DeviceContext&) = delete;
  DeviceContext(DeviceContext&&) = delete;
  DeviceContext& operator=(DeviceContext&&) = delete;
  ~DeviceContext();
};

// This thread's context on `device`, its handle created on first use.
DeviceContext& device_context(int device);
// This thread's context on the current device, its handle set to `stream`.
DeviceContext& context_on(cudaStream_t stream);
// The plan of `key`, built by `build` and the first engine that takes it on first use.
const Plan& plan_for(DeviceContext& c, const PlanKey& key, BuildGraph build);

// Host values of the by-value scalars both directions pass; cudnnBackendExecute reads them.
struct Scalars {
  float scale;
  float mask_value;
  float window_left;
  std::int32_t window_right;
};
Scalars scalars(const AttentionShape& s, const PlanKey& key);

// The uids and pointers of one execution; by-value scalars point at host memory
// that must outlive execute().
class VariantPack {
 public:
  void add(std::int64_t uid, const void* p) {
    uids_.push_back(uid);
    pointers_.push_back(const_cast<void*>(p));
  }
  // The tensors of AttentionTensors, device pointers.
  void add_attention(const void* q, const void* k, const void* v, const void* o, const void* lse);
  // Scale and whichever mask scalars the key's graph has.
  void add_scalars(const PlanKey& key, Scalars& v);
  [[nodiscard]] const std::vector<std::int64_t>& uids() const { return uids_; }
  [[nodiscard]] const std::vector<void*>& pointers() const { return pointers_; }

 private:
  std::vector<std::int64_t> uids_;
  std::vector<void*> pointers_;
};

// Device memory allocated and freed in stream order, so that calls on different
// streams never share it.
class StreamWorkspace {
 public:
  StreamWorkspace(std::int64_t bytes, cudaStream_t stream);
  StreamWorkspace(const StreamWorkspace&) = delete;
  StreamWorkspace& operator=(const StreamWorkspace&) = delete;
  StreamWorkspace(StreamWorkspace&&) = delete;
  StreamWorkspace& operator=(StreamWorkspace&&) = delete;
  ~StreamWorkspace();
  [[nodiscard]] void* get() const { return p_; }

 private:
  void* p_ = nullptr;
  cudaStream_t stream_;
};

// Runs `plan` on the context's handle (and stream) with `pack` and the plan's
// workspace at `workspace` (plan.workspace_bytes, may be null when 0).
void execute(const DeviceContext& c, const Plan& plan, const VariantPack& pack, void* workspace);

}  // namespace myriad::kernels::ops::cudnn_graph
