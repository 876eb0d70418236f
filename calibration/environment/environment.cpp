#include "calibration/environment/environment.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

#include <unistd.h>

#include "kernels/device/device_query.hpp"
#include "myriad_commit.hpp"
#include "sim/engine/engine_config.hpp"

namespace myriad::calibration {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

// The highest level of cpu0's data or unified caches, from sysfs ("32768K").
double cpu_cache_bytes() {
  double best = 0;
  int best_level = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/", index);
    std::ifstream level_in(dir + "level");
    std::ifstream size_in(dir + "size");
    std::ifstream type_in(dir + "type");
    int level = 0;
    std::string size;
    std::string type;
    if (!(level_in >> level) || !(size_in >> size) || !(type_in >> type)) continue;
    if (type == "Instruction" || size.empty() || level < best_level) continue;
    double bytes = 0;
    try {
      bytes = std::stod(size);
    } catch (const std::exception&) {
      continue;
    }
    const char unit = size.back();
    if (unit == 'K') bytes *= 1024;
    if (unit == 'M') bytes *= 1024 * 1024;
    if (unit == 'G') bytes *= 1024.0 * 1024 * 1024;
    best = bytes;
    best_level = level;
  }
  if (best > 0) return best;
  // Without sysfs' cache directories (some virtual machines): the C library's
  // reading of the processor's own description.
  for (const int name : {_SC_LEVEL4_CACHE_SIZE, _SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    const long bytes = sysconf(name);
    if (bytes > 0) return static_cast<double>(bytes);
  }
  return 0;
}

}  // namespace

double measured_gpu_cache_bytes(const nlohmann::json& environment) {
  const char* key = "gpu_last_level_cache_bytes";
  if (!environment.is_object() || !environment.contains(key)) return 0;
  const auto& v = environment.at(key);
  return v.is_number() && v.get<double>() > 0 ? v.get<double>() : 0;
}

Environment current_environment() {
  Environment e;
  e.myriad_version = MYRIAD_VERSION;
  e.commit = MYRIAD_GIT_COMMIT;
  e.compiler = fmt::format("{} {}", MYRIAD_COMPILER_ID, __VERSION__);
  e.build_type = MYRIAD_BUILD_TYPE;
  e.simgrid = sim::simgrid_version();
  const kernels::DeviceReport devices = kernels::query_devices();
  e.cuda_runtime = devices.cuda_runtime;
  e.cuda_driver = devices.cuda_driver;
  e.cpu = cpu_model();
  e.cpu_threads = std::thread::hardware_concurrency();
  e.cpu_cache_bytes = cpu_cache_bytes();
  if (!devices.devices.empty()) {
    const auto& d = devices.devices.front();
    e.gpu_cache_bytes = d.l2_bytes;
    e.gpu = fmt::format("{} (sm_{}{}, {} of {} devices)", d.name, d.compute_major, d.compute_minor,
                        1, devices.devices.size());
  } else {
    e.gpu = devices.note;
  }
  return e;
}

nlohmann::json to_json(const Environment& e) {
  return {{"myriad_version", e.myriad_version},
          {"commit", e.commit},
          {"compiler", e.compiler},
          {"build_type", e.build_type},
          {"simgrid", e.simgrid},
          {"cuda_runtime", e.cuda_runtime},
          {"cuda_driver", e.cuda_driver},
          {"cpu", e.cpu},
          {"cpu_threads", e.cpu_threads},
          {"cpu_last_level_cache_bytes", e.cpu_cache_bytes},
          {"gpu", e.gpu},
          {"gpu_last_level_cache_bytes", e.gpu_cache_bytes}};
}

std::string to_text(const Environment& e) {
  return fmt::format(
      "myriad {} (commit {})\n  compiler: {}, {} build\n  SimGrid: {}\n  CUDA: {}\n  CPU: {} "
      "({} threads{})\n  GPU: {}{}\n",
      e.myriad_version, e.commit, e.compiler, e.build_type, e.simgrid,
      e.cuda_runtime.empty() ? "not built"
                             : fmt::format("runtime {}, driver {}", e.cuda_runtime,
                                           e.cuda_driver.empty() ? "none" : e.cuda_driver),
      e.cpu, e.cpu_threads,
      e.cpu_cache_bytes > 0
          ? fmt::format(", {:.3g} MiB last-level cache", e.cpu_cache_bytes / (1 << 20))
          : "",
      e.gpu,
      e.gpu_cache_bytes > 0 ? fmt::format(" ({:.3g} MiB L2)", e.gpu_cache_bytes / (1 << 20)) : "");
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace myriad::calibration
