#include "models/plan/chunk_grid.hpp"

#include <gtest/gtest.h>

namespace myriad::models {
namespace {

// Rows are stages, each of `chunks` counts, written and read in place.
TEST(ChunkGrid, HoldsACountPerStageAndChunk) {
  ChunkGrid g(3, 2, 7);
  EXPECT_EQ(g.size(), 3U);
  EXPECT_EQ(g.chunks(), 2U);
  EXPECT_EQ(g[2][1], 7);
  g[1][0] = 4;
  g[2][1] += 1;
  EXPECT_EQ(g[1][0], 4);
  EXPECT_EQ(g[1][1], 7);
  EXPECT_EQ(g[2][1], 8);
  EXPECT_EQ(g[1].size(), 2U);
  EXPECT_EQ(g, (ChunkGrid{{7, 7}, {4, 7}, {7, 8}}));
  EXPECT_NE(g, (ChunkGrid{{7, 7}, {4, 7}, {7, 7}}));
}

TEST(ChunkGrid, EmptyHasNoStages) {
  const ChunkGrid g;
  EXPECT_TRUE(g.empty());
  EXPECT_EQ(g.size(), 0U);
  EXPECT_FALSE((ChunkGrid{{0}}).empty());
}

}  // namespace
}  // namespace myriad::models
