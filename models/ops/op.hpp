// One unit of work as every engine sees it (ARCHITECTURE.md principle 1): what
// kind of kernel, its shape, its FLOPs and the bytes it moves through memory.
// The cost model prices it, the calibration harness runs it, the step engine
// plays it as an event.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace myriad::models {

enum class OpClass {
  gemm,         // dense matrix multiply, tensor cores
  attention,    // fused (flash) attention core: QK^T, softmax, PV in one kernel
  elementwise,  // norms, activations, dropout, residual adds, softmax over scores, loss
  optimizer,    // the fused optimizer step over this rank's parameters
};

std::string_view op_class_name(OpClass c);

struct GemmShape {
  double m = 0;  // rows of the output (tokens)
  double n = 0;  // columns of the output
  double k = 0;  // reduction dimension
  double batch = 1;
};

enum class SparseKernel { none, two_four, unstructured };

// What a fused attention kernel works on, per rank: each sequence's queries and keys
// (`seq` tokens, a causal window of `window` where positive), of heads `head_dim`
// wide, split over `cp` context-parallel ranks as load-balanced ring attention does.
// Language models attend causally; a full mask is what kernel benchmarks also run.
struct AttentionShape {
  double head_dim = 0;  // 0: not given (priced flat)
  double seq = 0;
  double window = 0;
  double cp = 1;
  bool causal = true;
};

struct Op {
  std::string_view name;  // static label: "qkv", "fc1.dgrad", "attention.bwd"
  // The kernel a memory-bound op runs, as calibration names its family ("norm.rms",
  // "activation.swiglu"), when it is not told by the name; its direction (".fwd",
  // ".bwd") is added from `backward` (kernel_family).
  std::string_view kernel;
  OpClass cls = OpClass::elementwise;
  double flops = 0;
  double bytes = 0;           // HBM traffic
  GemmShape gemm;             // for gemm ops
  AttentionShape attention;   // for fused attention ops
  bool fp8 = false;           // runs on fp8 tensor cores
  bool backward = false;      // part of the backward pass
  bool wgrad = false;         // a GEMM's weight gradient (what a zero-bubble schedule defers)
  double backward_bytes = 0;  // memory-bound ops: traffic of their backward, when known
  // GEMMs on pruned weights: 2:4 on sparse tensor cores, or unstructured on a sparse
  // kernel keeping `kept` of the work (the profile's sparse_gemm_efficiency prices both).
  SparseKernel sparse = SparseKernel::none;
  double kept = 1;
  bool grouped = false;  // one grouped GEMM over the local experts (priced apart from dense)
  // GEMMs that a chunk-by-chunk tensor-parallel collective overlaps run as this many
  // pieces along m, one after another, each a kernel of its own shape (Transformer
  // Engine's userbuffers); `dgrad_pieces` is the same for its backward's data gradient.
  double pieces = 1;
  double dgrad_pieces = 1;
  // The share of the layers of an averaged layer program that run this kernel (a
  // stack whose layers attend in a window or over the whole sequence: each kind's
  // attention at its share); its flops and bytes already count it, its fixed
  // per-kernel costs are paid that share of the time. 1: every layer runs it.
  double share = 1;
  // Kernels the framework issues for it, each paying the host's launch time
  // (DeviceProfile::host_launch_s): 1, a GEMM split in `pieces` that many, a
  // grouped GEMM one per local expert (Transformer Engine's GroupedLinear runs
  // a cuBLASLt GEMM per expert), an fp8 cast its quantization's kernels per
  // tensor it casts (fp8_quantize_kernels).
  double launches = 1;
};

// A GEMM op: 2*m*n*k FLOPs per batch entry; reads A and B, writes C in `elem` bytes each.
Op make_gemm(std::string_view name, double m, double n, double k, double batch, double elem_bytes,
             bool fp8);
// A memory-bound op that moves `bytes` and does `flops`.
Op make_elementwise(std::string_view name, double bytes, double flops = 0);
// The backward of a fused (FlashAttention-style) attention forward. The forward
// does 2 matrix products (Q K^T, P V); the backward recomputes Q K^T and does 4
// more (dV, dP, dQ, dK): 2.5x the forward's FLOPs, and twice its memory traffic.
Op attention_backward_of(const Op& forward);
// The family a memory-bound op's efficiency is looked up under: its kernel and
// direction ("norm.rms.bwd") when it names one, otherwise its name.
std::string kernel_family(const Op& op);
// The same written into `buffer` (a view of it, or of the op's name), for the
// analytic engine's pricing, which asks for it once per memory-bound op of every
// estimate; throws std::length_error when the family does not fit.
std::string_view kernel_family(const Op& op, std::span<char> buffer);

}  // namespace myriad::models
