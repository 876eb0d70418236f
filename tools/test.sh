#!/usr/bin/env bash
# Sets up, builds and runs Myriad's whole test suite with ctest.
#   tools/test.sh             warnings as errors, CUDA when nvcc is found, all tests
#   tools/test.sh --sanitize  the same tests built with ASan and UBSan (host code, no CUDA)
#   tools/test.sh --tsan      the threaded parts (thread executor, campaign's pool,
#                             calibration, the campaign verb) under ThreadSanitizer
#   tools/test.sh --fuzz      the libFuzzer harnesses (fuzz/), 60 s each, ASan and UBSan
#   tools/test.sh --lint      the layering check, the models and kernels built alone,
#                             clang-format and clang-tidy over the sources
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-normal}
"$root/tools/setup.sh"
jobs=$(nproc 2>/dev/null || echo 2)

case "$mode" in
  normal)
    "$root/tools/build.sh" "$root/build"
    cd "$root/build"
    ctest --output-on-failure -j "$jobs"
    ;;
  --sanitize)
    "$root/tools/build.sh" "$root/build-sanitize" -DMYRIAD_WERROR=ON -DMYRIAD_SANITIZE=ON \
      -DMYRIAD_CUDA=OFF -DMYRIAD_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=Debug
    cd "$root/build-sanitize"
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    # The browser test checks the page, not the C++: the normal build runs it.
    ctest --output-on-failure -j "$jobs" --label-exclude "gpu|timing|browser"
    ;;
  --tsan)
    # Only what runs threads: SimGrid's step engine is single-threaded by design.
    tsan_tests=(myriad_collectives_tests myriad_campaign_tests myriad_calibration_tests)
    "$root/tools/build.sh" "$root/build-tsan" -DMYRIAD_WERROR=ON -DMYRIAD_TSAN=ON \
      -DMYRIAD_CUDA=OFF -DMYRIAD_BUILD_BENCHMARKS=OFF -- "${tsan_tests[@]}" myriad
    export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
    for t in "${tsan_tests[@]}"; do
      echo "tsan: $t"
      "$root/build-tsan/tests/$t" --gtest_brief=1
    done
    echo "tsan: myriad campaign, 4 threads"
    "$root/build-tsan/tools/myriad" campaign --threads 4 \
      "$root/scenarios/examples/llama3-405b-h100-16384-campaign.yaml" >/dev/null
    echo "tsan: clean"
    ;;
  --fuzz)
    "$root/tools/fuzz.sh" "${MYRIAD_FUZZ_SECONDS:-60}"
    ;;
  --lint)
    "$root/tools/build.sh" "$root/build"
    cd "$root"
    tools/check_layering.sh
    # The models and kernels alone (MYRIAD_SIMULATOR=OFF) configure without looking
    # SimGrid, CLI11 or Google Benchmark up, and build.
    "$root/tools/build.sh" "$root/build-core" -DMYRIAD_WERROR=ON -DMYRIAD_SIMULATOR=OFF \
      -DMYRIAD_CUDA=OFF >/dev/null
    if grep -Eq '^(SIMGRID_[A-Z_]*|CLI11_DIR|benchmark_DIR):' "$root/build-core/CMakeCache.txt"; then
      echo "lint: MYRIAD_SIMULATOR=OFF looked up a simulator dependency" >&2
      exit 1
    fi
    echo "lint: models and kernels build alone"
    mapfile -t sources < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')
    echo "lint: clang-format on ${#sources[@]} files"
    clang-format --dry-run -Werror "${sources[@]}"
    mapfile -t units < <(git ls-files 'models/*.cpp' 'kernels/*.cpp' 'sim/*.cpp' 'calibration/*.cpp' 'tools/*.cpp')
    echo "lint: clang-tidy on ${#units[@]} files"
    # clang-tidy counts the warnings it suppressed in system headers on stderr: drop that line.
    printf '%s\n' "${units[@]}" | xargs -P "$jobs" -n 4 clang-tidy -p "$root/build" --quiet \
      2> >(grep -v ' warnings generated\.$' >&2)
    echo "lint: clean"
    ;;
  *)
    echo "usage: tools/test.sh [--sanitize | --tsan | --fuzz | --lint]" >&2
    exit 2
    ;;
esac
