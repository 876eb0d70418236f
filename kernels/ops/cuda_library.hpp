// Opening a CUDA library on first use instead of linking it (cuBLASLt, cuDNN):
// beside libcudart, since a CUDA install keeps its libraries together, else by
// soname through the loader's search path.
#pragma once

#include <string>

namespace myriad::kernels::ops {

// dlopen's handle, or nullptr with `error` naming every place tried and why it failed.
void* open_cuda_library(const std::string& soname, std::string& error);

}  // namespace myriad::kernels::ops
