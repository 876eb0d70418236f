// Chakra ET files: one rank's trace as bytes and back. A file is a GlobalMetadata
// message, then Node messages, each preceded by its size in bytes as a base-128
// varint (protobuf's length-delimited framing, what Chakra's tools call
// encode_message and decode_message; schema: sim/chakra/et_def.proto).
//
// The reader is strict and bounded: every problem is an EtError naming the file,
// the byte offset or the node (index in the file and id) and what was expected.
// A size prefix beyond the end of the file, more nodes than max_nodes, a file over
// max_bytes, a message that does not parse, a field or value kind this schema does
// not know, an unknown node type or collective, a typed attribute of the wrong kind,
// duplicate ids, dependencies on missing nodes and cycles are all errors; no input
// crashes it (fuzz/fuzz_chakra.cpp). Attributes it has no field for are kept.
#pragma once

#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <string_view>

#include "sim/chakra/et_graph.hpp"

namespace myriad::sim::chakra {

struct EtReadOptions {
  EtGraphChecks checks;
  // Bounds on what one file may make the reader hold. An EtNode takes some 500 bytes
  // in memory however few it takes in the file (3 bytes at the least), so the node
  // count bounds memory: 2^22 nodes, about 2 GiB, is far above one rank's step
  // program (tens of thousands of nodes) and Chakra's sample traces (3,664). Raise
  // them for a larger trace.
  std::uint64_t max_nodes = std::uint64_t{1} << 22;
  std::uint64_t max_bytes = std::uint64_t{8} << 30;
};

// Writes `graph` to `out` after checking it (check_et_graph with `checks`; `file`
// names it in errors). Throws EtError on a graph that cannot be written or a
// stream that fails.
void write_et(const EtGraph& graph, std::ostream& out, const std::string& file = "<stream>",
              const EtGraphChecks& checks = {});
void write_et_file(const EtGraph& graph, const std::filesystem::path& path,
                   const EtGraphChecks& checks = {});

// Reads one rank's trace; `file` names it in errors.
EtGraph read_et(std::istream& in, const std::string& file, const EtReadOptions& options = {});
EtGraph read_et_bytes(std::string_view bytes, const std::string& file,
                      const EtReadOptions& options = {});
EtGraph read_et_file(const std::filesystem::path& path, const EtReadOptions& options = {});

// The framing's size prefix: `value` as a base-128 varint, low 7 bits first, the
// high bit set on every byte but the last.
void append_varint(std::string& out, std::uint64_t value);

}  // namespace myriad::sim::chakra
