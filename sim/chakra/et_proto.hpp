// Between the generated protobuf classes (sim/chakra/et_def.proto) and EtGraph's
// types: the reader's and the writer's one place that knows both. Internal to
// sim/chakra: the rest of Myriad sees EtGraph only.
#pragma once

#include <string>

#include "sim/chakra/et_def.pb.h"
#include "sim/chakra/et_graph.hpp"

namespace myriad::sim::chakra {

// Throw EtError naming `where` on a field or value kind the schema does not know,
// an unknown node type or collective, or a typed attribute (EtNode's fields) of
// another kind than Chakra's feeder reads, given twice or with a doc_string.
EtNode node_from_proto(const ChakraProtoMsg::Node& in, const std::string& where);
void metadata_from_proto(const ChakraProtoMsg::GlobalMetadata& in, EtGraph& graph,
                         const std::string& where);

// The typed attributes first, in EtNode's order, then `attrs` in theirs. The
// graph is checked (check_et_graph) before.
void node_to_proto(const EtNode& in, ChakraProtoMsg::Node& out);
void metadata_to_proto(const EtGraph& graph, ChakraProtoMsg::GlobalMetadata& out);

}  // namespace myriad::sim::chakra
