#include "kernels/ops/cuda_library.hpp"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <string>
#include <vector>

namespace myriad::kernels::ops {

void* open_cuda_library(const std::string& soname, std::string& error) {
  std::vector<std::string> candidates;
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cudaGetDeviceCount), &info) != 0 &&
      info.dli_fname != nullptr) {
    const std::string cudart(info.dli_fname);
    const auto slash = cudart.rfind('/');
    if (slash != std::string::npos) candidates.push_back(cudart.substr(0, slash + 1) + soname);
  }
  candidates.push_back(soname);
  error.clear();
  for (const auto& path : candidates) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) return handle;
    const char* why = dlerror();
    error += (error.empty() ? "" : "; ") + std::string(why != nullptr ? why : path);
  }
  return nullptr;
}

}  // namespace myriad::kernels::ops
