#include "models/scenario/units.hpp"

#include <gtest/gtest.h>

namespace myriad::models::scenario {
namespace {

double parse_ok(const std::string& text, Dimension d) {
  auto r = parse_quantity(text, d);
  EXPECT_TRUE(std::holds_alternative<double>(r))
      << text << ": " << std::get<ParseFailure>(r).message;
  return std::holds_alternative<double>(r) ? std::get<double>(r) : -1;
}

std::string parse_error(const std::string& text, Dimension d) {
  auto r = parse_quantity(text, d);
  EXPECT_TRUE(std::holds_alternative<ParseFailure>(r)) << text << " was accepted";
  return std::holds_alternative<ParseFailure>(r) ? std::get<ParseFailure>(r).message : "";
}

TEST(Units, BandwidthInBitsAndBytes) {
  EXPECT_EQ(parse_ok("400Gbps", Dimension::bandwidth), 50e9);
  EXPECT_EQ(parse_ok("200 Gbps", Dimension::bandwidth), 25e9);
  EXPECT_EQ(parse_ok("50GB/s", Dimension::bandwidth), 50e9);
  EXPECT_EQ(parse_ok("1GiB/s", Dimension::bandwidth), 1073741824.0);
  EXPECT_EQ(parse_ok("1.6Tbps", Dimension::bandwidth), 200e9);
}

TEST(Units, DecimalPrefixesAreExact) {
  // 2.039 * 1e12 in floating point is 2039000000000.0002; the parser must not be.
  EXPECT_EQ(parse_ok("2.039TB/s", Dimension::bandwidth), 2.039e12);
  EXPECT_EQ(parse_ok("600ns", Dimension::time), 6e-7);
  EXPECT_EQ(parse_ok("3.35TB/s", Dimension::bandwidth), 3.35e12);
  EXPECT_EQ(parse_ok("1.5e3GB", Dimension::bytes), 1.5e12);
}

TEST(Units, SizesTimesAndRates) {
  EXPECT_EQ(parse_ok("80GiB", Dimension::bytes), 80.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(parse_ok("80GB", Dimension::bytes), 80e9);
  EXPECT_EQ(parse_ok("2us", Dimension::time), 2e-6);
  EXPECT_EQ(parse_ok("10min", Dimension::time), 600);
  EXPECT_EQ(parse_ok("2d", Dimension::time), 172800);
  EXPECT_EQ(parse_ok("312TFLOPS", Dimension::flop_rate), 312e12);
  EXPECT_EQ(parse_ok("989 TFLOP/s", Dimension::flop_rate), 989e12);
  EXPECT_EQ(parse_ok("300B", Dimension::count), 300e9);
  EXPECT_EQ(parse_ok("15T", Dimension::count), 15e12);
  EXPECT_EQ(parse_ok("1e6", Dimension::count), 1e6);
}

TEST(Units, RatiosAndFractions) {
  EXPECT_EQ(parse_ok("1:1", Dimension::ratio), 1);
  EXPECT_EQ(parse_ok("1:7", Dimension::ratio), 7);
  EXPECT_EQ(parse_ok("7:1", Dimension::ratio), 7);
  EXPECT_EQ(parse_ok("3", Dimension::ratio), 3);
  EXPECT_EQ(parse_ok("90%", Dimension::fraction), 0.9);
  EXPECT_EQ(parse_ok("0.25", Dimension::fraction), 0.25);
}

TEST(Units, RejectionsSayWhatWasExpected) {
  EXPECT_NE(parse_error("200", Dimension::bandwidth).find("has no unit"), std::string::npos);
  const std::string unknown = parse_error("200Gbit", Dimension::bandwidth);
  EXPECT_NE(unknown.find("unknown unit 'Gbit'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("Gbps"), std::string::npos) << unknown;
  EXPECT_NE(parse_error("fast", Dimension::time).find("expected a duration"), std::string::npos);
  EXPECT_NE(parse_error("-5GB", Dimension::bytes).find("non-negative"), std::string::npos);
  parse_error("", Dimension::time);
  parse_error("0:1", Dimension::ratio);
  parse_error("0.5", Dimension::ratio);
  parse_error("1:x", Dimension::ratio);
  parse_error("150%", Dimension::fraction);
  parse_error("inf", Dimension::count);
  parse_error("nanGB", Dimension::bytes);
  parse_error("1e400GB", Dimension::bytes);
}

// Expectation: every accepted quantity is finite and within the magnitudes the
// engines compute with (inputs found by fuzz_units; fuzz/corpus/fuzz_units).
TEST(Units, ExtremesAreRefusedNotOverflowed) {
  parse_error("1.7e308d", Dimension::time);         // a duration of infinity seconds
  parse_error("4:4e-324", Dimension::ratio);        // a ratio of infinity
  parse_error("00e2147483647k", Dimension::count);  // the exponent overflowed an int
  parse_error("1e-2147483648k", Dimension::count);
  parse_error("1e-320Gbps", Dimension::bandwidth);  // a denormal rate
  parse_error("1e20TB/s", Dimension::bandwidth);
  EXPECT_NE(parse_error("1e-320Gbps", Dimension::bandwidth).find("between 1000B/s and 1e+16B/s"),
            std::string::npos);
  EXPECT_EQ(parse_ok("0Gbps", Dimension::bandwidth), 0);  // zero is checked where it matters
}

TEST(Units, ExactFormatRoundTrips) {
  const struct {
    double value;
    Dimension d;
  } cases[] = {{25e9, Dimension::bandwidth},   {2.039e12, Dimension::bandwidth},
               {6e-7, Dimension::time},        {80e9, Dimension::bytes},
               {312e12, Dimension::flop_rate}, {7, Dimension::ratio},
               {300e9, Dimension::count},      {0.125, Dimension::fraction}};
  for (const auto& c : cases) {
    const std::string text = format_exact(c.value, c.d);
    EXPECT_EQ(parse_ok(text, c.d), c.value) << text;
  }
}

TEST(Units, HumanFormPicksAPrefix) {
  EXPECT_EQ(format_human(25e9, Dimension::bandwidth), "25 GB/s = 200 Gbps");
  EXPECT_EQ(format_human(6e-7, Dimension::time), "600 ns");
  EXPECT_EQ(format_human(80.0 * 1024 * 1024 * 1024, Dimension::bytes), "80 GiB");
  EXPECT_EQ(format_human(300e9, Dimension::count), "300 billion");
  EXPECT_EQ(format_human(312e12, Dimension::flop_rate), "312 TFLOP/s");
}

}  // namespace
}  // namespace myriad::models::scenario
