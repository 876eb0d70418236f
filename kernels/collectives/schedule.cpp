#include "kernels/collectives/schedule.hpp"

#include <fmt/format.h>

namespace myriad::kernels::collectives {

std::string to_string(StepKind kind) {
  switch (kind) {
    case StepKind::send:
      return "send";
    case StepKind::recv:
      return "recv";
    case StepKind::recv_reduce:
      return "recv_reduce";
    case StepKind::copy:
      return "copy";
  }
  return "unknown";
}

std::string describe(const Step& step) {
  const std::string chunks =
      step.count == 1 ? fmt::format("chunk {}", step.chunk)
                      : fmt::format("chunks {}..{}", step.chunk, step.chunk + step.count - 1);
  switch (step.kind) {
    case StepKind::send:
      return fmt::format("send {} ({} bytes) to rank {} on channel {}", chunks, step.bytes,
                         step.peer, step.channel);
    case StepKind::recv:
    case StepKind::recv_reduce:
      return fmt::format("{} {} ({} bytes) from rank {} on channel {}", to_string(step.kind),
                         chunks, step.bytes, step.peer, step.channel);
    case StepKind::copy:
      return fmt::format("copy {} chunk(s) from chunk {} onto {} ({} bytes)", step.count,
                         step.src_chunk, chunks, step.bytes);
  }
  return "unknown step";
}

}  // namespace myriad::kernels::collectives
