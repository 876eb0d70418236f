# Precompiled headers where they pay. Measured with g++ 12 at -O2 -g1 on the development
# machine (2 cores, 2026-12-04), the time of a translation unit is code generation more
# than parsing, and loading a 108-133 MB .gch costs about what parsing the headers did:
#   CLI11 (one verb's options):  6.8 s -> 5.3 s a file; its .gch takes 5.1 s  (adopted)
#   nlohmann/json + fmt:         14.13 s -> 14.07 s (tools/cli/sweep_command.cpp)
#   gtest + json + fmt:          6.36 s -> 5.89 s (a test file); 5.6 s a program's .gch
# So only the command line's library (tools/CMakeLists.txt: myriad_cli, eleven files
# that include CLI11) precompiles. ccache caches them (the sloppiness set in
# cmake/MyriadCompilerCache.cmake). MYRIAD_PCH=OFF builds without.
option(MYRIAD_PCH "Precompile CLI11 for the command line's option files" ON)

# myriad_precompile(TARGET HEADER...): HEADER as <name.hpp>, included before each
# source of TARGET (a C++-only target: nvcc has no precompiled headers).
function(myriad_precompile target)
  if(MYRIAD_PCH)
    target_precompile_headers(${target} PRIVATE ${ARGN})
  endif()
endfunction()
