#include "calibration/environment/environment.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <fstream>
#include <thread>

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

}  // namespace

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
  if (!devices.devices.empty()) {
    const auto& d = devices.devices.front();
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
          {"gpu", e.gpu}};
}

std::string to_text(const Environment& e) {
  return fmt::format(
      "myriad {} (commit {})\n  compiler: {}, {} build\n  SimGrid: {}\n  CUDA: {}\n  CPU: {} "
      "({} threads)\n  GPU: {}\n",
      e.myriad_version, e.commit, e.compiler, e.build_type, e.simgrid,
      e.cuda_runtime.empty() ? "not built"
                             : fmt::format("runtime {}, driver {}", e.cuda_runtime,
                                           e.cuda_driver.empty() ? "none" : e.cuda_driver),
      e.cpu, e.cpu_threads, e.gpu);
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
