// How one rank's buffer is cut into chunks, the unit a collective schedule
// moves. Either an even split (sizes differ by at most one element, the
// larger chunks first) or explicit sizes (the blocks of an all-to-all-v).
// Offsets and sizes are exact byte counts: the chunks always add up to the
// buffer, whatever the divisibility.
#pragma once

#include <cstdint>
#include <vector>

namespace myriad::kernels::collectives {

class ChunkLayout {
 public:
  ChunkLayout() = default;
  // `bytes` as `nchunks` chunks of whole elements of `elem_bytes` bytes.
  // Throws std::invalid_argument unless bytes >= 0, nchunks >= 1, elem_bytes >= 1
  // and bytes is a whole number of elements.
  static ChunkLayout even(std::int64_t bytes, int nchunks, int elem_bytes = 1);
  // One chunk per size, in order; every size a whole number of elements.
  static ChunkLayout from_sizes(const std::vector<std::int64_t>& sizes, int elem_bytes = 1);

  [[nodiscard]] int nchunks() const { return nchunks_; }
  [[nodiscard]] std::int64_t bytes() const { return bytes_; }
  [[nodiscard]] int elem_bytes() const { return elem_bytes_; }
  // Byte offset of `chunk`'s start, for chunk in [0, nchunks]; offset(nchunks) == bytes().
  [[nodiscard]] std::int64_t offset(int chunk) const;
  [[nodiscard]] std::int64_t size(int chunk) const { return offset(chunk + 1) - offset(chunk); }
  // Bytes of the chunks [first, first + count).
  [[nodiscard]] std::int64_t range_bytes(int first, int count) const {
    return offset(first + count) - offset(first);
  }
  // Whether [first, first + count) is a non-empty range of this layout's chunks.
  [[nodiscard]] bool contains(int first, int count) const {
    return first >= 0 && count >= 1 && first <= nchunks_ - count;
  }

 private:
  std::int64_t bytes_ = 0;
  int nchunks_ = 0;
  int elem_bytes_ = 1;
  // Even split: each chunk holds base_ elements, the first rem_ one more.
  std::int64_t base_ = 0;
  std::int64_t rem_ = 0;
  std::vector<std::int64_t> offsets_;  // nchunks + 1 entries for explicit sizes, empty when even
};

}  // namespace myriad::kernels::collectives
