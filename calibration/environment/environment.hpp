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
  // The CPU's last-level cache (the highest level of cpu0's caches in sysfs, else
  // the C library's sysconf) and the first GPU's L2 (cudaDeviceProp::l2CacheSize),
  // in bytes; 0 when unknown.
  double cpu_cache_bytes = 0;
  double gpu_cache_bytes = 0;
  std::string gpu;  // first device's name, or the reason there is none
};

// The GPU's L2 as a rows file's environment records it
// ("gpu_last_level_cache_bytes"); 0 where it does not (files written before
// 2026-12-06, imports). The fit leaves copies that fit in it out of the GPU's
// memory bandwidth: they measure the cache. (Not the CPU's: its composites run
// from its cache as its copies do.)
double measured_gpu_cache_bytes(const nlohmann::json& environment);

// What this process runs on now.
Environment current_environment();
nlohmann::json to_json(const Environment& env);
// Several lines, "key: value", for `myriad --version`.
std::string to_text(const Environment& env);
// Now, in UTC, ISO 8601 to the second: what rows files record as their date.
std::string utc_now();

}  // namespace myriad::calibration
