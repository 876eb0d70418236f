#include "sim/chakra/et_proto.hpp"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <google/protobuf/unknown_field_set.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/chakra/et_attr_proto.hpp"

namespace myriad::sim::chakra {

namespace {

namespace pb = google::protobuf;

// Throws on a field this schema does not know, in `message` or any message in it:
// a newer schema's field would otherwise be dropped without a word.
void check_known_fields(const pb::Message& message, const std::string& where) {
  const pb::Reflection& reflection = *message.GetReflection();
  const pb::UnknownFieldSet& unknown = reflection.GetUnknownFields(message);
  if (unknown.field_count() > 0) {
    std::string numbers;
    for (int i = 0; i < unknown.field_count(); ++i) {
      numbers += (i == 0 ? "" : ", ") + std::to_string(unknown.field(i).number());
    }
    throw EtError(where + ": " + message.GetDescriptor()->full_name() + " has field " + numbers +
                  ", which the schema this reader follows does not (sim/chakra/et_def.proto)");
  }
  std::vector<const pb::FieldDescriptor*> fields;
  reflection.ListFields(message, &fields);
  for (const pb::FieldDescriptor* field : fields) {
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (field->is_repeated()) {
      for (int i = 0; i < reflection.FieldSize(message, field); ++i) {
        check_known_fields(reflection.GetRepeatedMessage(message, field, i), where);
      }
    } else {
      check_known_fields(reflection.GetMessage(message, field), where);
    }
  }
}

// Puts a typed attribute (is_typed_attr_name) into its field of `node`.
class TypedAttrs {
 public:
  TypedAttrs(EtNode& node, const std::string& where) : node_(node), where_(where) {}

