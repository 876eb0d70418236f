#include "kernels/device/device_query.hpp"

#include <gtest/gtest.h>

namespace myriad::kernels {
namespace {

// With or without CUDA, with or without a GPU, the query answers and explains.
TEST(DeviceQuery, AnswersEverywhere) {
  const DeviceReport r = query_devices();
  if (r.devices.empty()) {
    EXPECT_FALSE(r.note.empty());
  }
#ifdef MYRIAD_HAVE_CUDA
  EXPECT_TRUE(r.cuda_built);
  EXPECT_EQ(r.compiled_archs, "sm_80 sm_90");
  EXPECT_FALSE(r.cuda_runtime.empty());
#else
  EXPECT_FALSE(r.cuda_built);
  EXPECT_THROW(run_probe_kernel(0), std::logic_error);
#endif
}

}  // namespace
}  // namespace myriad::kernels
