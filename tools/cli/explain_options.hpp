// `myriad explain [SECTION]`: every scenario key with its type, unit, default and
// meaning, the presets or the device profiles. The run (explain_command.cpp); its
// one positional option is wired in explain_options.cpp (CLI11).
#pragma once

#include <string>

#include "tools/cli/verb_support.hpp"

namespace myriad::cli {

// `requested`: a section, a key, `presets` or `profiles`; empty for every key.
int run_explain(const std::string& requested, Streams io, const Environment& env);

}  // namespace myriad::cli
