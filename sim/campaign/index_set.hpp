// A set of small non-negative integers (node indices, job positions) that
// answers "the lowest member" by scanning 64 at a time: the campaign engine
// takes spares and fills empty positions lowest first, on jobs of 10^4-10^5
// nodes, at every restart.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace myriad::sim::campaign {

class IndexSet {
 public:
  explicit IndexSet(int size = 0) : words_((static_cast<std::size_t>(size) + 63) / 64, 0) {}
  void insert(int i) { words_[word(i)] |= bit(i); }
  void erase(int i) { words_[word(i)] &= ~bit(i); }
  [[nodiscard]] bool contains(int i) const { return (words_[word(i)] & bit(i)) != 0; }
  // The lowest member, -1 when empty.
  [[nodiscard]] int lowest() const {
    for (std::size_t w = 0; w < words_.size(); ++w) {
      if (words_[w] != 0) return static_cast<int>(w * 64 + std::countr_zero(words_[w]));
    }
    return -1;
  }

 private:
  static std::size_t word(int i) { return static_cast<std::size_t>(i) / 64; }
  static std::uint64_t bit(int i) { return std::uint64_t{1} << (static_cast<unsigned>(i) % 64); }
  std::vector<std::uint64_t> words_;
};

}  // namespace myriad::sim::campaign
