// cuBLASLt is loaded on first use (kernels/ops/cublaslt_loader.cpp), not linked:
// the library is found and its entry points answer, with or without a GPU.
#include <cublasLt.h>
#include <gtest/gtest.h>

namespace {

TEST(CublasLtLoader, FindsTheLibraryOnFirstUse) {
  EXPECT_STREQ(cublasLtGetStatusName(CUBLAS_STATUS_SUCCESS), "CUBLAS_STATUS_SUCCESS");
  EXPECT_STREQ(cublasLtGetStatusName(CUBLAS_STATUS_INVALID_VALUE), "CUBLAS_STATUS_INVALID_VALUE");
  cublasLtMatmulPreference_t preference = nullptr;
  ASSERT_EQ(cublasLtMatmulPreferenceCreate(&preference), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(cublasLtMatmulPreferenceDestroy(preference), CUBLAS_STATUS_SUCCESS);
}

}  // namespace
