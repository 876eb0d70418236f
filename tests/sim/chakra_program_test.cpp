// A step program as Chakra execution traces and back (sim/chakra/program_trace.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>
#include <tuple>

#include "models/plan/rank_layout.hpp"
#include "models/scenario/loader.hpp"
#include "myriad_source_paths.hpp"
#include "sim/chakra/et_io.hpp"
#include "sim/chakra/program_trace.hpp"
#include "sim/cost/comm_cost.hpp"
#include "sim/program/evaluator.hpp"
#include "sim/program/step_program.hpp"
#include "tests/sim/chakra_samples.hpp"
#include "tests/sim/shipped.hpp"

namespace myriad::sim::chakra {
namespace {

StepProgram example_program(const std::string& overrides) {
  const auto s = models::scenario::load_scenario_text(
      "cluster: {preset: llama3-like, gpus: 64}\n"
      "model: {preset: llama3-8b, seq_length: 4096}\n"
      "parallelism: {tp: 8, sp: true, pp: 4, zero: 1, micro_batch: 1, global_batch: 32" +
          overrides + "}\noverlap: {dp: true}\n",
      "chakra.yaml", sim::testing::kShipped);
  return build_step_program(s, sim::testing::h100());
}

// One file a stage; every task a node, and a receive for every message; each send
// met by a receive of its source, destination, tag and size on the other side.
TEST(ChakraProgram, EveryTaskANodeEverySendItsReceive) {
  const StepProgram p = example_program(", virtual_stages: 2");
  const EtSet set = program_trace(p, "step");
  ASSERT_EQ(set.files.size(), 4U);
  EXPECT_EQ(set.ranks, 4);
  std::map<std::tuple<int, int, int>, std::int64_t> sent;
  std::map<std::tuple<int, int, int>, std::int64_t> received;
  for (std::size_t f = 0; f < set.files.size(); ++f) {
    std::size_t recvs = 0;
    std::size_t colls = 0;
    for (const EtNode& n : set.files[f].graph.nodes) {
      if (n.type == EtNodeType::comm_send)
        sent[{*n.comm_src, *n.comm_dst, *n.comm_tag}] = *n.comm_size;
      if (n.type == EtNodeType::comm_recv) {
        received[{*n.comm_src, *n.comm_dst, *n.comm_tag}] = *n.comm_size;
        ++recvs;
      }
      if (n.type == EtNodeType::comm_coll) {
        ++colls;
        EXPECT_EQ(n.pg_name, "dp");
        EXPECT_GT(*n.comm_size, 0);
      }
    }
    EXPECT_EQ(set.files[f].graph.nodes.size(), p.stages[f].tasks.size() + recvs);
    EXPECT_GT(colls, 0U);
  }
  EXPECT_EQ(sent, received);
  // a message a micro-batch and direction between consecutive chunks: 2 m (v p - 1)
  EXPECT_EQ(sent.size(), static_cast<std::size_t>(2 * p.m * (p.v * p.pp - 1)));
}

// Written, read and played again: the same step, and a file Myriad wrote
// rewrites byte for byte.
TEST(ChakraProgram, ARoundTripPlaysTheSameStep) {
  for (const std::string& o : {std::string(), std::string(", virtual_stages: 4")}) {
    const StepProgram p = example_program(o);
    const auto dir = std::filesystem::temp_directory_path() / "myriad-chakra-program-test";
    std::filesystem::remove_all(dir);
    const auto manifest = write_et_set(dir, program_trace(p, "step"));
    const EtSet back = read_et_set(manifest);
    const StepProgram q = program_from_trace(back);
    EXPECT_NEAR(evaluate_program(q).step_time_s, evaluate_program(p).step_time_s,
                1e-12 * evaluate_program(p).step_time_s)
        << o;
    std::filesystem::remove_all(dir);
  }
}

// Chakra's feeder test trace as a set of one file, its ctrl deps unchecked (parent
// operators, some outside the file).
EtSet feeder_trace() {
  EtReadOptions options;
  options.checks.ctrl_deps = false;
  EtSet set;
  set.name = "chakra";
  set.ranks = 1;
  set.files.push_back({{0},
                       read_et_bytes(testing::gunzip_file(testing::sample("feeder-chakra.0.et.gz")),
                                     "chakra.0.et", options),
                       "chakra.0.et"});
  return set;
}

// A real trace, Chakra's feeder test trace (a PyTorch training step's kernels and
// collectives, tests/data/chakra/README.md), plays as its traced durations and data
// deps say: no faster than its longest kernel, no slower than every node in turn.
TEST(ChakraProgram, ARealTracePlays) {
  const EtSet set = feeder_trace();
  const EtGraph& g = set.files[0].graph;
  const ProgramRun run = evaluate_program(program_from_trace(set));
  double total = 0;
  double longest = 0;
  for (const EtNode& n : g.nodes) {
    total += static_cast<double>(n.duration_micros) * 1e-6;
    longest = std::max(longest, static_cast<double>(n.duration_micros) * 1e-6);
  }
  EXPECT_GE(run.step_time_s, longest);
  EXPECT_LE(run.step_time_s, total * (1 + 1e-12));
  std::printf("traced %.6f s in all, longest %.6f s, played %.6f s\n", total, longest,
              run.step_time_s);
}

// Played on a scenario's cluster: every traced collective with a size takes the
// analytic engine's price for its kind and size over the scenario's group; compute
// (and the host-side c10d calls, which have no size) keeps its traced time.
TEST(ChakraProgram, OnAScenariosClusterCollectivesTakeItsPrices) {
  const EtSet set = feeder_trace();
  const auto s = models::scenario::load_scenario(
      std::string(MYRIAD_SCENARIO_DIR) + "/examples/llama3-405b-h100-16384-campaign.yaml",
      sim::testing::kShipped);
  const DeviceProfile profile = on_hardware(sim::testing::h100(), s.cluster.gpu);
  const TracePricing pricing{&s, &profile, models::GroupKind::dp};
  const StepProgram traced = program_from_trace(set);
  const StepProgram priced = program_from_trace(set, &pricing);
  const auto span = models::group_span(models::GroupKind::dp, s);
  // What the collectives and the compute should take, summed over the nodes (the
  // tasks come in dependency order, and many kernels share a name).
  double collectives = 0;
  double compute = 0;
  int sized = 0;
  for (const EtNode& n : set.files[0].graph.nodes) {
    const double traced_s = static_cast<double>(n.duration_micros) * 1e-6;
    if (n.type == EtNodeType::comm_coll && n.comm_size) {
      models::Collective c;
      c.kind = n.comm_type == EtCollective::broadcast ? models::CollectiveKind::broadcast
                                                      : models::CollectiveKind::all_reduce;
      c.group = models::GroupKind::dp;
      c.bytes = static_cast<double>(*n.comm_size);
      collectives += collective_cost(c, span, s.cluster, profile).time_s;
      ++sized;
    } else if (n.type == EtNodeType::comm_coll) {
      collectives += traced_s;
    } else {
      compute += traced_s;
    }
  }
  double got_collectives = 0;
  double got_compute = 0;
  for (const StepTask& t : priced.stages[0].tasks) {
    (t.kind == TaskKind::dp_collective ? got_collectives : got_compute) += t.seconds;
  }
  EXPECT_GT(sized, 0);
  EXPECT_NEAR(got_collectives, collectives, 1e-12 * collectives);
  EXPECT_NEAR(got_compute, compute, 1e-12 * compute);
  EXPECT_NE(evaluate_program(priced).step_time_s, evaluate_program(traced).step_time_s);
}

TEST(ChakraProgram, AReceiveNobodySendsIsAnError) {
  EtSet set;
  set.name = "lonely";
  set.ranks = 1;
  EtGraph g;
  EtNode recv;
  recv.id = 1;
  recv.type = EtNodeType::comm_recv;
  recv.comm_src = 0;
  recv.comm_dst = 0;
  recv.comm_tag = 7;
  EtNode work;
  work.id = 2;
  work.data_deps = {1};
  g.nodes = {recv, work};
  set.files.push_back({{0}, g, "lonely.0.et"});
  try {
    (void)program_from_trace(set);
    FAIL();
  } catch (const EtError& e) {
    EXPECT_NE(
        std::string(e.what()).find("lonely.0.et: node 0 (id 1): receives from rank 0 (tag 7)"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace myriad::sim::chakra
