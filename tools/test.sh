#!/usr/bin/env bash
# Sets up, builds and runs Myriad's whole test suite with ctest.
#   tools/test.sh             warnings as errors, CUDA when nvcc is found, all tests
#   tools/test.sh --sanitize  the same tests built with clang, ASan and UBSan (host code, no
#                             CUDA), and the libFuzzer harnesses in the same build
#   tools/test.sh --fuzz      the harnesses (fuzz/): replay the corpora, then fuzz each for
#                             MYRIAD_FUZZ_SECONDS (default 15 s); builds them if --sanitize has not
#   tools/test.sh --tsan      what runs threads under ThreadSanitizer: the thread executor,
#                             campaign's job pool and runner, calibration's threads
#   tools/test.sh --lint      layering, file sizes, the models alone without the simulator,
#                             clang-format, and clang-tidy where code changed (tools/tidy.sh)
#   tools/test.sh --lint --all   the same with clang-tidy on every file
# Each mode prints its phases' times (`phase: ... took N s`) for docs/performance.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=${1:-normal}
"$root/tools/setup.sh"
jobs=$(nproc 2>/dev/null || echo 2)

phase_start=$SECONDS
phase() {  # phase NAME: the time since the previous phase ended
  echo "phase: $mode $1 took $((SECONDS - phase_start)) s"
  phase_start=$SECONDS
}

case "$mode" in
  normal)
    "$root/tools/build.sh" "$root/build"
    phase build
    cd "$root/build"
    ctest --output-on-failure -j "$jobs"
    phase tests
    ;;
  --sanitize)
    "$root/tools/sanitize_build.sh"
    phase build
    cd "$root/build-sanitize"
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    # The browser test checks the page, not the C++: the normal build runs it.
    ctest --output-on-failure -j "$jobs" --label-exclude "gpu|timing|browser"
    phase tests
    ;;
  --fuzz)
    "$root/tools/fuzz.sh" "${MYRIAD_FUZZ_SECONDS:-15}"
    phase fuzz
    ;;
  --tsan)
    # Only what runs threads, and the libraries under it: SimGrid's step engine is
    # single-threaded by design, and the command line adds no thread of its own
    # (campaign and plan hand theirs to sim's job pool, tested here).
    tsan_tests=(myriad_collectives_tests myriad_campaign_tests myriad_calibration_tests)
    "$root/tools/build.sh" "$root/build-tsan" -DMYRIAD_WERROR=ON -DMYRIAD_TSAN=ON \
      -DMYRIAD_CUDA=OFF -DMYRIAD_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=Debug \
      "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -g1" -- "${tsan_tests[@]}"
    phase build
    export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
    for t in "${tsan_tests[@]}"; do
      echo "tsan: $t"
      "$root/build-tsan/tests/$t" --gtest_brief=1
    done
    echo "tsan: clean"
    phase tests
    ;;
  --lint)
    all=${2:-}
    [[ -z $all || $all == --all ]] || { echo "usage: tools/test.sh --lint [--all]" >&2; exit 2; }
    cd "$root"
    tools/check_layering.sh
    tools/check_sizes.sh
    phase "layering and sizes"
    # The models alone (MYRIAD_SIMULATOR=OFF) configure without looking SimGrid,
    # CLI11 or Google Benchmark up, and build; the kernels and every test program
    # are compiled by the other phases.
    "$root/tools/build.sh" "$root/build-core" -DMYRIAD_WERROR=ON -DMYRIAD_SIMULATOR=OFF \
      -DMYRIAD_CUDA=OFF -- myriad_models >/dev/null
    if grep -Eq '^(SIMGRID_[A-Z_]*|CLI11_DIR|benchmark_DIR):' "$root/build-core/CMakeCache.txt"; then
      echo "lint: MYRIAD_SIMULATOR=OFF looked up a simulator dependency" >&2
      exit 1
    fi
    echo "lint: the models configure and build alone"
    phase "models alone"
    mapfile -t sources < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')
    echo "lint: clang-format on ${#sources[@]} files"
    clang-format --dry-run -Werror "${sources[@]}"
    phase clang-format
    # clang-tidy reads the standard build's compile commands: build it first.
    "$root/tools/build.sh" "$root/build"
    phase "standard build"
    tools/tidy.sh "$root/build" $all
    phase clang-tidy
    echo "lint: clean"
    ;;
  *)
    echo "usage: tools/test.sh [--sanitize | --fuzz | --tsan | --lint [--all]]" >&2
    exit 2
    ;;
esac
