// A Chakra execution trace in memory, independent of protobuf: what Myriad converts
// its step programs to, and what sim/chakra/et_io.hpp reads and writes. One EtGraph is
// one rank's file (GlobalMetadata, then the nodes). Every field of the schema
// (sim/chakra/et_def.proto) has a place here, so a trace read and written again loses
// nothing: the attributes Chakra's feeder (and so ASTRA-sim) reads by name are typed
// fields of EtNode, in the value kind the feeder reads them in; every other attribute
// is kept as an EtAttr, in file order.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace myriad::sim::chakra {

// A trace that cannot be read or written: the message names the file, the node
// (index in the file and id) where there is one, and what was expected.
class EtError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ChakraProtoMsg::NodeType, value for value.
enum class EtNodeType : std::uint8_t {
  invalid = 0,
  metadata = 1,
  mem_load = 2,
  mem_store = 3,
  comp = 4,
  comm_send = 5,
  comm_recv = 6,
  comm_coll = 7,
};

// ChakraProtoMsg::CollectiveCommType, value for value.
enum class EtCollective : std::uint8_t {
  all_reduce = 0,
  reduce = 1,
  all_gather = 2,
  gather = 3,
  scatter = 4,
  broadcast = 5,
  all_to_all = 6,
  reduce_scatter = 7,
  reduce_scatter_block = 8,
  barrier = 9,
};

// The schema's names ("COMP_NODE", "ALL_REDUCE"), for messages and tests.
std::string_view to_string(EtNodeType type);
std::string_view to_string(EtCollective collective);

// An attribute's value kind: the number of its field in AttributeProto's `value`
// oneof (3 double_val ... 32 bytes_list), none when no value is set.
enum class EtValueKind : std::uint8_t {
  none = 0,
  double_val = 3,
  double_list = 4,
  float_val = 5,
  float_list = 6,
  int32_val = 7,
  int32_list = 8,
  int64_val = 9,
  int64_list = 10,
  uint32_val = 11,
  uint32_list = 12,
  uint64_val = 13,
  uint64_list = 14,
  sint32_val = 15,
  sint32_list = 16,
  sint64_val = 17,
  sint64_list = 18,
  fixed32_val = 19,
  fixed32_list = 20,
  fixed64_val = 21,
  fixed64_list = 22,
  sfixed32_val = 23,
  sfixed32_list = 24,
  sfixed64_val = 25,
  sfixed64_list = 26,
  bool_val = 27,
  bool_list = 28,
  string_val = 29,
  string_list = 30,
  bytes_val = 31,
  bytes_list = 32,
};

// "int64_val", "bool_list", ..., "none".
std::string_view to_string(EtValueKind kind);

// One attribute, any kind. The values sit in the vector of their C++ family, one
// element for a scalar kind, any number for a list kind; the other vectors are
// empty. Signed integers (int32, int64, sint*, sfixed*) in `ints`; unsigned ones
// (uint*, fixed*) and bools (0 or 1) in `uints`; double and float in `reals` (a
// float converts to double and back exactly); string and bytes in `strings`.
struct EtAttr {
  std::string name;
  std::string doc_string;
  EtValueKind kind = EtValueKind::none;
  std::vector<std::int64_t> ints;
  std::vector<std::uint64_t> uints;
  std::vector<double> reals;
  std::vector<std::string> strings;

  bool operator==(const EtAttr&) const = default;
};

// Scalar attributes of the common kinds.
EtAttr int64_attr(std::string name, std::int64_t value);
EtAttr uint64_attr(std::string name, std::uint64_t value);
EtAttr bool_attr(std::string name, bool value);
EtAttr double_attr(std::string name, double value);
EtAttr string_attr(std::string name, std::string value);

// IOInfo: a node's operands as text (PyTorch's execution trace writes them).
struct EtIoInfo {
  std::string values;
  std::string shapes;
  std::string types;

  bool operator==(const EtIoInfo&) const = default;
};

struct EtNode {
  std::uint64_t id = 0;
  std::string name;
  EtNodeType type = EtNodeType::comp;
  // Chakra's feeder schedules on data deps alone; converters from PyTorch record
  // a node's parent operator in ctrl_deps (sim/chakra/et_io.hpp, EtReadOptions).
  std::vector<std::uint64_t> ctrl_deps;
  std::vector<std::uint64_t> data_deps;
  std::uint64_t start_time_micros = 0;
  std::uint64_t duration_micros = 0;
  std::optional<EtIoInfo> inputs;
  std::optional<EtIoInfo> outputs;

  // The attributes Chakra's feeder reads by name, as that kind (comment: the
  // attribute's name and kind in the file). Absent: no such attribute.
  std::optional<bool> is_cpu_op;              // is_cpu_op, bool_val
  std::optional<std::int64_t> num_ops;        // num_ops, int64_val
  std::optional<std::uint64_t> tensor_size;   // tensor_size, uint64_val (bytes)
  std::optional<EtCollective> comm_type;      // comm_type, int64_val
  std::optional<std::int32_t> comm_priority;  // comm_priority, int32_val
  std::optional<std::int64_t> comm_size;      // comm_size, int64_val (bytes)
  std::optional<std::int32_t> comm_src;       // comm_src, int32_val (rank)
  std::optional<std::int32_t> comm_dst;       // comm_dst, int32_val (rank)
  std::optional<std::int32_t> comm_tag;       // comm_tag, int32_val
  std::optional<std::string> pg_name;         // pg_name, string_val
  // involved_dim, bool_list: which dimensions of the network a collective spans
  // (ASTRA-sim's topology dimensions).
  std::optional<std::vector<bool>> involved_dim;

  // Every other attribute, in file order, names and kinds as found.
  std::vector<EtAttr> attrs;

  bool operator==(const EtNode&) const = default;
};

// The names of the typed attributes above: an EtAttr in EtNode::attrs may not use
// one (the writer refuses it; the reader puts such an attribute in its field).
bool is_typed_attr_name(std::string_view name);

struct EtGraph {
  std::string version;           // GlobalMetadata.version
  std::vector<EtAttr> metadata;  // GlobalMetadata.attr, in file order
  std::vector<EtNode> nodes;     // in file order

  bool operator==(const EtGraph&) const = default;
};

// What the reader checks of a graph, beyond each message on its own.
struct EtGraphChecks {
  // Whether ctrl deps must name nodes of the file and join data deps in the cycle
  // check. Off, ctrl deps are kept as read and not checked: Chakra's feeder
  // schedules on data deps alone, and traces converted from PyTorch record each
  // node's parent operator in ctrl_deps, often one that is not in the file (the
  // sample in tests/data/chakra/ has 1,277 such deps, and a node listing itself).
  bool ctrl_deps = true;
};

// Throws EtError naming `file` when two nodes share an id, a dependency names no
// node of the graph, the dependencies form a cycle, a node's type is invalid, or
// an attribute cannot be written (a typed name in `attrs`, a value count or range
// its kind cannot hold).
void check_et_graph(const EtGraph& graph, const std::string& file, const EtGraphChecks& checks);

// Throws EtError naming `where` when `attr` has the wrong number of values for its
// kind, values in the wrong vector, or a value out of its kind's range.
void check_et_attr(const EtAttr& attr, const std::string& where);

}  // namespace myriad::sim::chakra
