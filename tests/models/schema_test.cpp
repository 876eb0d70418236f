#include "models/scenario/schema.hpp"

#include <gtest/gtest.h>

#include "models/scenario/scenario_schema.hpp"

namespace myriad::models::scenario {
namespace {

struct Toy {
  int n = 0;
  double bw = 0;
  bool on = false;
};

Schema<Toy> toy_schema() {
  Schema<Toy> s("a toy");
  s.integer("n", &Toy::n, {1, 10}, Default::required(), "a count")
      .quantity("bw", &Toy::bw, Dimension::bandwidth, Default::value("100Gbps"), "a bandwidth")
      .boolean("on", &Toy::on, Default::value("true"), "a switch");
  return s;
}

TEST(Schema, ParsesAppliesDefaultsAndRecordsOrigins) {
  Diagnostics d;
  const ConfigNode node = load_yaml_text("n: 3\n", "toy.yaml", d);
  Toy t;
  Origins origins;
  ParseContext ctx{d, origins, false};
  EXPECT_TRUE(toy_schema().parse(node, "toy", t, ctx));
  EXPECT_EQ(t.n, 3);
  EXPECT_EQ(t.bw, 12.5e9);
  EXPECT_TRUE(t.on);
  EXPECT_EQ(origins.at("toy.n").str(), "toy.yaml:1:4");
  EXPECT_EQ(origins.at("toy.bw").str(), "<default>");
}

TEST(Schema, ReportsEveryProblemNotJustTheFirst) {
  Diagnostics d;
  const ConfigNode node = load_yaml_text("n: 11\nbw: 3\nonn: true\n", "toy.yaml", d);
  Toy t;
  Origins origins;
  ParseContext ctx{d, origins, false};
  EXPECT_FALSE(toy_schema().parse(node, "toy", t, ctx));
  ASSERT_EQ(d.error_count(), 3) << d.str();
  EXPECT_NE(d.str().find("toy.yaml:3:1: error: toy.onn: unknown key (did you mean 'on'?)"),
            std::string::npos)
      << d.str();
  EXPECT_NE(d.str().find("toy.n: expected an integer in [1, 10], found 11"), std::string::npos);
  EXPECT_NE(d.str().find("toy.bw: '3' has no unit"), std::string::npos);
}

TEST(Schema, MissingRequiredKeyIsAnErrorUnlessPartial) {
  Diagnostics d;
  const ConfigNode empty = ConfigNode::map(Location{"toy.yaml", 1, 1});
  Toy t;
  Origins origins;
  ParseContext strict{d, origins, false};
  EXPECT_FALSE(toy_schema().parse(empty, "toy", t, strict));
  Diagnostics d2;
  ParseContext partial{d2, origins, true};
  EXPECT_TRUE(toy_schema().parse(empty, "toy", t, partial));
}

// Every default written in the schema parses with its own key's parser.
TEST(Schema, EveryShippedDefaultParses) {
  Diagnostics d;
  Origins origins;
  ParseContext ctx{d, origins, true};
  Scenario s;
  // One tier, so that the defaults of list items are exercised too.
  const ConfigNode root =
      load_yaml_text("cluster: {network: {tiers: [{radix: 4}]}}\n", "partial.yaml", d);
  scenario_schema().parse(root, "", s, ctx);
  EXPECT_FALSE(d.has_errors()) << d.str();
  EXPECT_EQ(s.cluster.network.tiers.at(0).oversubscription, 1);
  EXPECT_EQ(s.cluster.gpus_per_node, 8);
}

TEST(Schema, DocumentsEveryKeyWithTypeDefaultAndMeaning) {
  const SectionDoc root = scenario_doc();
  int keys = 0;
  std::function<void(const SectionDoc&)> visit = [&](const SectionDoc& s) {
    EXPECT_FALSE(s.help.empty()) << s.path;
    for (const auto& f : s.fields) {
      ++keys;
      EXPECT_FALSE(f.type.empty()) << s.path << "." << f.key;
      EXPECT_FALSE(f.default_text.empty()) << s.path << "." << f.key;
      EXPECT_FALSE(f.help.empty()) << s.path << "." << f.key;
    }
    for (const auto& sub : s.sections) visit(sub);
  };
  visit(root);
  EXPECT_GT(keys, 50);
}

}  // namespace
}  // namespace myriad::models::scenario
