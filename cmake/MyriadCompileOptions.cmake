# Compiler warnings and sanitizers, applied to every Myriad target through
# the interface library `myriad_options`.

add_library(myriad_options INTERFACE)
target_compile_options(myriad_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion
                             -Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual
                             -Wimplicit-fallthrough>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>)
# GCC 12 at -O3 (Release, as calibration/gpu/bundle.sh builds) takes std::string's
# `"." + name` for a copy of 2^63 overlapping bytes (-Wrestrict; GCC bugs 105329,
# 105651): a false positive in libstdc++'s inlined code, not in ours.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(myriad_options INTERFACE
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Release>>:-Wno-restrict>)
endif()
# RelWithDebInfo (the standard configuration) with line tables (-g1) rather than full
# debug information: stack traces, perf and sanitizer reports still name each function,
# file and line, and the build takes about a quarter less time (measured on 2 cores:
# 19.0 s -> 14.1 s for tools/cli/sweep_command.cpp, 9.0 s -> 6.4 s for a test file).
# For a debugger's view of variables, build Debug or configure MYRIAD_FULL_DEBUG_INFO=ON.
# (A target's options follow CMAKE_CXX_FLAGS_RELWITHDEBINFO's -g, and the last -g wins.)
if(NOT MYRIAD_FULL_DEBUG_INFO)
  target_compile_options(myriad_options INTERFACE
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:RelWithDebInfo>>:-g1>)
endif()
if(MYRIAD_WERROR)
  target_compile_options(myriad_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-Werror>
    "$<$<COMPILE_LANGUAGE:CUDA>:SHELL:-Werror all-warnings>"
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Werror>)
endif()

if(MYRIAD_SANITIZE)
  set(_myriad_san -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_compile_options(myriad_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_myriad_san}>)
  target_link_options(myriad_options INTERFACE ${_myriad_san})
  if(MYRIAD_FUZZ)
    # libFuzzer's coverage on every library, so that the harnesses link against
    # the same objects the sanitizer tests run (one sanitizer build, not two).
    target_compile_options(myriad_options INTERFACE
      $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link>)
  endif()
  # SimGrid's raw contexts confuse ASan; sanitizer builds run its thread contexts.
  target_compile_definitions(myriad_options INTERFACE MYRIAD_SANITIZE=1)
endif()

if(MYRIAD_TSAN)
  if(MYRIAD_SANITIZE)
    message(FATAL_ERROR "MYRIAD_TSAN and MYRIAD_SANITIZE cannot be combined: build them apart")
  endif()
  set(_myriad_tsan -fsanitize=thread -fno-omit-frame-pointer)
  # SimGrid's headers use atomic_thread_fence, which TSan cannot model; the step
  # engine runs on one thread, so the warning (an error under -Werror) is moot.
  target_compile_options(myriad_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:${_myriad_tsan} $<$<CXX_COMPILER_ID:GNU>:-Wno-tsan>>)
  target_link_options(myriad_options INTERFACE ${_myriad_tsan})
endif()
