# The layering, enforced by the build: models <- kernels <- sim <- calibration <-
# tools. A library's include directory is a view of the source tree that holds
# one link, to its own folder; it sees the headers of the libraries it links
# through theirs, and no others. An upward include fails to compile.
# (Sideways includes inside one library, such as sim/step reaching into
# sim/campaign, are checked by tools/check_layering.sh.)
function(myriad_headers target folder)
  set(view "${CMAKE_BINARY_DIR}/include/${target}")
  file(MAKE_DIRECTORY "${view}")
  if(NOT EXISTS "${view}/${folder}")
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/${folder}" "${view}/${folder}" SYMBOLIC)
  endif()
  target_include_directories(${target} PUBLIC "${view}")
endfunction()
