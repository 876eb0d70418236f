# MYRIAD_CUDA=AUTO|ON|OFF. AUTO enables CUDA when the toolkit's nvcc is found,
# on the PATH or in /usr/local/cuda. CUDA code is compiled for sm_80 and sm_90 unless
# the configure names others (-DCMAKE_CUDA_ARCHITECTURES=90 builds for the H200 alone).

set(MYRIAD_HAVE_CUDA OFF)
if(NOT MYRIAD_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER)
    find_program(MYRIAD_NVCC nvcc HINTS /usr/local/cuda/bin ENV CUDA_HOME PATH_SUFFIXES bin)
    if(MYRIAD_NVCC)
      set(CMAKE_CUDA_COMPILER "${MYRIAD_NVCC}")
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES OR CMAKE_CUDA_ARCHITECTURES STREQUAL "")
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 knows no CUDA20 for nvcc; .cu files stay C++17
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(MYRIAD_HAVE_CUDA ON)
  elseif(MYRIAD_CUDA STREQUAL "ON")
    message(FATAL_ERROR "MYRIAD_CUDA=ON but no CUDA compiler (nvcc) was found; "
                        "install the CUDA toolkit or configure with -DMYRIAD_CUDA=OFF")
  endif()
endif()
message(STATUS "Myriad: CUDA backends ${MYRIAD_HAVE_CUDA} (MYRIAD_CUDA=${MYRIAD_CUDA})")
