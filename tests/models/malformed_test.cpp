// The malformed corpus: each file under tests/scenarios/malformed/ must be
// rejected, and each of its "# expect: " lines must be among the problems
// reported, with its location (basename:line:column), key and message.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"

namespace myriad::models::scenario {
namespace {

const std::string kCorpus = std::string(MYRIAD_TEST_DATA_DIR) + "/malformed";

std::vector<std::string> expectations(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::vector<std::string> out;
  std::string line;
  const std::string tag = "# expect: ";
  while (std::getline(in, line)) {
    if (line.rfind(tag, 0) == 0) out.push_back(line.substr(tag.size()));
  }
  return out;
}

std::string with_basename(const Diagnostic& d) {
  Diagnostic copy = d;
  copy.where.file = std::filesystem::path(d.where.file).filename().string();
  return copy.str();
}

class Malformed : public testing::TestWithParam<std::string> {};

TEST_P(Malformed, IsRejectedWithLocatedMessages) {
  const std::filesystem::path file = std::filesystem::path(kCorpus) / GetParam();
  const auto expected = expectations(file);
  ASSERT_FALSE(expected.empty()) << file << " has no '# expect: ' line";
  const LoadOptions options{{std::string(MYRIAD_TEST_DATA_DIR) + "/presets", MYRIAD_SCENARIO_DIR}};
  try {
    load_scenario(file.string(), options);
    FAIL() << file << " was accepted";
  } catch (const ScenarioError& e) {
    std::vector<std::string> got;
    for (const auto& d : e.diagnostics().all()) got.push_back(with_basename(d));
    for (const auto& want : expected) {
      EXPECT_NE(std::find(got.begin(), got.end(), want), got.end())
          << "expected: " << want << "\nreported:\n"
          << e.what();
    }
  }
}

std::vector<std::string> corpus() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(kCorpus)) {
    if (e.path().extension() == ".yaml") names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Corpus, Malformed, testing::ValuesIn(corpus()),
                         [](const testing::TestParamInfo<std::string>& param) {
                           std::string name = param.param.substr(0, param.param.size() - 5);
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

TEST(MalformedCorpus, HasAtLeastThirtyDistinctCases) { EXPECT_GE(corpus().size(), 30u); }

}  // namespace
}  // namespace myriad::models::scenario
