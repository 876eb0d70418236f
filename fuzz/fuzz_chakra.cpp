// Fuzzes the Chakra execution-trace reader (sim/chakra/et_io.hpp): bytes in, an
// EtGraph or an EtError naming the problem out; never a crash, a hang or an
// allocation beyond the input's size. The graph checks run with ctrl deps
// unchecked, as for traces converted from PyTorch, so that more inputs get past
// them to the writer.
//
// Property: what is read writes, and what is written reads back and writes again to
// the same bytes (bytes, not graphs, are compared: a NaN attribute is not equal to
// itself).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <sstream>
#include <string>
#include <string_view>

#include "fuzz/property.hpp"
#include "sim/chakra/et_graph.hpp"
#include "sim/chakra/et_io.hpp"

namespace {

std::string write(const myriad::sim::chakra::EtGraph& graph,
                  const myriad::sim::chakra::EtGraphChecks& checks) {
  std::ostringstream out;
  myriad::sim::chakra::write_et(graph, out, "fuzz.et", checks);
  return out.str();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace et = myriad::sim::chakra;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  et::EtReadOptions options;
  options.checks.ctrl_deps = false;
  options.max_nodes = 1 << 16;
  et::EtGraph graph;
  try {
    graph = et::read_et_bytes(bytes, "fuzz.et", options);
  } catch (const et::EtError&) {
    return 0;  // rejected, with a message
  }
  std::string written;
  std::string again;
  try {
    written = write(graph, options.checks);
    again = write(et::read_et_bytes(written, "written.et", options), options.checks);
  } catch (const std::exception& e) {
    myriad::fuzz::require(false, "a trace read is written and read again", e.what());
  }
  myriad::fuzz::require(
      again == written, "a trace written reads back to the same bytes",
      std::to_string(written.size()) + " bytes, then " + std::to_string(again.size()));
  return 0;
}
