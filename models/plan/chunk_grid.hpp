// A count per pipeline stage and chunk (layers, dense layers, recomputed ones),
// held as one flat array, stage by stage: a plan builds four of them for every
// estimate, and a vector of vectors cost an allocation a stage.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <span>
#include <vector>

namespace myriad::models {

class ChunkGrid {
 public:
  ChunkGrid() = default;
  ChunkGrid(std::size_t stages, std::size_t chunks, int value = 0)
      : chunks_(chunks), values_(stages * chunks, value) {}
  // Row by row, each of the same length: {{4, 4}, {4, 3}}.
  ChunkGrid(std::initializer_list<std::initializer_list<int>> rows)
      : chunks_(rows.size() > 0 ? rows.begin()->size() : 0) {
    values_.reserve(rows.size() * chunks_);
    for (const auto& row : rows) values_.insert(values_.end(), row.begin(), row.end());
  }

  // Stage `stage`'s chunks.
  std::span<int> operator[](std::size_t stage) {
    return {values_.data() + stage * chunks_, chunks_};
  }
  std::span<const int> operator[](std::size_t stage) const {
    return {values_.data() + stage * chunks_, chunks_};
  }
  [[nodiscard]] std::size_t size() const {  // stages
    return chunks_ > 0 ? values_.size() / chunks_ : 0;
  }
  [[nodiscard]] std::size_t chunks() const { return chunks_; }
  [[nodiscard]] bool empty() const { return values_.empty(); }
  friend bool operator==(const ChunkGrid&, const ChunkGrid&) = default;

 private:
  std::size_t chunks_ = 0;
  std::vector<int> values_;
};

}  // namespace myriad::models
