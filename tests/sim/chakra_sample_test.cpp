// Real Chakra traces (tests/data/chakra/README.md: where each comes from and how the
// facts below were found, with Chakra's own Python decoder, apart from this reader).
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "myriad_source_paths.hpp"
#include "sim/chakra/et_graph.hpp"
#include "sim/chakra/et_io.hpp"
#include "tests/sim/chakra_samples.hpp"

namespace myriad::sim::chakra {
namespace {

using testing::gunzip_file;
using testing::sample;

std::map<EtNodeType, int> type_counts(const EtGraph& g) {
  std::map<EtNodeType, int> counts;
  for (const EtNode& n : g.nodes) ++counts[n.type];
  return counts;
}

std::size_t dep_count(const EtGraph& g, std::vector<std::uint64_t> EtNode::*deps) {
  return std::accumulate(g.nodes.begin(), g.nodes.end(), std::size_t{0},
                         [&](std::size_t s, const EtNode& n) { return s + (n.*deps).size(); });
}

std::string written(const EtGraph& g, const EtGraphChecks& checks = {}) {
  std::ostringstream out;
  write_et(g, out, "rewritten.et", checks);
  return out.str();
}

// Chakra's PyTorch converter's output on Chakra's own PyTorch sample: it meets the
// strict checks.
TEST(ChakraSample, ConverterOutputReadsWithEveryCheck) {
  const EtGraph g = read_et_file(sample("pytorch-1.0.2-chakra.0.0.4.et"));
  ASSERT_EQ(g.nodes.size(), 262U);
  EXPECT_EQ(type_counts(g),
            (std::map<EtNodeType, int>{{EtNodeType::metadata, 1}, {EtNodeType::comp, 261}}));
  EXPECT_EQ(dep_count(g, &EtNode::ctrl_deps), 91U);
  EXPECT_EQ(dep_count(g, &EtNode::data_deps), 261U);
  EXPECT_EQ(g.version, "");
  ASSERT_EQ(g.metadata.size(), 5U);
  EXPECT_EQ(g.metadata[0], string_attr("schema", "1.0.2-chakra.0.0.4"));
  EXPECT_EQ(g.metadata[1], uint64_attr("pid", 788625));
  EXPECT_EQ(g.metadata[3], uint64_attr("start_ts", 350785410));

  const EtNode& first = g.nodes[0];
  EXPECT_EQ(first.id, 2U);
  EXPECT_EQ(first.name, "[pytorch|profiler|execution_trace|thread]");
  EXPECT_EQ(first.type, EtNodeType::comp);
  EXPECT_TRUE(first.ctrl_deps.empty());
  EXPECT_EQ(first.is_cpu_op, true);
  EXPECT_TRUE(first.inputs.has_value());
  // rf_id, fw_parent, seq_id, scope, tid, fw_tid, op_schema, stream: kept, in order.
  ASSERT_EQ(first.attrs.size(), 8U);
  EXPECT_EQ(first.attrs[2], int64_attr("seq_id", -1));
  EXPECT_EQ(first.attrs[3], int64_attr("scope", 7));
  EXPECT_EQ(first.attrs[7], int64_attr("stream", 0));

  const EtNode& init = g.nodes[1];
  EXPECT_EQ(init.id, 3U);
  EXPECT_EQ(init.name, "## process_group:init ##");
  EXPECT_EQ(init.type, EtNodeType::metadata);
  EXPECT_EQ(init.ctrl_deps, std::vector<std::uint64_t>{2});
  EXPECT_EQ(init.data_deps, std::vector<std::uint64_t>{2});

  EXPECT_EQ(g.nodes[2].name, "aten::empty");
  EXPECT_EQ(g.nodes[2].data_deps, std::vector<std::uint64_t>{3});
  EXPECT_EQ(g.nodes[261].id, 296U);
  EXPECT_EQ(g.nodes[261].name, "record_param_comms");
  EXPECT_EQ(g.nodes[261].data_deps, std::vector<std::uint64_t>{295});
  for (const EtNode& n : g.nodes) EXPECT_EQ(n.duration_micros, 0U) << n.id;

  EXPECT_EQ(read_et_bytes(written(g), "rewritten.et"), g);
}

// Chakra's feeder test trace: a training step with its broadcasts and all-reduces.
TEST(ChakraSample, FeederTraceReadsAsChakrasFeederReadsIt) {
  const std::string bytes = gunzip_file(sample("feeder-chakra.0.et.gz"));
  ASSERT_EQ(bytes.size(), 2'978'371U);
  // Its ctrl deps are parent operators, some outside the file: refused by default.
  try {
    (void)read_et_bytes(bytes, "chakra.0.et");
    ADD_FAILURE() << "read with ctrl deps checked";
  } catch (const EtError& e) {
    EXPECT_STREQ(e.what(), "chakra.0.et: node 0 (id 216): ctrl dep 3 names no node of the file");
  }
  EtReadOptions options;
  options.checks.ctrl_deps = false;
  const EtGraph g = read_et_bytes(bytes, "chakra.0.et", options);
  ASSERT_EQ(g.nodes.size(), 3664U);
  EXPECT_EQ(type_counts(g),
            (std::map<EtNodeType, int>{{EtNodeType::comp, 3643}, {EtNodeType::comm_coll, 21}}));
  EXPECT_EQ(dep_count(g, &EtNode::ctrl_deps), 3664U);
  EXPECT_EQ(dep_count(g, &EtNode::data_deps), 181'878U);
  EXPECT_EQ(g.metadata.at(0), string_attr("schema", "1.0.1"));
  EXPECT_EQ(std::accumulate(g.nodes.begin(), g.nodes.end(), std::uint64_t{0},
                            [](std::uint64_t s, const EtNode& n) { return s + n.duration_micros; }),
            381'795U);

  EXPECT_EQ(g.nodes[0].id, 216U);
  EXPECT_EQ(g.nodes[0].name, "aten::flatten_dense_tensors(0)");
  EXPECT_EQ(g.nodes[0].duration_micros, 318U);

  const EtNode& broadcast = g.nodes[5];
  EXPECT_EQ(broadcast.id, 435U);
  EXPECT_EQ(broadcast.name,
            "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)");
  EXPECT_EQ(broadcast.type, EtNodeType::comm_coll);
  EXPECT_EQ(broadcast.comm_type, EtCollective::broadcast);
  EXPECT_EQ(broadcast.comm_size, 212480);
  EXPECT_EQ(broadcast.involved_dim, std::vector<bool>{true});
  EXPECT_EQ(broadcast.is_cpu_op, false);
  EXPECT_EQ(broadcast.duration_micros, 28U);
  EXPECT_EQ(broadcast.ctrl_deps, std::vector<std::uint64_t>{434});
  EXPECT_EQ(broadcast.data_deps, (std::vector<std::uint64_t>{432, 216, 217}));

  const EtNode& all_reduce = g.nodes[1349];
  EXPECT_EQ(all_reduce.id, 3256U);
  EXPECT_EQ(all_reduce.comm_type, EtCollective::all_reduce);
  EXPECT_EQ(all_reduce.comm_size, 8'196'000);
  EXPECT_EQ(all_reduce.duration_micros, 5572U);
  EXPECT_EQ(all_reduce.data_deps, (std::vector<std::uint64_t>{3254, 3238, 3240, 3251, 3253}));

  // Read, written and read again: the same graph.
  EXPECT_EQ(read_et_bytes(written(g, options.checks), "rewritten.et", options), g);
}

}  // namespace
}  // namespace myriad::sim::chakra
