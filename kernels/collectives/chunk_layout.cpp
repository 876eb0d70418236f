#include "kernels/collectives/chunk_layout.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace myriad::kernels::collectives {
namespace {

void require_elements(std::int64_t bytes, int elem_bytes, const char* what) {
  if (elem_bytes < 1) {
    throw std::invalid_argument(
        fmt::format("ChunkLayout: elem_bytes must be at least 1, got {}", elem_bytes));
  }
  if (bytes < 0) {
    throw std::invalid_argument(fmt::format("ChunkLayout: {} must be >= 0, got {}", what, bytes));
  }
  if (bytes % elem_bytes != 0) {
    throw std::invalid_argument(fmt::format(
        "ChunkLayout: {} ({}) is not a whole number of {}-byte elements", what, bytes, elem_bytes));
  }
}

}  // namespace

ChunkLayout ChunkLayout::even(std::int64_t bytes, int nchunks, int elem_bytes) {
  require_elements(bytes, elem_bytes, "bytes");
  if (nchunks < 1) {
    throw std::invalid_argument(
        fmt::format("ChunkLayout: nchunks must be at least 1, got {}", nchunks));
  }
  ChunkLayout layout;
  layout.bytes_ = bytes;
  layout.nchunks_ = nchunks;
  layout.elem_bytes_ = elem_bytes;
  layout.base_ = bytes / elem_bytes / nchunks;
  layout.rem_ = bytes / elem_bytes % nchunks;
  return layout;
}

ChunkLayout ChunkLayout::from_sizes(const std::vector<std::int64_t>& sizes, int elem_bytes) {
  if (sizes.empty()) throw std::invalid_argument("ChunkLayout: no chunk sizes");
  ChunkLayout layout;
  layout.elem_bytes_ = elem_bytes;
  layout.nchunks_ = static_cast<int>(sizes.size());
  layout.offsets_.reserve(sizes.size() + 1);
  layout.offsets_.push_back(0);
  for (const std::int64_t size : sizes) {
    require_elements(size, elem_bytes, "a chunk size");
    layout.offsets_.push_back(layout.offsets_.back() + size);
  }
  layout.bytes_ = layout.offsets_.back();
  return layout;
}

std::int64_t ChunkLayout::offset(int chunk) const {
  if (!offsets_.empty()) return offsets_[static_cast<std::size_t>(chunk)];
  const std::int64_t c = chunk;
  return (c * base_ + std::min(c, rem_)) * elem_bytes_;
}

}  // namespace myriad::kernels::collectives
