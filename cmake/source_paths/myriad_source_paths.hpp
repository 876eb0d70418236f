// Where the source tree's data folders are, for the programs that run from the build
// tree without installation (myriad, the tests, the fuzzers, the benchmarks). The paths
// live in one generated source file (cmake/source_paths/myriad_source_paths.cpp.in), not
// in compile definitions: a definition naming the clone's folder would change the
// command line of every file using it, and ccache would miss them all in another clone.
#pragma once

namespace myriad::source_paths {

const char* scenario_dir();     // scenarios/: presets and examples
const char* profile_dir();      // calibration/profiles/
const char* report_dir();       // tools/report/: the HTML report's template and npm packages
const char* test_data_dir();    // tests/scenarios/
const char* test_preset_dir();  // tests/scenarios/presets/

}  // namespace myriad::source_paths

#define MYRIAD_SCENARIO_DIR (::myriad::source_paths::scenario_dir())
#define MYRIAD_PROFILE_DIR (::myriad::source_paths::profile_dir())
#define MYRIAD_REPORT_DIR (::myriad::source_paths::report_dir())
#define MYRIAD_TEST_DATA_DIR (::myriad::source_paths::test_data_dir())
#define MYRIAD_TEST_PRESET_DIR (::myriad::source_paths::test_preset_dir())
