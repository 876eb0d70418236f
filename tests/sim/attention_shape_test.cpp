// The attention kernel's rate by head dim and sequence (sim/cost/attention_shape.hpp)
// against the published FlashAttention-3 bars it was fitted to, and its direction
// where nothing was published: context-parallel steps, sliding windows, head dims
// between those measured, and profiles that give no shape.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "models/ops/op.hpp"
#include "myriad_source_paths.hpp"
#include "sim/cost/attention_shape.hpp"
#include "sim/cost/compute_cost.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim {
namespace {

using testing::a100;
using testing::h100;

models::Op attention(double head_dim, double seq, bool backward = false, double cp = 1,
                     double window = 0, bool causal = true) {
  models::Op op;
  op.cls = models::OpClass::attention;
  op.backward = backward;
  op.attention = {head_dim, seq, window, cp, causal};
  return op;
}

// TFLOP/s at the kernel's own clock (the bars were measured at it; training's
// sustained clock is priced apart).
double tflops(const models::Op& op, const DeviceProfile& p) {
  return attention_efficiency(op, p) * p.bf16_flops / 1e12;
}

// Expectation: each of the 35 published bars (FlashAttention-3 on H100, head dims 64
// and 128, 512 to 16k tokens, forward with and without the causal mask, backward)
// is within 12 % of the H100 profile's rate, and half of them within 3 %.
TEST(AttentionShape, ReproducesFlashAttention3OnH100) {
  const auto csv =
      std::filesystem::path(MYRIAD_PROFILE_DIR).parent_path() / "published" / "attention_h100.csv";
  std::ifstream in(csv);
  ASSERT_TRUE(in) << csv;
  std::string line;
  int rows = 0;
  int close = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#' || line.starts_with("direction")) continue;
    std::stringstream fields(line);
    std::string direction, head_dim, mask, seq, published;
    std::getline(fields, direction, ',');
    std::getline(fields, head_dim, ',');
    std::getline(fields, mask, ',');
    std::getline(fields, seq, ',');
    std::getline(fields, published, ',');
    const auto op =
        attention(std::stod(head_dim), std::stod(seq), direction == "bwd", 1, 0, mask == "causal");
    const double error = tflops(op, h100()) / std::stod(published) - 1;
    EXPECT_LT(std::fabs(error), 0.12) << line << ": model " << tflops(op, h100());
    close += std::fabs(error) < 0.03 ? 1 : 0;
    ++rows;
  }
  EXPECT_EQ(rows, 35);
  EXPECT_GE(close, rows / 2);
}

// Expectation: longer sequences and wider heads run faster, approaching the profile's
// long-sequence rate at head dim 128; the backward runs below the forward.
TEST(AttentionShape, LongerSequencesAndWiderHeadsRunFaster) {
  const DeviceProfile& p = h100();
  double before = 0;
  for (const double seq : {1024.0, 2048.0, 4096.0, 8192.0, 32768.0, 131072.0}) {
    const double e = attention_efficiency(attention(128, seq), p);
    EXPECT_GT(e, before) << seq;
    before = e;
  }
  EXPECT_NEAR(attention_efficiency(attention(128, 1 << 20), p), p.attention_fwd_efficiency, 0.002);
  EXPECT_LT(attention_efficiency(attention(64, 8192), p),
            attention_efficiency(attention(96, 8192), p));
  EXPECT_LT(attention_efficiency(attention(96, 8192), p),
            attention_efficiency(attention(192, 8192), p));
  EXPECT_LT(attention_efficiency(attention(128, 8192, true), p),
            attention_efficiency(attention(128, 8192), p));
}

// Expectation: ring attention over cp ranks pays each further step's row work
// again (slower than one rank with the same sequence, and slower with more
// ranks), and a sliding window runs about as a sequence of the window's length.
TEST(AttentionShape, RingStepsAndWindowsAsTheirTilesCost) {
  const DeviceProfile& p = h100();
  const double alone = attention_efficiency(attention(128, 8192), p);
  const double two = attention_efficiency(attention(128, 8192, false, 2), p);
  const double eight = attention_efficiency(attention(128, 8192, false, 8), p);
  EXPECT_LT(two, alone);
  EXPECT_LT(eight, two);
  // By hand for cp 2: 2,048.5 tiles of scores per rank (8,192 x 8,193 / 2 / 2 / 128^2)
  // against 32 rows of (row + diagonal + 0.5) tiles and 0.75 x 32 rows of row tiles.
  const double row = p.attention_fwd_row_tiles;
  const double needed = 8192.0 * 8193 / 2 / 2 / (128.0 * 128);
  const double extra = 32 * (row + p.attention_diagonal_tiles + 0.5) + 0.75 * 32 * row;
  EXPECT_NEAR(two, p.attention_fwd_efficiency * needed / (needed + extra), 1e-12);
  const double windowed = attention_efficiency(attention(128, 32768, false, 1, 4096), p);
  EXPECT_LT(windowed, attention_efficiency(attention(128, 32768), p));
  EXPECT_GT(windowed, attention_efficiency(attention(128, 4096), p));
}

// The H100 profile with `from` replaced by `to`, loaded: what the loader says, or ""
// when it accepts it.
std::string h100_refusal(const std::string& from, const std::string& to) {
  std::ifstream in(std::string(MYRIAD_PROFILE_DIR) + "/H100.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto at = text.find(from);
  if (at == std::string::npos) return "not in H100.json: " + from;
  text.replace(at, from.size(), to);
  const auto path = std::filesystem::temp_directory_path() / "myriad_attention_profile.json";
  std::ofstream(path) << text;
  std::string said;
  try {
    load_profile(path.string());
  } catch (const std::runtime_error& e) {
    said = e.what();
  }
  std::filesystem::remove(path);
  return said;
}

// Expectation: a profile without the shape parameters prices attention flat, as
// before; one with some of them is refused, naming those missing.
TEST(AttentionShape, FlatWithoutItsParametersAndAllOrNone) {
  EXPECT_FALSE(a100().attention_shape);
  EXPECT_DOUBLE_EQ(attention_efficiency(attention(64, 512), a100()),
                   a100().attention_fwd_efficiency);
  EXPECT_DOUBLE_EQ(attention_efficiency(attention(128, 8192, true), a100()),
                   a100().attention_bwd_efficiency);
  const std::string m = h100_refusal("\"attention_diagonal_tiles\"", "\"unused_here\"");
  EXPECT_NE(m.find("the attention shape parameters go together; missing "
                   "attention_diagonal_tiles"),
            std::string::npos)
      << m;
}

// Expectation: a profile whose attention efficiency would need the matrix products
// to run above the tensor cores' peak (efficiency above 1 - softmax share) is refused.
TEST(AttentionShape, TheProductsStayUnderThePeak) {
  const std::string m = h100_refusal("\"attention_fwd_softmax_share\": {\n      \"value\": 0.33",
                                     "\"attention_fwd_softmax_share\": {\n      \"value\": 0.5");
  EXPECT_NE(m.find("parameters.attention_fwd_efficiency: 0.67 is above 1 - "
                   "attention_fwd_softmax_share (0.5)"),
            std::string::npos)
      << m;
}

}  // namespace
}  // namespace myriad::sim
