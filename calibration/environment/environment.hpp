// The environment a measurement ran in, recorded beside every result row:
// who built what, from which commit, on which machine and device.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace myriad::calibration {

struct Environment {
  std::string myriad_version;
  std::string commit;
  std::string compiler;
  std::string build_type;
  std::string simgrid;
  std::string cuda_runtime;  // empty without CUDA
  std::string cuda_driver;
  std::string cpu;  // model name from /proc/cpuinfo, when readable
  unsigned cpu_threads = 0;
  std::string gpu;  // first device's name, or the reason there is none
};

// What this process runs on now.
Environment current_environment();
nlohmann::json to_json(const Environment& env);
// Several lines, "key: value", for `myriad --version`.
std::string to_text(const Environment& env);
// Now, in UTC, ISO 8601 to the second: what rows files record as their date.
std::string utc_now();

}  // namespace myriad::calibration
