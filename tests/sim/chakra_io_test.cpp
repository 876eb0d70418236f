// Chakra ET files (sim/chakra/et_io.hpp): the framing byte by byte against a
// hand-encoded file, and every field of EtGraph through a write and a read.
#include "sim/chakra/et_io.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "sim/chakra/et_graph.hpp"

namespace myriad::sim::chakra {
namespace {

std::string write_bytes(const EtGraph& graph) {
  std::ostringstream out;
  write_et(graph, out, "test.et");
  return out.str();
}

std::string bytes_of(std::initializer_list<int> values) {
  std::string s;
  for (const int v : values) s.push_back(static_cast<char>(v));
  return s;
}

TEST(ChakraFraming, VarintsAsProtobufWritesThem) {
  const auto varint = [](std::uint64_t v) {
    std::string s;
    append_varint(s, v);
    return s;
  };
  EXPECT_EQ(varint(0), bytes_of({0x00}));
  EXPECT_EQ(varint(1), bytes_of({0x01}));
  EXPECT_EQ(varint(127), bytes_of({0x7f}));
  EXPECT_EQ(varint(128), bytes_of({0x80, 0x01}));
  EXPECT_EQ(varint(300), bytes_of({0xac, 0x02}));
  EXPECT_EQ(varint(16384), bytes_of({0x80, 0x80, 0x01}));
  EXPECT_EQ(varint(std::numeric_limits<std::uint64_t>::max()),
            bytes_of({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

// Two nodes, encoded by hand from protobuf's wire format: each message is its size
// as a varint, then its fields in field-number order as tag (number << 3 | wire type)
// and value.
TEST(ChakraFraming, SmallGraphByteByByte) {
  EtGraph graph;
  graph.version = "v";
  EtNode a;
  a.id = 1;
  a.name = "a";
  a.type = EtNodeType::comp;
  a.duration_micros = 300;
  a.is_cpu_op = true;
  EtNode b;
  b.id = 2;
  b.name = "b";
  b.type = EtNodeType::comm_coll;
  b.data_deps = {1};
  b.comm_type = EtCollective::all_gather;
  graph.nodes = {a, b};

  const std::string expected =
      // GlobalMetadata, 3 bytes: version (1, length-delimited) "v"
      bytes_of({0x03, 0x0a, 0x01, 'v'}) +
      // node a, 26 bytes: id (1, varint) 1; name (2) "a"; type (3) 4 COMP_NODE;
      // duration_micros (7) 300 = 0xac 0x02; attr (10, 14 bytes): name (1)
      // "is_cpu_op", bool_val (27: tag 27 << 3 = 216 = 0xd8 0x01) true
      bytes_of({0x1a, 0x08, 0x01, 0x12, 0x01, 'a', 0x18, 0x04, 0x38, 0xac, 0x02, 0x52, 0x0e, 0x0a,
                0x09}) +
      "is_cpu_op" + bytes_of({0xd8, 0x01, 0x01}) +
      // node b, 25 bytes: id 2; name "b"; type 7 COMM_COLL_NODE; data_deps (5, packed)
      // [1]; attr (13 bytes): name "comm_type", int64_val (9) 2 ALL_GATHER
      bytes_of({0x19, 0x08, 0x02, 0x12, 0x01, 'b', 0x18, 0x07, 0x2a, 0x01, 0x01, 0x52, 0x0d, 0x0a,
                0x09}) +
      "comm_type" + bytes_of({0x48, 0x02});
  const std::string written = write_bytes(graph);
  ASSERT_EQ(written.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(static_cast<int>(static_cast<unsigned char>(written[i])),
              static_cast<int>(static_cast<unsigned char>(expected[i])))
        << "byte " << i;
  }
  EXPECT_EQ(read_et_bytes(expected, "hand.et"), graph);
}

EtAttr list_attr(const std::string& name, EtValueKind kind) {
  EtAttr a;
  a.name = name;
  a.kind = kind;
  return a;
}

// One attribute of each of the 30 kinds, and one with no value.
std::vector<EtAttr> every_kind() {
  using K = EtValueKind;
  std::vector<EtAttr> attrs;
  const auto add = [&](K kind, auto fill) {
    EtAttr a = list_attr("k" + std::to_string(static_cast<int>(kind)), kind);
    fill(a);
    attrs.push_back(a);
  };
  add(K::none, [](EtAttr& a) { a.doc_string = "no value"; });
  add(K::double_val, [](EtAttr& a) { a.reals = {-2.5e300}; });
  add(K::double_list, [](EtAttr& a) { a.reals = {0.1, -0.0, 1e-300}; });
  add(K::float_val, [](EtAttr& a) { a.reals = {0.5}; });
  add(K::float_list, [](EtAttr& a) { a.reals = {1.25, -0x1p100}; });
  add(K::int32_val, [](EtAttr& a) { a.ints = {std::numeric_limits<std::int32_t>::min()}; });
  add(K::int32_list, [](EtAttr& a) { a.ints = {-1, 0, 7}; });
  add(K::int64_val, [](EtAttr& a) { a.ints = {std::numeric_limits<std::int64_t>::min()}; });
  add(K::int64_list, [](EtAttr& a) { a.ints = {}; });
  add(K::uint32_val, [](EtAttr& a) { a.uints = {std::numeric_limits<std::uint32_t>::max()}; });
  add(K::uint32_list, [](EtAttr& a) { a.uints = {1, 2}; });
  add(K::uint64_val, [](EtAttr& a) { a.uints = {std::numeric_limits<std::uint64_t>::max()}; });
  add(K::uint64_list, [](EtAttr& a) { a.uints = {0, 1ULL << 63}; });
  add(K::sint32_val, [](EtAttr& a) { a.ints = {-5}; });
  add(K::sint32_list, [](EtAttr& a) { a.ints = {-5, 5}; });
  add(K::sint64_val, [](EtAttr& a) { a.ints = {-(1LL << 40)}; });
  add(K::sint64_list, [](EtAttr& a) { a.ints = {1LL << 40}; });
  add(K::fixed32_val, [](EtAttr& a) { a.uints = {0xdeadbeef}; });
  add(K::fixed32_list, [](EtAttr& a) { a.uints = {3, 4}; });
  add(K::fixed64_val, [](EtAttr& a) { a.uints = {0xdeadbeefcafeULL}; });
  add(K::fixed64_list, [](EtAttr& a) { a.uints = {5}; });
  add(K::sfixed32_val, [](EtAttr& a) { a.ints = {-7}; });
  add(K::sfixed32_list, [](EtAttr& a) { a.ints = {-7, 8}; });
  add(K::sfixed64_val, [](EtAttr& a) { a.ints = {-9}; });
  add(K::sfixed64_list, [](EtAttr& a) { a.ints = {9, -10}; });
  add(K::bool_val, [](EtAttr& a) { a.uints = {0}; });
  add(K::bool_list, [](EtAttr& a) { a.uints = {1, 0, 1}; });
  add(K::string_val, [](EtAttr& a) { a.strings = {"text"}; });
  add(K::string_list, [](EtAttr& a) { a.strings = {"a", "", "c"}; });
  add(K::bytes_val, [](EtAttr& a) { a.strings = {std::string("\0\xff", 2)}; });
  add(K::bytes_list, [](EtAttr& a) { a.strings = {std::string("\x80", 1), "b"}; });
  return attrs;
}

EtGraph full_graph() {
  EtGraph g;
  g.version = "myriad-test";
  g.metadata = every_kind();
  EtNode n;
  n.id = 10;
  n.name = "all_reduce dp";
  n.type = EtNodeType::comm_coll;
  n.start_time_micros = 123;
  n.duration_micros = 4567;
  n.inputs = EtIoInfo{.values = "[[1, 2]]", .shapes = "[[2]]", .types = "['Tensor(float)']"};
  n.outputs = EtIoInfo{};  // present, every string empty
  n.is_cpu_op = false;
  n.num_ops = 1'000'000;
  n.tensor_size = 1ULL << 40;
  n.comm_type = EtCollective::reduce_scatter_block;
  n.comm_priority = -3;
  n.comm_size = 1LL << 33;
  n.comm_src = 5;
  n.comm_dst = 2'147'483'647;
  n.comm_tag = -1;
  n.pg_name = "dp_group_0";
  n.involved_dim = std::vector<bool>{true, false, true};
  n.attrs = every_kind();
  EtNode first;
  first.id = 3;
  first.name = "first";
  first.type = EtNodeType::comp;
  EtNode send;
  send.id = 4;
  send.type = EtNodeType::comm_send;
  send.comm_src = 0;
  send.comm_dst = 1;
  send.comm_size = 0;
  send.ctrl_deps = {3};
  n.ctrl_deps = {3, 4};
  n.data_deps = {4, 3, 4};  // as written: order and repeats kept
  g.nodes = {first, send, n};
  for (const EtNodeType t :
       {EtNodeType::metadata, EtNodeType::mem_load, EtNodeType::mem_store, EtNodeType::comm_recv}) {
    EtNode other;
    other.id = 100 + static_cast<std::uint64_t>(t);
    other.type = t;
    other.data_deps = {10};
    g.nodes.push_back(other);
  }
  return g;
}

TEST(ChakraRoundTrip, EveryFieldAndEveryAttributeKind) {
  const EtGraph graph = full_graph();
  const std::string bytes = write_bytes(graph);
  const EtGraph read = read_et_bytes(bytes, "full.et");
  EXPECT_EQ(read.version, graph.version);
  EXPECT_EQ(read.metadata, graph.metadata);
  ASSERT_EQ(read.nodes.size(), graph.nodes.size());
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    EXPECT_EQ(read.nodes[i], graph.nodes[i]) << "node " << i;
  }
  EXPECT_EQ(read, graph);
  EXPECT_EQ(write_bytes(read), bytes);  // and written again, byte for byte
}

TEST(ChakraRoundTrip, ThroughAFileAndAStream) {
  const EtGraph graph = full_graph();
  const auto path = std::filesystem::path(testing::TempDir()) / "chakra_roundtrip.0.et";
  write_et_file(graph, path);
  EXPECT_EQ(read_et_file(path), graph);
  std::istringstream in(write_bytes(graph));
  EXPECT_EQ(read_et(in, "stream"), graph);
  std::filesystem::remove(path);
}

TEST(ChakraRoundTrip, AnEmptyGraphIsItsMetadataAlone) {
  EtGraph graph;
  EXPECT_EQ(write_bytes(graph), bytes_of({0x00}));
  EXPECT_EQ(read_et_bytes(bytes_of({0x00}), "empty.et"), graph);
}

TEST(ChakraRoundTrip, TheNamesOfTheSchema) {
  EXPECT_EQ(to_string(EtNodeType::comm_coll), "COMM_COLL_NODE");
  EXPECT_EQ(to_string(EtNodeType::invalid), "INVALID_NODE");
  EXPECT_EQ(to_string(EtCollective::all_to_all), "ALL_TO_ALL");
  EXPECT_EQ(to_string(EtCollective::barrier), "BARRIER");
  EXPECT_EQ(to_string(EtValueKind::sfixed64_list), "sfixed64_list");
  EXPECT_TRUE(is_typed_attr_name("comm_size"));
  EXPECT_FALSE(is_typed_attr_name("tid"));
}

}  // namespace
}  // namespace myriad::sim::chakra
