// How a reduction combines two elements, shared by the CPU and CUDA backends.
#pragma once

namespace myriad::kernels::ops {

enum class ReduceOp { sum, max, min };

}  // namespace myriad::kernels::ops
