// Input files read whole, within limits: a regular file (not a folder, not a
// device such as /dev/zero), no larger than a bound, with the system's reason
// when it cannot be read. Every reader of user input goes through here.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace myriad::models::scenario {

// Scenario and preset YAML: a scenario is a few kilobytes.
constexpr std::size_t kMaxScenarioBytes = std::size_t{16} << 20;
// JSON inputs (device profiles, calibration rows, check reports), and the
// values one may hold (read_json_file): a row of a rows file has a few dozen, a
// profile a few thousand, so 2 million is far past any file Myriad writes, and
// its document tree stays within a few hundred MB.
constexpr std::size_t kMaxJsonBytes = std::size_t{256} << 20;
constexpr std::size_t kMaxJsonValues = 2'000'000;

// The file's bytes. Throws std::runtime_error "PATH: cannot read WHAT: REASON"
// (no such file, a folder, permission denied, larger than the limit, ...).
std::string read_text_file(const std::string& path, std::string_view what, std::size_t limit);

// Why `path` cannot be an output, or "" when it can: its folder must exist and
// be writable, it must not be a folder, and it must not be one of `inputs` (the
// same file under any name). Checked before the work starts, so that hours of
// work are not lost to a bad path and no input is overwritten.
std::string output_problem(const std::string& path, const std::vector<std::string>& inputs);

// Writes `content` to `path` whole or not at all: to a temporary file in the same
// folder, flushed, then renamed over `path`; on a full disk the old file stays.
// Throws std::runtime_error "PATH: cannot write WHAT: REASON".
void write_file_atomically(const std::string& path, std::string_view content,
                           std::string_view what);

// Creates a new file beside `path`, named "." + its name + 6 random characters,
// exclusively (O_EXCL: never an existing file or a planted link), with the mode
// a new file gets; returns its descriptor and sets `temp` to its name, or -1
// with errno set. The caller registers it (PendingFile) and renames it over
// `path` when complete.
int create_temp_beside(const std::string& path, std::string& temp);

// Writes all of `content` to `fd`, through interruptions and short writes;
// false with errno set when it cannot.
bool write_all(int fd, std::string_view content);

// `text` with control bytes (terminal escapes, NUL, ...) written as \xNN, so
// that input echoed in a message cannot drive the terminal or cut it short.
std::string printable(std::string_view text);

}  // namespace myriad::models::scenario
