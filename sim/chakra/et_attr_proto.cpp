// AttributeProto <-> EtAttr: every one of the oneof's 30 kinds, both ways.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/chakra/et_attr_proto.hpp"

namespace myriad::sim::chakra {

namespace {

using Proto = ChakraProtoMsg::AttributeProto;

template <typename Values, typename T>
void take(const Values& values, std::vector<T>& out) {
  out.reserve(static_cast<std::size_t>(values.size()));
  for (const auto& v : values) out.push_back(static_cast<T>(v));
}

template <typename T, typename List, typename U>
void give(List* list, const std::vector<U>& values) {
  for (const auto& v : values) list->add_values(static_cast<T>(v));
}

void take_scalar(const Proto& in, EtAttr& a) {
  switch (in.value_case()) {
    case Proto::kDoubleVal:
      a.reals.push_back(in.double_val());
      break;
    case Proto::kFloatVal:
      a.reals.push_back(in.float_val());
      break;
    case Proto::kInt32Val:
      a.ints.push_back(in.int32_val());
      break;
    case Proto::kInt64Val:
      a.ints.push_back(in.int64_val());
      break;
    case Proto::kUint32Val:
      a.uints.push_back(in.uint32_val());
      break;
    case Proto::kUint64Val:
      a.uints.push_back(in.uint64_val());
      break;
    case Proto::kSint32Val:
      a.ints.push_back(in.sint32_val());
      break;
    case Proto::kSint64Val:
      a.ints.push_back(in.sint64_val());
      break;
    case Proto::kFixed32Val:
      a.uints.push_back(in.fixed32_val());
      break;
    case Proto::kFixed64Val:
      a.uints.push_back(in.fixed64_val());
      break;
    case Proto::kSfixed32Val:
      a.ints.push_back(in.sfixed32_val());
      break;
    case Proto::kSfixed64Val:
      a.ints.push_back(in.sfixed64_val());
      break;
    case Proto::kBoolVal:
      a.uints.push_back(in.bool_val() ? 1 : 0);
      break;
    case Proto::kStringVal:
      a.strings.push_back(in.string_val());
      break;
    case Proto::kBytesVal:
      a.strings.push_back(in.bytes_val());
      break;
    default:
      break;
  }
}

void take_list(const Proto& in, EtAttr& a) {
  switch (in.value_case()) {
    case Proto::kDoubleList:
      take(in.double_list().values(), a.reals);
      break;
    case Proto::kFloatList:
      take(in.float_list().values(), a.reals);
      break;
    case Proto::kInt32List:
      take(in.int32_list().values(), a.ints);
      break;
    case Proto::kInt64List:
      take(in.int64_list().values(), a.ints);
      break;
    case Proto::kUint32List:
      take(in.uint32_list().values(), a.uints);
      break;
    case Proto::kUint64List:
      take(in.uint64_list().values(), a.uints);
      break;
    case Proto::kSint32List:
      take(in.sint32_list().values(), a.ints);
      break;
    case Proto::kSint64List:
      take(in.sint64_list().values(), a.ints);
      break;
    case Proto::kFixed32List:
      take(in.fixed32_list().values(), a.uints);
      break;
    case Proto::kFixed64List:
      take(in.fixed64_list().values(), a.uints);
      break;
    case Proto::kSfixed32List:
      take(in.sfixed32_list().values(), a.ints);
      break;
    case Proto::kSfixed64List:
      take(in.sfixed64_list().values(), a.ints);
      break;
    case Proto::kBoolList:
      take(in.bool_list().values(), a.uints);
      break;
    case Proto::kStringList:
      take(in.string_list().values(), a.strings);
      break;
    case Proto::kBytesList:
      take(in.bytes_list().values(), a.strings);
      break;
    default:
      break;
  }
}

void give_scalar(const EtAttr& a, Proto& out) {
  using K = EtValueKind;
  switch (a.kind) {
    case K::double_val:
      out.set_double_val(a.reals.at(0));
      break;
    case K::float_val:
      out.set_float_val(static_cast<float>(a.reals.at(0)));
      break;
    case K::int32_val:
      out.set_int32_val(static_cast<std::int32_t>(a.ints.at(0)));
      break;
    case K::int64_val:
      out.set_int64_val(a.ints.at(0));
      break;
    case K::uint32_val:
      out.set_uint32_val(static_cast<std::uint32_t>(a.uints.at(0)));
      break;
    case K::uint64_val:
      out.set_uint64_val(a.uints.at(0));
      break;
    case K::sint32_val:
      out.set_sint32_val(static_cast<std::int32_t>(a.ints.at(0)));
      break;
    case K::sint64_val:
      out.set_sint64_val(a.ints.at(0));
      break;
    case K::fixed32_val:
      out.set_fixed32_val(static_cast<std::uint32_t>(a.uints.at(0)));
      break;
    case K::fixed64_val:
      out.set_fixed64_val(a.uints.at(0));
      break;
    case K::sfixed32_val:
      out.set_sfixed32_val(static_cast<std::int32_t>(a.ints.at(0)));
      break;
    case K::sfixed64_val:
      out.set_sfixed64_val(a.ints.at(0));
      break;
    case K::bool_val:
      out.set_bool_val(a.uints.at(0) != 0);
      break;
    case K::string_val:
      out.set_string_val(a.strings.at(0));
      break;
    case K::bytes_val:
      out.set_bytes_val(a.strings.at(0));
      break;
    default:
      break;
  }
}

void give_list(const EtAttr& a, Proto& out) {
  using K = EtValueKind;
  switch (a.kind) {
    case K::double_list:
      give<double>(out.mutable_double_list(), a.reals);
      break;
    case K::float_list:
      give<float>(out.mutable_float_list(), a.reals);
      break;
    case K::int32_list:
      give<std::int32_t>(out.mutable_int32_list(), a.ints);
      break;
    case K::int64_list:
      give<std::int64_t>(out.mutable_int64_list(), a.ints);
      break;
    case K::uint32_list:
      give<std::uint32_t>(out.mutable_uint32_list(), a.uints);
      break;
    case K::uint64_list:
      give<std::uint64_t>(out.mutable_uint64_list(), a.uints);
      break;
    case K::sint32_list:
      give<std::int32_t>(out.mutable_sint32_list(), a.ints);
      break;
    case K::sint64_list:
      give<std::int64_t>(out.mutable_sint64_list(), a.ints);
      break;
    case K::fixed32_list:
      give<std::uint32_t>(out.mutable_fixed32_list(), a.uints);
      break;
    case K::fixed64_list:
      give<std::uint64_t>(out.mutable_fixed64_list(), a.uints);
      break;
    case K::sfixed32_list:
      give<std::int32_t>(out.mutable_sfixed32_list(), a.ints);
      break;
    case K::sfixed64_list:
      give<std::int64_t>(out.mutable_sfixed64_list(), a.ints);
      break;
    case K::bool_list:
      for (const auto v : a.uints) out.mutable_bool_list()->add_values(v != 0);
      out.mutable_bool_list();  // set, even when empty
      break;
    case K::string_list:
      give<std::string>(out.mutable_string_list(), a.strings);
      break;
    case K::bytes_list:
      give<std::string>(out.mutable_bytes_list(), a.strings);
      break;
    default:
      break;
  }
}

}  // namespace

EtAttr attr_from_proto(const Proto& in) {
  EtAttr a;
  a.name = in.name();
  a.doc_string = in.doc_string();
  a.kind = static_cast<EtValueKind>(static_cast<int>(in.value_case()));
  if (static_cast<int>(a.kind) % 2 == 0) {
    take_list(in, a);
  } else {
    take_scalar(in, a);
  }
  return a;
}

void attr_to_proto(const EtAttr& a, Proto& out) {
  out.set_name(a.name);
  out.set_doc_string(a.doc_string);
  if (static_cast<int>(a.kind) % 2 == 0) {
    give_list(a, out);
  } else {
    give_scalar(a, out);
  }
}

}  // namespace myriad::sim::chakra
