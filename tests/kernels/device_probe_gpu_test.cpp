// Runs only where a GPU is visible (ctest label `gpu`); skips cleanly elsewhere.
#include <gtest/gtest.h>

#include "kernels/device/device_query.hpp"

namespace myriad::kernels {
namespace {

TEST(DeviceProbe, KernelRunsOnEveryVisibleDevice) {
  const DeviceReport r = query_devices();
  if (r.devices.empty()) GTEST_SKIP() << r.note;
  for (const auto& d : r.devices) {
    SCOPED_TRACE(d.name);
    EXPECT_NO_THROW(run_probe_kernel(d.index));
    EXPECT_GT(d.memory_bytes, 0);
    EXPECT_GT(d.multiprocessors, 0);
  }
}

}  // namespace
}  // namespace myriad::kernels
