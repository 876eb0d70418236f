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
