#include "sim/chakra/et_graph.hpp"

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <unordered_map>
#include <utility>

#include "sim/chakra/et_dependencies.hpp"

namespace myriad::sim::chakra {

namespace {

constexpr std::array<std::string_view, 8> kNodeTypeNames = {
    "INVALID_NODE", "METADATA_NODE",  "MEM_LOAD_NODE",  "MEM_STORE_NODE",
    "COMP_NODE",    "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE"};

constexpr std::array<std::string_view, 10> kCollectiveNames = {
    "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER", "SCATTER", "BROADCAST",
    "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER"};

// Indexed by EtValueKind's number; 0, 1 and 2 are not kinds of the oneof.
constexpr std::array<std::string_view, 33> kValueKindNames = {"none",
                                                              "",
                                                              "",
                                                              "double_val",
                                                              "double_list",
                                                              "float_val",
                                                              "float_list",
                                                              "int32_val",
                                                              "int32_list",
                                                              "int64_val",
                                                              "int64_list",
                                                              "uint32_val",
                                                              "uint32_list",
                                                              "uint64_val",
                                                              "uint64_list",
                                                              "sint32_val",
                                                              "sint32_list",
                                                              "sint64_val",
                                                              "sint64_list",
                                                              "fixed32_val",
                                                              "fixed32_list",
                                                              "fixed64_val",
                                                              "fixed64_list",
                                                              "sfixed32_val",
                                                              "sfixed32_list",
                                                              "sfixed64_val",
                                                              "sfixed64_list",
                                                              "bool_val",
                                                              "bool_list",
                                                              "string_val",
                                                              "string_list",
                                                              "bytes_val",
                                                              "bytes_list"};

constexpr std::array<std::string_view, 12> kTypedAttrNames = {
    "is_cpu_op", "num_ops",  "tensor_size", "comm_type", "comm_priority", "comm_size",
    "comm_src",  "comm_dst", "comm_tag",    "pg_name",   "involved_dim"};

// Which of EtAttr's vectors a kind's values live in.
enum class Family : std::uint8_t { none, ints, uints, reals, strings, unknown };

Family family_of(EtValueKind kind) {
  using K = EtValueKind;
  switch (kind) {
    case K::none:
      return Family::none;
    case K::double_val:
    case K::double_list:
    case K::float_val:
    case K::float_list:
      return Family::reals;
    case K::int32_val:
    case K::int32_list:
    case K::int64_val:
    case K::int64_list:
    case K::sint32_val:
    case K::sint32_list:
    case K::sint64_val:
    case K::sint64_list:
    case K::sfixed32_val:
    case K::sfixed32_list:
    case K::sfixed64_val:
    case K::sfixed64_list:
      return Family::ints;
    case K::uint32_val:
    case K::uint32_list:
    case K::uint64_val:
    case K::uint64_list:
    case K::fixed32_val:
    case K::fixed32_list:
    case K::fixed64_val:
    case K::fixed64_list:
    case K::bool_val:
    case K::bool_list:
      return Family::uints;
    case K::string_val:
    case K::string_list:
    case K::bytes_val:
    case K::bytes_list:
      return Family::strings;
  }
  return Family::unknown;
}

// The list kinds are the even field numbers of the oneof.
bool is_list(EtValueKind kind) {
  return kind != EtValueKind::none && static_cast<int>(kind) % 2 == 0;
}

// The kinds narrower than the vector their values live in.
bool is_32_bit_signed(EtValueKind k) {
  using K = EtValueKind;
  return k == K::int32_val || k == K::int32_list || k == K::sint32_val || k == K::sint32_list ||
         k == K::sfixed32_val || k == K::sfixed32_list;
}
bool is_32_bit_unsigned(EtValueKind k) {
  using K = EtValueKind;
  return k == K::uint32_val || k == K::uint32_list || k == K::fixed32_val || k == K::fixed32_list;
}

void check_ranges(const EtAttr& attr, const std::string& where) {
  const auto fail = [&](const std::string& what) {
    throw EtError(where + ": attr " + attr.name + " (" + std::string(to_string(attr.kind)) +
                  "): " + what);
  };
  using K = EtValueKind;
  if (is_32_bit_signed(attr.kind)) {
    for (const auto v : attr.ints) {
      if (v < std::numeric_limits<std::int32_t>::min() ||
          v > std::numeric_limits<std::int32_t>::max()) {
        fail("value " + std::to_string(v) + " does not fit in 32 bits");
      }
    }
  } else if (is_32_bit_unsigned(attr.kind)) {
    for (const auto v : attr.uints) {
      if (v > std::numeric_limits<std::uint32_t>::max()) {
        fail("value " + std::to_string(v) + " does not fit in 32 bits");
      }
    }
  } else if (attr.kind == K::bool_val || attr.kind == K::bool_list) {
    for (const auto v : attr.uints) {
      if (v > 1) fail("a bool is 0 or 1, not " + std::to_string(v));
    }
  } else if (attr.kind == K::float_val || attr.kind == K::float_list) {
    for (const auto v : attr.reals) {
      const bool representable =
          !std::isfinite(v) || (std::fabs(v) <= std::numeric_limits<float>::max() &&
                                static_cast<double>(static_cast<float>(v)) == v);
      if (!representable) fail("value " + std::to_string(v) + " is not a float");
    }
  }
}

}  // namespace

std::string_view to_string(EtNodeType type) {
  const auto i = static_cast<std::size_t>(type);
  return i < kNodeTypeNames.size() ? kNodeTypeNames[i] : "unknown node type";
}

std::string_view to_string(EtCollective collective) {
  const auto i = static_cast<std::size_t>(collective);
  return i < kCollectiveNames.size() ? kCollectiveNames[i] : "unknown collective";
}

std::string_view to_string(EtValueKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  return i < kValueKindNames.size() && !kValueKindNames[i].empty() ? kValueKindNames[i]
                                                                   : "unknown kind";
}

EtAttr int64_attr(std::string name, std::int64_t value) {
  EtAttr a;
  a.name = std::move(name);
  a.kind = EtValueKind::int64_val;
  a.ints.push_back(value);
  return a;
}

EtAttr uint64_attr(std::string name, std::uint64_t value) {
  EtAttr a;
  a.name = std::move(name);
  a.kind = EtValueKind::uint64_val;
  a.uints.push_back(value);
  return a;
}

EtAttr bool_attr(std::string name, bool value) {
  EtAttr a;
  a.name = std::move(name);
  a.kind = EtValueKind::bool_val;
  a.uints.push_back(value ? 1 : 0);
  return a;
}

EtAttr double_attr(std::string name, double value) {
  EtAttr a;
  a.name = std::move(name);
  a.kind = EtValueKind::double_val;
  a.reals.push_back(value);
  return a;
}

EtAttr string_attr(std::string name, std::string value) {
  EtAttr a;
  a.name = std::move(name);
  a.kind = EtValueKind::string_val;
  a.strings.push_back(std::move(value));
  return a;
}

bool is_typed_attr_name(std::string_view name) {
  for (const auto typed : kTypedAttrNames) {
    if (name == typed) return true;
  }
  return false;
}

void check_et_attr(const EtAttr& attr, const std::string& where) {
  const Family family = family_of(attr.kind);
  if (family == Family::unknown) {
    throw EtError(where + ": attr " + attr.name + ": unknown attribute value kind " +
                  std::to_string(static_cast<int>(attr.kind)));
  }
  const auto count = [&](Family f) -> std::size_t {
    switch (f) {
      case Family::ints:
        return attr.ints.size();
      case Family::uints:
        return attr.uints.size();
      case Family::reals:
        return attr.reals.size();
      case Family::strings:
        return attr.strings.size();
      case Family::none:
      case Family::unknown:
        return 0;
    }
    return 0;
  };
  for (const Family other : {Family::ints, Family::uints, Family::reals, Family::strings}) {
    if (other != family && count(other) != 0) {
      throw EtError(where + ": attr " + attr.name + " (" + std::string(to_string(attr.kind)) +
                    "): holds values of another kind's family");
    }
  }
  if (family != Family::none && !is_list(attr.kind) && count(family) != 1) {
    throw EtError(where + ": attr " + attr.name + " (" + std::string(to_string(attr.kind)) +
                  "): a scalar kind holds one value, not " + std::to_string(count(family)));
  }
  check_ranges(attr, where);
}

void check_et_graph(const EtGraph& graph, const std::string& file, const EtGraphChecks& checks) {
  for (const EtAttr& attr : graph.metadata) check_et_attr(attr, file + ": global metadata");
  std::unordered_map<std::uint64_t, std::size_t> index_of;
  index_of.reserve(graph.nodes.size());
  for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
    const EtNode& node = graph.nodes[i];
    const std::string where = node_where(file, i, node.id);
    if (node.type == EtNodeType::invalid) {
      throw EtError(where + ": node type INVALID_NODE (0): every node needs a type");
    }
    for (const EtAttr& attr : node.attrs) {
      if (is_typed_attr_name(attr.name)) {
        throw EtError(where + ": attr " + attr.name + " belongs in EtNode's field of that name");
      }
      check_et_attr(attr, where);
    }
    const auto [it, inserted] = index_of.emplace(node.id, i);
    if (!inserted) {
      throw EtError(where + ": id " + std::to_string(node.id) + " is already node " +
                    std::to_string(it->second) + "'s");
    }
  }
  check_dependencies(graph, index_of, file, checks.ctrl_deps);
}

}  // namespace myriad::sim::chakra
