// What sim/chakra's reader and writer refuse, and how they say it: each message names
// the file, the byte or the node (index and id) and what was expected.
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <sstream>
#include <string>

#include "sim/chakra/et_graph.hpp"
#include "sim/chakra/et_io.hpp"

namespace myriad::sim::chakra {
namespace {

std::string raw(std::initializer_list<int> values) {
  std::string s;
  for (const int v : values) s.push_back(static_cast<char>(v));
  return s;
}

// A message with its size prefix.
std::string frame(const std::string& message) {
  std::string s;
  append_varint(s, message.size());
  return s + message;
}

const std::string kEmptyMetadata = frame("");

// A Node message: id (field 1), type (field 3), then `more` (ids and types < 128).
std::string node(int id, int type, const std::string& more = "") {
  return raw({0x08, id, 0x18, type}) + more;
}

std::string data_dep(int id) { return raw({0x2a, 0x01, id}); }  // packed, one value
std::string ctrl_dep(int id) { return raw({0x22, 0x01, id}); }

// An AttributeProto named `name` with `value` (tag and value bytes), as field 10.
std::string attr(const std::string& name, const std::string& value) {
  const std::string body = raw({0x0a, static_cast<int>(name.size())}) + name + value;
  return raw({0x52, static_cast<int>(body.size())}) + body;
}

std::string read_error(const std::string& bytes, const EtReadOptions& options = {}) {
  try {
    (void)read_et_bytes(bytes, "bad.et", options);
  } catch (const EtError& e) {
    return e.what();
  }
  return "(no error)";
}

#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(ChakraErrors, EmptyFile) {
  EXPECT_EQ(read_error(""), "bad.et: empty: a Chakra trace starts with its GlobalMetadata message");
}

TEST(ChakraErrors, TruncatedSizePrefix) {
  EXPECT_EQ(read_error(raw({0x80})),
            "bad.et: byte 0: global metadata: the size prefix is cut off by the end of the file");
  EXPECT_EQ(read_error(kEmptyMetadata + frame(node(1, 4)) + raw({0xff, 0xff})),
            "bad.et: byte 6: node 1: the size prefix is cut off by the end of the file");
}

TEST(ChakraErrors, MalformedSizePrefix) {
  EXPECT_EQ(read_error(std::string(11, '\x80') + "x"),
            "bad.et: byte 0: global metadata: malformed size prefix (over 64 bits)");
  EXPECT_HAS(read_error(std::string(9, '\xff') + raw({0x02})), "over 64 bits");
}

TEST(ChakraErrors, SizePrefixBeyondTheFile) {
  EXPECT_EQ(
      read_error(kEmptyMetadata + raw({0x05, 0x08, 0x01})),
      "bad.et: byte 1: node 0: the size prefix says 5 bytes, but 2 remain (a truncated file?)");
  // A prefix of 2^63 bytes is refused as it is read, nothing allocated.
  EXPECT_HAS(read_error(raw({0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01})),
             "says 9223372036854775808 bytes, but 0 remain");
}

TEST(ChakraErrors, TruncatedMessage) {
  const std::string whole = kEmptyMetadata + frame(node(1, 4, raw({0x12, 0x03}) + "abc"));
  EXPECT_HAS(read_error(whole.substr(0, whole.size() - 1)),
             "byte 1: node 0: the size prefix says 9 bytes, but 8 remain");
}

TEST(ChakraErrors, MessageThatDoesNotParse) {
  // Wire type 7 does not exist.
  EXPECT_EQ(read_error(kEmptyMetadata + frame(raw({0x0f}))),
            "bad.et: byte 1: node 0: the 1 bytes do not parse as a ChakraProtoMsg.Node message");
  // A name (field 2) whose length runs past the message.
  EXPECT_HAS(read_error(kEmptyMetadata + frame(raw({0x12, 0x05, 'a'}))),
             "node 0: the 3 bytes do not parse as a ChakraProtoMsg.Node");
  EXPECT_HAS(
      read_error(frame(raw({0x0a, 0x09, 'x'}))),
      "byte 0: global metadata: the 3 bytes do not parse as a ChakraProtoMsg.GlobalMetadata");
}

TEST(ChakraErrors, UnknownNodeType) {
  EXPECT_EQ(read_error(kEmptyMetadata + frame(node(1, 4)) + frame(node(7, 42))),
            "bad.et: node 1 (id 7): unknown node type 42 (the schema's are 0 INVALID_NODE .. 7 "
            "COMM_COLL_NODE)");
  EXPECT_EQ(read_error(kEmptyMetadata + frame(raw({0x08, 0x07}))),
            "bad.et: node 0 (id 7): node type INVALID_NODE (0): every node needs a type");
}

TEST(ChakraErrors, FieldsOutsideTheSchema) {
  // Field 15 of Node, and field 40 of an attribute: a newer schema's, not dropped silently.
  EXPECT_HAS(read_error(kEmptyMetadata + frame(node(1, 4, raw({0x78, 0x01})))),
             "bad.et: node 0 (id 1): ChakraProtoMsg.Node has field 15, which the schema");
  EXPECT_HAS(read_error(kEmptyMetadata + frame(node(1, 4, attr("x", raw({0xc0, 0x02, 0x01}))))),
             "ChakraProtoMsg.AttributeProto has field 40");
}

TEST(ChakraErrors, DependencyOnAMissingNode) {
  const std::string bytes =
      kEmptyMetadata + frame(node(1, 4)) + frame(node(2, 4, data_dep(1) + data_dep(9)));
  EXPECT_EQ(read_error(bytes), "bad.et: node 1 (id 2): data dep 9 names no node of the file");
  const std::string ctrl = kEmptyMetadata + frame(node(1, 4, ctrl_dep(3)));
  EXPECT_EQ(read_error(ctrl), "bad.et: node 0 (id 1): ctrl dep 3 names no node of the file");
  EtReadOptions lenient;
  lenient.checks.ctrl_deps = false;
  EXPECT_EQ(read_et_bytes(ctrl, "ok.et", lenient).nodes.at(0).ctrl_deps,
            std::vector<std::uint64_t>{3});  // kept as read
}

TEST(ChakraErrors, DuplicateIds) {
  EXPECT_EQ(read_error(kEmptyMetadata + frame(node(5, 4)) + frame(node(6, 4)) + frame(node(5, 7))),
            "bad.et: node 2 (id 5): id 5 is already node 0's");
}

TEST(ChakraErrors, Cycles) {
  const std::string cycle = kEmptyMetadata + frame(node(1, 4)) +
                            frame(node(2, 4, data_dep(1) + data_dep(4))) +
                            frame(node(3, 4, data_dep(2))) + frame(node(4, 4, data_dep(3))) +
                            frame(node(5, 4, data_dep(4)));
  EXPECT_EQ(read_error(cycle),
            "bad.et: node 1 (id 2): dependency cycle (data and ctrl deps; each id depends on the "
            "next): 2 -> 4 -> 3 -> 2");
  EXPECT_HAS(read_error(kEmptyMetadata + frame(node(1, 4, data_dep(1)))), "1 -> 1");
  // Through a ctrl dep; ignored when ctrl deps are not checked.
  const std::string ctrl =
      kEmptyMetadata + frame(node(1, 4, ctrl_dep(2))) + frame(node(2, 4, data_dep(1)));
  EXPECT_HAS(read_error(ctrl), "node 0 (id 1): dependency cycle");
  EtReadOptions lenient;
  lenient.checks.ctrl_deps = false;
  EXPECT_EQ(read_et_bytes(ctrl, "ok.et", lenient).nodes.size(), 2U);
}

TEST(ChakraErrors, Bounds) {
  EtReadOptions small;
  small.max_nodes = 2;
  const std::string three =
      kEmptyMetadata + frame(node(1, 4)) + frame(node(2, 4)) + frame(node(3, 4));
  EXPECT_EQ(read_error(three, small),
            "bad.et: byte 11: node 2: more than 2 nodes (EtReadOptions::max_nodes)");
  small.max_bytes = 5;
  EXPECT_HAS(read_error(three, small), "bad.et: 16 bytes, over the 5 a trace may have");
  std::istringstream in(three);
  EXPECT_THROW((void)read_et(in, "stream", small), EtError);
}

TEST(ChakraErrors, TypedAttributesOfAnotherKind) {
  const auto with = [](const std::string& a) { return kEmptyMetadata + frame(node(1, 7, a)); };
  // comm_size as uint64_val (13): the feeder reads int64_val.
  EXPECT_EQ(read_error(with(attr("comm_size", raw({0x68, 0x05})))),
            "bad.et: node 0 (id 1): attr comm_size: expected int64_val (the kind Chakra's feeder "
            "reads), found uint64_val");
  EXPECT_EQ(
      read_error(with(attr("comm_type", raw({0x48, 0x0c})))),
      "bad.et: node 0 (id 1): attr comm_type: 12 is not a CollectiveCommType (0 ALL_REDUCE .. "
      "9 BARRIER)");
  EXPECT_EQ(
      read_error(with(attr("comm_src", raw({0x38, 0x01})) + attr("comm_src", raw({0x38, 0x02})))),
      "bad.et: node 0 (id 1): attr comm_src: given twice");
  EXPECT_HAS(read_error(with(attr("is_cpu_op", ""))),
             "expected bool_val (the kind Chakra's feeder reads), found none");
}

TEST(ChakraErrors, UnknownAttributesAreKept) {
  const EtGraph g =
      read_et_bytes(kEmptyMetadata + frame(node(1, 4,
                                                attr("myriad_stage", raw({0x48, 0x03})) +
                                                    attr("comm_size", raw({0x48, 0x40})))),
                    "ok.et");
  ASSERT_EQ(g.nodes.size(), 1U);
  ASSERT_EQ(g.nodes[0].attrs.size(), 1U);
  EXPECT_EQ(g.nodes[0].attrs[0], int64_attr("myriad_stage", 3));
  EXPECT_EQ(g.nodes[0].comm_size, 64);
}

std::string write_error(const EtGraph& graph) {
  std::ostringstream out;
  try {
    write_et(graph, out, "out.et");
  } catch (const EtError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ChakraErrors, WhatTheWriterRefuses) {
  EtGraph g;
  g.nodes.resize(2);
  g.nodes[0].id = 1;
  g.nodes[1].id = 1;
  EXPECT_EQ(write_error(g), "out.et: node 1 (id 1): id 1 is already node 0's");
  g.nodes[1].id = 2;
  g.nodes[1].data_deps = {3};
  EXPECT_EQ(write_error(g), "out.et: node 1 (id 2): data dep 3 names no node of the file");
  g.nodes[1].data_deps = {};
  g.nodes[1].attrs = {int64_attr("comm_size", 1)};
  EXPECT_EQ(write_error(g),
            "out.et: node 1 (id 2): attr comm_size belongs in EtNode's field of that name");
  EtAttr narrow;
  narrow.name = "x";
  narrow.kind = EtValueKind::int32_val;
  narrow.ints = {1LL << 40};
  g.nodes[1].attrs = {narrow};
  EXPECT_EQ(
      write_error(g),
      "out.et: node 1 (id 2): attr x (int32_val): value 1099511627776 does not fit in 32 bits");
  narrow.ints = {1, 2};
  g.nodes[1].attrs = {narrow};
  EXPECT_HAS(write_error(g), "a scalar kind holds one value, not 2");
  EtAttr mixed = double_attr("y", 1.0);
  mixed.strings = {"z"};
  g.nodes[1].attrs = {mixed};
  EXPECT_HAS(write_error(g), "attr y (double_val): holds values of another kind's family");
  EtAttr f;
  f.name = "f";
  f.kind = EtValueKind::float_val;
  f.reals = {0.1};
  g.nodes[1].attrs = {f};
  EXPECT_HAS(write_error(g), "attr f (float_val): value 0.100000 is not a float");
  f.kind = static_cast<EtValueKind>(2);
  g.nodes[1].attrs = {f};
  EXPECT_EQ(write_error(g), "out.et: node 1 (id 2): attr f: unknown attribute value kind 2");
  g.nodes[1].attrs = {};
  g.nodes[1].type = EtNodeType::invalid;
  EXPECT_HAS(write_error(g), "node type INVALID_NODE (0)");
}

}  // namespace
}  // namespace myriad::sim::chakra
