// AttributeProto <-> EtAttr, every value kind both ways (internal to sim/chakra).
#pragma once

#include "sim/chakra/et_def.pb.h"
#include "sim/chakra/et_graph.hpp"

namespace myriad::sim::chakra {

// The attribute as found: its kind is the oneof's case (none when unset).
EtAttr attr_from_proto(const ChakraProtoMsg::AttributeProto& in);
// `a` must pass check_et_attr.
void attr_to_proto(const EtAttr& a, ChakraProtoMsg::AttributeProto& out);

}  // namespace myriad::sim::chakra
