#include "models/scenario/config_tree.hpp"

#include <gtest/gtest.h>

#include <string>

namespace myriad::models::scenario {
namespace {

TEST(ConfigTree, RemembersWhereKeysAndValuesAre) {
  Diagnostics d;
  const ConfigNode root = load_yaml_text("a:\n  b: 3\n  c: [1, 2]\n", "t.yaml", d);
  ASSERT_FALSE(d.has_errors()) << d.str();
  const auto* a = root.find_entry("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->key_where.str(), "t.yaml:1:1");
  const ConfigNode* b = a->value.find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->text(), "3");
  EXPECT_EQ(b->where().str(), "t.yaml:2:6");
  EXPECT_EQ(a->value.find("c")->items().size(), 2u);
}

TEST(ConfigTree, DuplicateKeysAreErrorsWithBothLines) {
  Diagnostics d;
  load_yaml_text("s:\n  x: 1\n  x: 2\n", "t.yaml", d);
  ASSERT_EQ(d.error_count(), 1);
  EXPECT_EQ(d.all()[0].str(), "t.yaml:3:3: error: s.x: duplicate key; first given at line 2");
}

TEST(ConfigTree, SyntaxErrorsAreLocated) {
  Diagnostics d;
  const ConfigNode root = load_yaml_text("a: [1,\nb: 2\n", "t.yaml", d);
  ASSERT_TRUE(d.has_errors());
  EXPECT_TRUE(root.is_null());
  EXPECT_GT(d.all()[0].where.line, 0);
  EXPECT_NE(d.all()[0].message.find("YAML syntax error"), std::string::npos);
}

TEST(ConfigTree, MissingFileIsReported) {
  Diagnostics d;
  load_yaml_file("/nonexistent/x.yaml", d);
  ASSERT_EQ(d.error_count(), 1);
  EXPECT_NE(d.str().find("cannot read scenario: No such file or directory"), std::string::npos)
      << d.str();
}

TEST(ConfigTree, MergeLaysOverKeysOnBaseRecursively) {
  Diagnostics d;
  const ConfigNode base = load_yaml_text("a: 1\nm: {x: 1, y: 2}\nl: [1, 2]\n", "base", d);
  const ConfigNode over = load_yaml_text("m: {y: 3, z: 4}\nl: [9]\nb: 5\n", "over", d);
  ASSERT_FALSE(d.has_errors());
  const ConfigNode merged = merge(base, over);
  EXPECT_EQ(merged.find("a")->text(), "1");
  EXPECT_EQ(merged.find("m")->find("x")->text(), "1");
  EXPECT_EQ(merged.find("m")->find("y")->text(), "3");
  EXPECT_EQ(merged.find("m")->find("y")->where().file, "over");
  EXPECT_EQ(merged.find("m")->find("z")->text(), "4");
  ASSERT_EQ(merged.find("l")->items().size(), 1u);  // lists are replaced, not merged
  EXPECT_EQ(merged.find("b")->text(), "5");
}

TEST(ConfigTree, ANestedMapNamingAPresetReplacesWhatItLiesOn) {
  Diagnostics d;
  const ConfigNode base = load_yaml_text("gpu: {preset: A, hbm: 1}\n", "base", d);
  const ConfigNode over = load_yaml_text("gpu: {preset: B}\n", "over", d);
  const ConfigNode merged = merge(base, over);
  EXPECT_EQ(merged.find("gpu")->find("preset")->text(), "B");
  EXPECT_EQ(merged.find("gpu")->find("hbm"), nullptr);
}

// Expectation: a list past kMaxYamlValues is refused alike written block-style or
// flow-style, at the same value with the same message, before a tree is built
// (nothing returned): yaml-cpp built the whole tree first, 3.9 GB for a 16 MiB
// flow list of zeros, 2.7 GB block-style.
TEST(ConfigTree, ListsPastTheValueLimitAreRefusedAlikeBeforeTheTreeIsBuilt) {
  const std::size_t n = kMaxYamlValues + 1000;
  std::string flow = "x: [0";
  std::string block = "x:\n";
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) flow += ",0";
    block += "- 0\n";
  }
  flow += "]\n";
  for (const std::string& text : {flow, block}) {
    Diagnostics d;
    const ConfigNode root = load_yaml_text(text, "t.yaml", d);
    ASSERT_EQ(d.error_count(), 1) << d.str();
    // The root mapping and the list are values 1 and 2: the limit falls on item N - 2.
    EXPECT_EQ(d.all()[0].key, "x[" + std::to_string(kMaxYamlValues - 2) + "]");
    EXPECT_NE(d.all()[0].message.find("more than 200000 values"), std::string::npos) << d.str();
    EXPECT_TRUE(root.is_null());
  }
}

// Expectation: flow brackets nested a million deep are refused at the depth limit
// with its path, as 70 are (tests/scenarios/malformed/deep-nesting.yaml); yaml-cpp's
// scanner read all of them first and gave up with "bad file" (8 million: 2.4 GB).
TEST(ConfigTree, DeepFlowNestingIsRefusedAtTheDepthLimit) {
  const std::size_t deep = 1000000;
  const std::string text = "a: 'not [ counted' # nor [ this\nx: " + std::string(deep, '[') +
                           std::string(deep, ']') + "\n";
  Diagnostics d;
  const ConfigNode root = load_yaml_text(text, "t.yaml", d);
  ASSERT_EQ(d.error_count(), 1) << d.str().substr(0, 500);
  EXPECT_EQ(d.all()[0].message, "nested deeper than 64 levels");
  EXPECT_EQ(d.all()[0].where.str(), "t.yaml:2:67");
  EXPECT_TRUE(root.is_null());
}

}  // namespace
}  // namespace myriad::models::scenario
