# ccache, when it is installed and the user chose no launcher of their own.
# The cache lives outside the build tree (ccache's own default, ~/.cache/ccache),
# so a fresh clone, as CI makes one, reuses what earlier builds compiled:
# paths are hashed relative to the source root and the working directory is
# left out of the hash, so the same sources in another folder hit the cache.
# CI (.ci/run) relies on it: a change to one file recompiles that file alone.
find_program(MYRIAD_CCACHE ccache)
if(MYRIAD_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  # The sloppiness lets precompiled headers (cmake/MyriadPrecompiledHeaders.cmake)
  # be cached: ccache then hashes the .gch/.pch, itself restored from the cache.
  set(_myriad_launcher "${CMAKE_COMMAND}" -E env "CCACHE_BASEDIR=${CMAKE_SOURCE_DIR}"
                       CCACHE_NOHASHDIR=1
                       CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
                       "${MYRIAD_CCACHE}")
  set(CMAKE_CXX_COMPILER_LAUNCHER ${_myriad_launcher})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${_myriad_launcher})
  message(STATUS "Myriad: compiling through ${MYRIAD_CCACHE}")
endif()
