#include "kernels/collectives/symbolic_buffer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>

namespace myriad::kernels::collectives {
namespace {

constexpr int kBits = 64;

std::uint64_t bit_of(int rank) { return std::uint64_t{1} << (rank % kBits); }

}  // namespace

SymbolicBuffer::SymbolicBuffer(int nchunks, int nranks)
    : words_((nranks + kBits - 1) / kBits),
      origins_(static_cast<std::size_t>(nchunks), -1),
      bits_(static_cast<std::size_t>(nchunks) * static_cast<std::size_t>(words_), 0) {}

std::span<const std::uint64_t> SymbolicBuffer::ranks(int chunk) const {
  return {bits_.data() + static_cast<std::ptrdiff_t>(chunk) * words_,
          static_cast<std::size_t>(words_)};
}

void SymbolicBuffer::set_single(int chunk, int origin, int rank) {
  const auto base = static_cast<std::size_t>(chunk) * static_cast<std::size_t>(words_);
  std::fill_n(bits_.begin() + static_cast<std::ptrdiff_t>(base), words_, 0);
  bits_[base + static_cast<std::size_t>(rank / kBits)] = bit_of(rank);
  origins_[static_cast<std::size_t>(chunk)] = origin;
}

void SymbolicBuffer::assign(int chunk, int origin, std::span<const std::uint64_t> ranks) {
  std::copy(ranks.begin(), ranks.end(),
            bits_.begin() + static_cast<std::ptrdiff_t>(chunk) * words_);
  origins_[static_cast<std::size_t>(chunk)] = origin;
}

void SymbolicBuffer::merge(int chunk, std::span<const std::uint64_t> ranks) {
  const auto base = static_cast<std::size_t>(chunk) * static_cast<std::size_t>(words_);
  for (std::size_t w = 0; w < ranks.size(); ++w) bits_[base + w] |= ranks[w];
}

int first_common(std::span<const std::uint64_t> a, std::span<const std::uint64_t> b) {
  for (std::size_t w = 0; w < a.size(); ++w) {
    const std::uint64_t both = a[w] & b[w];
    if (both != 0) return static_cast<int>(w) * kBits + std::countr_zero(both);
  }
  return -1;
}

int first_missing(std::span<const std::uint64_t> set, int nranks) {
  for (std::size_t w = 0; w < set.size(); ++w) {
    const std::uint64_t missing = ~set[w];
    if (missing == 0) continue;
    const int rank = static_cast<int>(w) * kBits + std::countr_zero(missing);
    return rank < nranks ? rank : -1;
  }
  return -1;
}

int count_ranks(std::span<const std::uint64_t> set) {
  int n = 0;
  for (const std::uint64_t word : set) n += std::popcount(word);
  return n;
}

bool is_only(std::span<const std::uint64_t> set, int rank) {
  for (std::size_t w = 0; w < set.size(); ++w) {
    const std::uint64_t want = static_cast<int>(w) == rank / kBits ? bit_of(rank) : 0;
    if (set[w] != want) return false;
  }
  return true;
}

std::string format_ranks(std::span<const std::uint64_t> set) {
  constexpr std::size_t kShown = 8;
  std::vector<int> shown;
  for (std::size_t w = 0; w < set.size() && shown.size() < kShown; ++w) {
    for (std::uint64_t word = set[w]; word != 0 && shown.size() < kShown; word &= word - 1) {
      shown.push_back(static_cast<int>(w) * kBits + std::countr_zero(word));
    }
  }
  const int total = count_ranks(set);
  if (total > static_cast<int>(kShown))
    return fmt::format("{{{}, ... ({} ranks)}}", fmt::join(shown, ", "), total);
  return fmt::format("{{{}}}", fmt::join(shown, ", "));
}

}  // namespace myriad::kernels::collectives
