// A job's per-rank traces and their manifest (sim/chakra/et_set.hpp).
#include "sim/chakra/et_set.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace myriad::sim::chakra {
namespace {

namespace fs = std::filesystem;

EtGraph rank_graph(int rank) {
  EtGraph g;
  g.version = "test";
  EtNode compute;
  compute.id = 0;
  compute.name = "gemm";
  compute.duration_micros = 100 + static_cast<std::uint64_t>(rank);
  EtNode reduce;
  reduce.id = 1;
  reduce.name = "all_reduce";
  reduce.type = EtNodeType::comm_coll;
  reduce.data_deps = {0};
  reduce.comm_type = EtCollective::all_reduce;
  reduce.comm_size = 1 << 20;
  reduce.pg_name = "dp";
  g.nodes = {compute, reduce};
  return g;
}

// A fresh folder per test.
fs::path folder(const std::string& name) {
  fs::path dir = fs::path(testing::TempDir()) / ("chakra_set_" + name);
  fs::remove_all(dir);
  return dir;
}

std::string read_error(const fs::path& path) {
  try {
    (void)read_et_set(path);
  } catch (const EtError& e) {
    return e.what();
  }
  return "(no error)";
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path) << text; }

TEST(ChakraSet, OneFilePerRankWithItsManifest) {
  const fs::path dir = folder("per_rank");
  const std::vector<EtGraph> graphs = {rank_graph(0), rank_graph(1), rank_graph(2)};
  const fs::path manifest = write_et_set(dir, "step", graphs);
  EXPECT_EQ(manifest, dir / "step.et.json");
  for (int r = 0; r < 3; ++r) EXPECT_TRUE(fs::exists(dir / ("step." + std::to_string(r) + ".et")));
  std::ifstream in(manifest);
  const auto json = nlohmann::json::parse(in);
  EXPECT_EQ(json["format"], "myriad-chakra-et-set");
  EXPECT_EQ(json["ranks"], 3);
  EXPECT_EQ(json["files"][2]["file"], "step.2.et");
  EXPECT_EQ(json["files"][2]["ranks"], nlohmann::json::array({2}));

  for (const fs::path& from : {dir, manifest}) {
    const EtSet set = read_et_set(from);
    EXPECT_EQ(set.name, "step");
    EXPECT_EQ(set.ranks, 3);
    ASSERT_EQ(set.files.size(), 3U);
    for (int r = 0; r < 3; ++r) {
      EXPECT_EQ(set.files[r].ranks, std::vector<int>{r});
      EXPECT_EQ(set.files[r].file, "step." + std::to_string(r) + ".et");
      EXPECT_EQ(set.files[r].graph, graphs[r]);
    }
  }
  // Without the manifest, the rank files alone.
  fs::remove(manifest);
  EXPECT_EQ(read_et_set(dir).files.at(2).graph, graphs[2]);
  // One file: a set of one, its rank from its name.
  const EtSet one = read_et_set(dir / "step.1.et");
  EXPECT_EQ(one.name, "step");
  EXPECT_EQ(one.ranks, 2);
  ASSERT_EQ(one.files.size(), 1U);
  EXPECT_EQ(one.files[0].ranks, std::vector<int>{1});
  EXPECT_EQ(one.files[0].graph, graphs[1]);
}

TEST(ChakraSet, OneFilePerClassOfRanks) {
  const fs::path dir = folder("classes");
  EtSet set{.name = "job", .ranks = 4, .files = {}};
  set.files.push_back({.ranks = {0, 2}, .graph = rank_graph(0), .file = {}});
  set.files.push_back({.ranks = {1, 3}, .graph = rank_graph(1), .file = {}});
  write_et_set(dir, set);
  EXPECT_TRUE(fs::exists(dir / "job.0.et"));
  EXPECT_TRUE(fs::exists(dir / "job.1.et"));
  EXPECT_FALSE(fs::exists(dir / "job.2.et"));
  EtSet read = read_et_set(dir);
  set.files[0].file = "job.0.et";
  set.files[1].file = "job.1.et";
  EXPECT_EQ(read, set);
}

