#include "calibration/environment/environment.hpp"

#include <gtest/gtest.h>

namespace myriad::calibration {
namespace {

TEST(Environment, RecordsBuildMachineAndDevice) {
  const Environment e = current_environment();
  EXPECT_FALSE(e.myriad_version.empty());
  EXPECT_FALSE(e.commit.empty());
  EXPECT_FALSE(e.compiler.empty());
  EXPECT_EQ(e.simgrid.rfind("3.", 0), 0u);
  EXPECT_GT(e.cpu_threads, 0u);
  EXPECT_FALSE(e.gpu.empty());  // a device, or why there is none
  const auto j = to_json(e);
  for (const char* key :
       {"myriad_version", "commit", "compiler", "simgrid", "cuda_runtime", "cpu", "cpu_threads",
        "cpu_last_level_cache_bytes", "gpu", "gpu_last_level_cache_bytes"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_NE(to_text(e).find("SimGrid: 3."), std::string::npos);
  EXPECT_GE(e.cpu_cache_bytes, 0);
  // Rows files say the GPU's L2 under their environment, or nothing.
  EXPECT_DOUBLE_EQ(measured_gpu_cache_bytes({{"gpu_last_level_cache_bytes", 52428800.0}}),
                   52428800.0);
  EXPECT_DOUBLE_EQ(measured_gpu_cache_bytes({{"gpu", "none"}}), 0);
  EXPECT_DOUBLE_EQ(measured_gpu_cache_bytes(nlohmann::json()), 0);
}

}  // namespace
}  // namespace myriad::calibration
