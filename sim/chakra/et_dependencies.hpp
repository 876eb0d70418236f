// The graph checks shared by the reader and the writer: every dependency names a
// node of the file, and the dependencies form no cycle (sim/chakra/et_graph.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "sim/chakra/et_graph.hpp"

namespace myriad::sim::chakra {

// "<file>: node <index> (id <id>)": where a message about one node points.
std::string node_where(const std::string& file, std::size_t index, std::uint64_t id);

// Throws EtError naming `file`, the node and the dependency when a data dep (or,
// with `ctrl_deps`, a ctrl dep) names no node, or when those deps form a cycle
// (the message lists the cycle's ids). `index_of` maps every node's id to its index.
void check_dependencies(const EtGraph& graph,
                        const std::unordered_map<std::uint64_t, std::size_t>& index_of,
                        const std::string& file, bool ctrl_deps);

}  // namespace myriad::sim::chakra
