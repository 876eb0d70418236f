#include "kernels/collectives/alltoall.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/collectives/schedule_builder.hpp"

namespace myriad::kernels::collectives {
namespace {

using Matrix = std::vector<std::vector<std::int64_t>>;

// Rank r's layout: row r of the matrix (what it sends), then column r (what it receives).
std::vector<ChunkLayout> pair_layouts(const Matrix& matrix, int elem_bytes) {
  const std::size_t n = matrix.size();
  std::vector<ChunkLayout> layouts;
  layouts.reserve(n);
  for (std::size_t r = 0; r < n; ++r) {
    std::vector<std::int64_t> sizes = matrix[r];
    for (std::size_t i = 0; i < n; ++i) sizes.push_back(matrix[i][r]);
    layouts.push_back(ChunkLayout::from_sizes(sizes, elem_bytes));
  }
  return layouts;
}

// The pairwise exchange over any layouts; `block(i, j)` gives the bytes from i to j.
template <typename Block>
Schedule pairwise_exchange(const CollectiveSpec& spec, std::vector<ChunkLayout> layouts,
                           Block block) {
  const int n = spec.nranks;
  ScheduleBuilder builder(spec, std::move(layouts));
  for (int r = 0; r < n; ++r) {
    if (block(r, r) > 0) builder.copy(r, r, {n + r, 1});
    for (int k = 1; k < n; ++k) {
      const int to = (r + k) % n;
      const int from = (r - k + n) % n;
      if (block(r, to) > 0) builder.send(r, to, {to, 1});
      if (block(from, r) > 0) builder.recv(r, from, {n + from, 1});
    }
  }
  return std::move(builder).finish();
}

void require_matrix(const Matrix& matrix, int elem_bytes) {
  constexpr std::string_view kName = "make_alltoallv";
  if (matrix.empty()) throw std::invalid_argument("make_alltoallv: the matrix has no rows");
  for (std::size_t i = 0; i < matrix.size(); ++i) {
    if (matrix[i].size() != matrix.size()) {
      throw std::invalid_argument(
          fmt::format("{}: row {} has {} entries; a square matrix of {} rows needs {}", kName, i,
                      matrix[i].size(), matrix.size(), matrix.size()));
    }
    for (std::size_t j = 0; j < matrix.size(); ++j) {
      require_bytes(fmt::format("{}: matrix[{}][{}]", kName, i, j), matrix[i][j], elem_bytes);
    }
  }
}

}  // namespace

Schedule make_alltoall(int nranks, std::int64_t bytes_per_pair, int elem_bytes) {
  constexpr std::string_view kName = "make_alltoall";
  require_ranks(kName, nranks);
  require_bytes(kName, bytes_per_pair, elem_bytes);
  CollectiveSpec spec;
  spec.kind = CollectiveKind::all_to_all;
  spec.algorithm = CollectiveAlgorithm::pairwise;
  spec.nranks = nranks;
  spec.bytes = bytes_per_pair * nranks;
  spec.elem_bytes = elem_bytes;
  const int nchunks = checked_chunks(kName, 2, nranks);
  // Every rank's layout is the same: 2n blocks of bytes_per_pair.
  std::vector<ChunkLayout> layouts{
      ChunkLayout::even(bytes_per_pair * nchunks, nchunks, elem_bytes)};
  return pairwise_exchange(spec, std::move(layouts),
                           [bytes_per_pair](int, int) { return bytes_per_pair; });
}

Schedule make_alltoallv(const Matrix& matrix, int elem_bytes) {
  require_matrix(matrix, elem_bytes);
  const int n = static_cast<int>(matrix.size());
  checked_chunks("make_alltoallv", 2, n);
  CollectiveSpec spec;
  spec.kind = CollectiveKind::all_to_all;
  spec.algorithm = CollectiveAlgorithm::pairwise;
  spec.nranks = n;
  spec.elem_bytes = elem_bytes;
  for (const auto& row : matrix) {
    std::int64_t sent = 0;
    for (const std::int64_t b : row) sent += b;
    spec.bytes = std::max(spec.bytes, sent);
  }
  return pairwise_exchange(spec, pair_layouts(matrix, elem_bytes), [&matrix](int i, int j) {
    return matrix[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)];
  });
}

}  // namespace myriad::kernels::collectives
