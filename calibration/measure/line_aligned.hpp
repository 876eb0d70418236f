// Buffers on cache-line boundaries for the CPU kernels the calibration times: a
// kernel's vector loads then never straddle two lines. With malloc's 16-byte
// alignment, where a buffer began depended on what the process had allocated
// before, and the 1024^3 ceiling GEMM ran 1.4x slower from one build to the next
// (2026-12-06: 67 against 48 ms), which moved every fitted rate.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace myriad::calibration {

template <typename T>
struct LineAligned {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  LineAligned() = default;
  template <typename U>
  explicit LineAligned(const LineAligned<U>& /*other*/) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t /*n*/) { ::operator delete(p, kAlign); }
  friend bool operator==(const LineAligned&, const LineAligned&) { return true; }
};

// A kernel's fp32 buffer.
using LineAlignedFloats = std::vector<float, LineAligned<float>>;

}  // namespace myriad::calibration
