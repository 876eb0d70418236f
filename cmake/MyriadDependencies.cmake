# Every dependency comes from Debian's packages (see tools/setup.sh); nothing is
# downloaded at build time. What models and kernels need is found here; SimGrid
# (sim/), Google Benchmark (calibration/, the benchmarks) and CLI11 (tools/) by
# the folders that use them, so that MYRIAD_SIMULATOR=OFF needs none of them.

find_package(fmt REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)

if(MYRIAD_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()

# MPI (OpenMPI from Debian) lets `mpirun -n N myriad plan|sweep` split a search
# among processes. Optional: AUTO uses it when found; the sanitizer and fuzzing
# builds leave it out (the MPI library's own allocations are not ours to check).
set(MYRIAD_MPI AUTO CACHE STRING "Build with MPI for plan and sweep across processes: AUTO, ON or OFF")
set_property(CACHE MYRIAD_MPI PROPERTY STRINGS AUTO ON OFF)
set(MYRIAD_HAVE_MPI OFF)
if(MYRIAD_SIMULATOR AND NOT MYRIAD_MPI STREQUAL "OFF" AND NOT MYRIAD_SANITIZE AND NOT MYRIAD_TSAN AND NOT MYRIAD_FUZZ)
  if(MYRIAD_MPI STREQUAL "ON")
    find_package(MPI REQUIRED COMPONENTS CXX)
  else()
    find_package(MPI QUIET COMPONENTS CXX)
  endif()
  if(MPI_CXX_FOUND)
    set(MYRIAD_HAVE_MPI ON)
  endif()
endif()
message(STATUS "Myriad: MPI ${MYRIAD_HAVE_MPI}")

# GLPK (Debian's libglpk-dev) solves m-SCT's linear program (models/place/sct_lp.cpp).
# Optional: without it m-SCT takes greedy favourite children and says so in its
# placement's note (and `myriad place` in its report).
set(MYRIAD_GLPK AUTO CACHE STRING "Solve m-SCT's LP with GLPK: AUTO (when found), ON or OFF")
set_property(CACHE MYRIAD_GLPK PROPERTY STRINGS AUTO ON OFF)
set(MYRIAD_HAVE_GLPK OFF)
if(NOT MYRIAD_GLPK STREQUAL "OFF")
  find_path(GLPK_INCLUDE_DIR glpk.h)
  find_library(GLPK_LIBRARY glpk)
  if(GLPK_INCLUDE_DIR AND GLPK_LIBRARY)
    set(MYRIAD_HAVE_GLPK ON)
  elseif(MYRIAD_GLPK STREQUAL "ON")
    message(FATAL_ERROR "MYRIAD_GLPK=ON but glpk.h or libglpk was not found (apt-get install libglpk-dev)")
  endif()
endif()
message(STATUS "Myriad: GLPK for m-SCT's LP ${MYRIAD_HAVE_GLPK}")