TEST(ChakraSet, ClassesMustCoverEveryRankOnce) {
  const fs::path dir = folder("cover");
  EtSet set{.name = "job", .ranks = 3, .files = {}};
  set.files.push_back({.ranks = {0, 2}, .graph = rank_graph(0), .file = {}});
  EXPECT_THROW(write_et_set(dir, set), EtError);  // rank 1 in no file
  set.files.push_back({.ranks = {1, 2}, .graph = rank_graph(1), .file = {}});
  try {
    write_et_set(dir, set);
    ADD_FAILURE();
  } catch (const EtError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 2 is in files 0 and 1"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(write_et_set(dir, "../escape", {rank_graph(0)}), EtError);
  EXPECT_THROW(write_et_set(dir, "", {rank_graph(0)}), EtError);
  EXPECT_THROW(write_et_set(dir, "empty", std::vector<EtGraph>{}), EtError);
}

TEST(ChakraSet, ManifestErrors) {
  const fs::path dir = folder("manifest");
  write_et_set(dir, "step", {rank_graph(0), rank_graph(1)});
  const fs::path m = dir / "step.et.json";
  const std::string good =
      R"({"format": "myriad-chakra-et-set", "version": 1, "name": "step", "ranks": 2,
          "files": [{"file": "step.0.et", "ranks": [0]}, {"file": "step.1.et", "ranks": [1]}]})";
  const auto error_with = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    write_text(m, text);
    return read_error(m);
  };
  const std::string where = m.string();
  EXPECT_EQ(error_with("\"ranks\": 2", "\"ranks\": 2, \"extra\": 1"),
            where + ": unknown key \"extra\"");
  EXPECT_EQ(error_with("\"ranks\": [1]", "\"ranks\": [0]"), where + ": rank 0 is in files 0 and 1");
  EXPECT_EQ(error_with("\"ranks\": [1]", "\"ranks\": []"), where + ": file 1 stands for no rank");
  EXPECT_EQ(error_with("\"ranks\": 2", "\"ranks\": 3"), where + ": rank 2 is in no file");
  EXPECT_EQ(error_with("\"ranks\": 2", "\"ranks\": \"2\""),
            where + ": key \"ranks\": expected number-typed value, found string");
  EXPECT_EQ(
      error_with("step.1.et", "../step.1.et"),
      where +
          ": files[1]: file: \"../step.1.et\" is not a plain file name (no folders, not empty)");
  EXPECT_EQ(error_with("\"version\": 1", "\"version\": 2"),
            where + ": version 2 (this reader knows 1)");
  EXPECT_EQ(error_with("\"name\": \"step\", ", ""), where + ": missing key \"name\"");
  EXPECT_EQ(error_with("\"ranks\": [1]", "\"ranks\": [-1]"),
            where + ": files[1]: ranks: -1 is not in 0 .. 16777216");
  EXPECT_NE(error_with("{", "[").find(": not JSON: "), std::string::npos);
  // A trace the manifest names, missing: read_et's message.
  write_text(m, good);
  fs::remove(dir / "step.1.et");
  EXPECT_EQ(read_error(m), (dir / "step.1.et").string() + ": cannot open for reading");
}

TEST(ChakraSet, FolderErrors) {
  const fs::path dir = folder("folder");
  fs::create_directories(dir);
  EXPECT_EQ(read_error(dir),
            dir.string() + ": no manifest (*.et.json) and no trace named <name>.<rank>.et");
  EXPECT_EQ(read_error(dir / "nothing"), (dir / "nothing").string() + ": no such file or folder");
  write_et_set(dir, "a", {rank_graph(0), rank_graph(1), rank_graph(2)});
  fs::remove(dir / "a.et.json");
  fs::remove(dir / "a.1.et");
  EXPECT_EQ(read_error(dir),
            dir.string() + ": a.1.et is missing (rank files must run from 0 without gaps)");
  write_et_set(dir, "b", {rank_graph(0)});
  fs::remove(dir / "b.et.json");
  EXPECT_EQ(read_error(dir),
            dir.string() + ": traces of several sets (a, b): name one's manifest or file");
  write_et_set(dir, "c", {rank_graph(0)});
  write_et_set(dir, "d", {rank_graph(0)});
  EXPECT_EQ(read_error(dir),
            dir.string() + ": several manifests (c.et.json, d.et.json, ...): name one");
}

}  // namespace
}  // namespace myriad::sim::chakra