  void take(const EtAttr& a) {
    a_ = &a;
    if (!a.doc_string.empty()) fail("has a doc_string, which its typed field cannot keep");
    const std::string& n = a.name;
    if (n == "is_cpu_op") {
      set(node_.is_cpu_op, EtValueKind::bool_val, a.uints.empty() ? false : a.uints[0] != 0);
    } else if (n == "num_ops") {
      set(node_.num_ops, EtValueKind::int64_val, first(a.ints));
    } else if (n == "tensor_size") {
      set(node_.tensor_size, EtValueKind::uint64_val, first(a.uints));
    } else if (n == "comm_type") {
      expect(EtValueKind::int64_val);
      const std::int64_t v = first(a.ints);
      if (v < 0 || v > ChakraProtoMsg::CollectiveCommType_MAX) {
        fail(std::to_string(v) + " is not a CollectiveCommType (0 ALL_REDUCE .. 9 BARRIER)");
      }
      set(node_.comm_type, EtValueKind::int64_val, static_cast<EtCollective>(v));
    } else if (n == "comm_priority") {
      set(node_.comm_priority, EtValueKind::int32_val, narrow(first(a.ints)));
    } else if (n == "comm_size") {
      set(node_.comm_size, EtValueKind::int64_val, first(a.ints));
    } else if (n == "comm_src") {
      set(node_.comm_src, EtValueKind::int32_val, narrow(first(a.ints)));
    } else if (n == "comm_dst") {
      set(node_.comm_dst, EtValueKind::int32_val, narrow(first(a.ints)));
    } else if (n == "comm_tag") {
      set(node_.comm_tag, EtValueKind::int32_val, narrow(first(a.ints)));
    } else if (n == "pg_name") {
      set(node_.pg_name, EtValueKind::string_val, a.strings.empty() ? "" : a.strings[0]);
    } else if (n == "involved_dim") {
      std::vector<bool> dims;
      for (const auto v : a.uints) dims.push_back(v != 0);
      set(node_.involved_dim, EtValueKind::bool_list, std::move(dims));
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw EtError(where_ + ": attr " + a_->name + ": " + what);
  }
  void expect(EtValueKind kind) const {
    if (a_->kind != kind) {
      fail("expected " + std::string(to_string(kind)) +
           " (the kind Chakra's feeder reads), found " + std::string(to_string(a_->kind)));
    }
  }
  template <typename Field, typename Value>
  void set(std::optional<Field>& field, EtValueKind kind, Value&& value) {
    expect(kind);
    if (field) fail("given twice");
    field = Field(std::forward<Value>(value));
  }
  template <typename T>
  static T first(const std::vector<T>& values) {
    return values.empty() ? T{} : values[0];
  }
  // int32 kinds hold 32-bit values (the parser saw to it).
  static std::int32_t narrow(std::int64_t v) { return static_cast<std::int32_t>(v); }

  EtNode& node_;
  const std::string& where_;
  const EtAttr* a_ = nullptr;
};

EtIoInfo io_from_proto(const ChakraProtoMsg::IOInfo& in) {
  return {.values = in.values(), .shapes = in.shapes(), .types = in.types()};
}

void io_to_proto(const EtIoInfo& in, ChakraProtoMsg::IOInfo& out) {
  out.set_values(in.values);
  out.set_shapes(in.shapes);
  out.set_types(in.types);
}

void add(ChakraProtoMsg::Node& out, const EtAttr& a) { attr_to_proto(a, *out.add_attr()); }

}  // namespace

EtNode node_from_proto(const ChakraProtoMsg::Node& in, const std::string& where) {
  check_known_fields(in, where);
  EtNode node;
  node.id = in.id();
  node.name = in.name();
  const int type = static_cast<int>(in.type());
  if (!ChakraProtoMsg::NodeType_IsValid(type)) {
    throw EtError(where + ": unknown node type " + std::to_string(type) +
                  " (the schema's are 0 INVALID_NODE .. 7 COMM_COLL_NODE)");
  }
  node.type = static_cast<EtNodeType>(type);
  node.ctrl_deps.assign(in.ctrl_deps().begin(), in.ctrl_deps().end());
  node.data_deps.assign(in.data_deps().begin(), in.data_deps().end());
  node.start_time_micros = in.start_time_micros();
  node.duration_micros = in.duration_micros();
  if (in.has_inputs()) node.inputs = io_from_proto(in.inputs());
  if (in.has_outputs()) node.outputs = io_from_proto(in.outputs());
  TypedAttrs typed(node, where);
  for (const auto& attr : in.attr()) {
    EtAttr a = attr_from_proto(attr);
    if (is_typed_attr_name(a.name)) {
      typed.take(a);
    } else {
      node.attrs.push_back(std::move(a));
    }
  }
  return node;
}

void metadata_from_proto(const ChakraProtoMsg::GlobalMetadata& in, EtGraph& graph,
                         const std::string& where) {
  check_known_fields(in, where);
  graph.version = in.version();
  graph.metadata.clear();
  for (const auto& attr : in.attr()) graph.metadata.push_back(attr_from_proto(attr));
}

void node_to_proto(const EtNode& in, ChakraProtoMsg::Node& out) {
  out.set_id(in.id);
  out.set_name(in.name);
  out.set_type(static_cast<ChakraProtoMsg::NodeType>(in.type));
  for (const auto d : in.ctrl_deps) out.add_ctrl_deps(d);
  for (const auto d : in.data_deps) out.add_data_deps(d);
  out.set_start_time_micros(in.start_time_micros);
  out.set_duration_micros(in.duration_micros);
  if (in.inputs) io_to_proto(*in.inputs, *out.mutable_inputs());
  if (in.outputs) io_to_proto(*in.outputs, *out.mutable_outputs());
  if (in.is_cpu_op) add(out, bool_attr("is_cpu_op", *in.is_cpu_op));
  if (in.num_ops) add(out, int64_attr("num_ops", *in.num_ops));
  if (in.tensor_size) add(out, uint64_attr("tensor_size", *in.tensor_size));
  if (in.comm_type) add(out, int64_attr("comm_type", static_cast<std::int64_t>(*in.comm_type)));
  const auto int32 = [&](const char* name, const std::optional<std::int32_t>& v) {
    if (!v) return;
    EtAttr a;
    a.name = name;
    a.kind = EtValueKind::int32_val;
    a.ints.push_back(*v);
    add(out, a);
  };
  int32("comm_priority", in.comm_priority);
  if (in.comm_size) add(out, int64_attr("comm_size", *in.comm_size));
  int32("comm_src", in.comm_src);
  int32("comm_dst", in.comm_dst);
  int32("comm_tag", in.comm_tag);
  if (in.pg_name) add(out, string_attr("pg_name", *in.pg_name));
  if (in.involved_dim) {
    EtAttr a;
    a.name = "involved_dim";
    a.kind = EtValueKind::bool_list;
    for (const bool b : *in.involved_dim) a.uints.push_back(b ? 1 : 0);
    add(out, a);
  }
  for (const EtAttr& a : in.attrs) attr_to_proto(a, *out.add_attr());
}

void metadata_to_proto(const EtGraph& graph, ChakraProtoMsg::GlobalMetadata& out) {
  out.set_version(graph.version);
  for (const EtAttr& a : graph.metadata) attr_to_proto(a, *out.add_attr());
}

}  // namespace myriad::sim::chakra
