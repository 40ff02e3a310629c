# docs/reference.md, the verb reference in Markdown, is written by the
# built binary from its verb table (`devgraph completion reference`) and
# checked in, so it reads on the web without a build:
#
#   cmake -DDEVGRAPH=<binary> -DREFERENCE=<docs/reference.md> -DMODE=write|check
#         -P cmake/Reference.cmake
#
# write replaces the file (the `reference` target); check fails when the
# file differs from what the binary writes (the docs.ReferenceIsCurrent
# test, so CI catches a help text changed without its reference).
foreach(var DEVGRAPH REFERENCE MODE)
  if(NOT ${var})
    message(FATAL_ERROR "Reference.cmake needs -D${var}=...")
  endif()
endforeach()

execute_process(COMMAND ${DEVGRAPH} completion reference
                OUTPUT_VARIABLE _written RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "devgraph completion reference failed: ${_rc}")
endif()

if(MODE STREQUAL "write")
  file(WRITE ${REFERENCE} "${_written}")
elseif(MODE STREQUAL "check")
  set(_kept "")
  if(EXISTS ${REFERENCE})
    file(READ ${REFERENCE} _kept)
  endif()
  if(NOT _kept STREQUAL _written)
    message(FATAL_ERROR
            "docs/reference.md is not what the built devgraph writes from its verb table: "
            "run `cmake --build build --target reference` and commit docs/reference.md")
  endif()
else()
  message(FATAL_ERROR "Reference.cmake: MODE is write or check, not ${MODE}")
endif()
