# Every dependency comes from Debian's packages (see tools/setup.sh); nothing is
# downloaded at build time.

find_package(PkgConfig REQUIRED)
find_package(fmt REQUIRED)
find_package(yaml-cpp REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
# SimGrid ships no CMake configuration: pkg-config it is.
pkg_check_modules(SIMGRID REQUIRED IMPORTED_TARGET simgrid>=3.32)

if(MYRIAD_BUILD_TESTS)
  find_package(GTest REQUIRED)
endif()
# Google Benchmark times the calibration microbenchmarks, so it is always needed.
find_package(benchmark REQUIRED)

# MPI (OpenMPI from Debian) lets `mpirun -n N myriad plan|sweep` split a search
# among processes. Optional: AUTO uses it when found; the sanitizer and fuzzing
# builds leave it out (the MPI library's own allocations are not ours to check).
set(MYRIAD_MPI AUTO CACHE STRING "Build with MPI for plan and sweep across processes: AUTO, ON or OFF")
set_property(CACHE MYRIAD_MPI PROPERTY STRINGS AUTO ON OFF)
set(MYRIAD_HAVE_MPI OFF)
if(NOT MYRIAD_MPI STREQUAL "OFF" AND NOT MYRIAD_SANITIZE AND NOT MYRIAD_TSAN AND NOT MYRIAD_FUZZ)
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
