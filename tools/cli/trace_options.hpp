// `myriad trace`: a scenario's step program as Chakra execution traces (export), and
// Chakra traces played as a step program (play). Its options, as the command line
// fills them (trace_options.cpp, CLI11), and the runs that read them (trace_command.cpp).
#pragma once

#include <optional>
#include <string>

#include "sim/chakra/et_set.hpp"
#include "sim/chakra/program_trace.hpp"
#include "sim/program/step_program.hpp"
#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

struct TraceExportOptions {
  ScenarioOptions scenario;
  std::string profile;
  std::string out_dir;
  std::string name = "step";
};

struct TracePlayOptions {
  std::string path;  // a manifest, a folder or one .et file
  bool ignore_ctrl_deps = false;
  std::string json_file;
  // --on SCENARIO: the communication priced on that scenario's cluster, the
  // collectives over its `group`
  ScenarioOptions on;
  std::string profile;
  std::string group = "dp";
};

// A trace read and made a step program (priced when `pricing` is given); none,
// with the error (and a hint for PyTorch's ctrl deps) on io.err.
struct TraceProgram {
  sim::chakra::EtSet set;
  sim::StepProgram program;
};
std::optional<TraceProgram> read_trace_program(const std::string& path, bool ignore_ctrl_deps,
                                               const sim::chakra::TracePricing* pricing,
                                               Streams io);
// "dp", "tp", "cp", "ep" (the options check the name).
models::GroupKind trace_group(const std::string& name);

int run_trace_export(const TraceExportOptions& o, Streams io, const Environment& env);
int run_trace_play(const TracePlayOptions& o, Streams io, const Environment& env);

}  // namespace myriad::cli
