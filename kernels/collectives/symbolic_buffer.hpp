// Used by the checker, not part of the public API: the symbolic contents of
// one rank's buffer. Each chunk holds either nothing yet, or a piece of the
// original data, named by its origin chunk, summed over a set of ranks'
// contributions (a bitset over ranks).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace myriad::kernels::collectives {

class SymbolicBuffer {
 public:
  SymbolicBuffer(int nchunks, int nranks);

  [[nodiscard]] int nchunks() const { return static_cast<int>(origins_.size()); }
  [[nodiscard]] int words() const { return words_; }
  [[nodiscard]] bool defined(int chunk) const { return origin(chunk) >= 0; }
  // The chunk of the original data this chunk holds; -1 when it holds nothing yet.
  [[nodiscard]] int origin(int chunk) const { return origins_[static_cast<std::size_t>(chunk)]; }
  [[nodiscard]] std::span<const std::uint64_t> ranks(int chunk) const;

  // Holds rank `rank`'s contribution to chunk `origin`, and nothing else.
  void set_single(int chunk, int origin, int rank);
  void assign(int chunk, int origin, std::span<const std::uint64_t> ranks);
  void merge(int chunk, std::span<const std::uint64_t> ranks);

 private:
  int words_;
  std::vector<int> origins_;
  std::vector<std::uint64_t> bits_;  // nchunks * words
};

// The lowest rank in both sets, or -1 when they are disjoint.
int first_common(std::span<const std::uint64_t> a, std::span<const std::uint64_t> b);
// The lowest rank below nranks missing from the set, or -1 when none is.
int first_missing(std::span<const std::uint64_t> set, int nranks);
int count_ranks(std::span<const std::uint64_t> set);
// Whether the set is exactly {rank}.
bool is_only(std::span<const std::uint64_t> set, int rank);
// "{0, 1, 5}", or "{0, 1, 2, 3, 4, 5, 6, 7, ... (12 ranks)}" past eight.
std::string format_ranks(std::span<const std::uint64_t> set);

}  // namespace myriad::kernels::collectives
