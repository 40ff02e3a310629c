# Writes devgraph's man pages and shell completion scripts with the built
# binary, from its verb table (src/cli/help.h, src/cli/completion.h):
#
#   cmake -DDEVGRAPH=<binary> -DMAN_DIR=<dir> -DCOMPLETIONS_DIR=<dir>
#         -P cmake/GenerateDocs.cmake
#
# MAN_DIR is made afresh, so a page of a verb that is gone does not stay.
foreach(var DEVGRAPH MAN_DIR COMPLETIONS_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "GenerateDocs.cmake needs -D${var}=...")
  endif()
endforeach()

file(REMOVE_RECURSE ${MAN_DIR})
file(MAKE_DIRECTORY ${MAN_DIR} ${COMPLETIONS_DIR})
execute_process(COMMAND ${DEVGRAPH} completion man ${MAN_DIR}
                OUTPUT_QUIET RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "devgraph completion man failed: ${_rc}")
endif()

function(_devgraph_completion shell file)
  execute_process(COMMAND ${DEVGRAPH} completion ${shell}
                  OUTPUT_FILE ${COMPLETIONS_DIR}/${file} RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "devgraph completion ${shell} failed: ${_rc}")
  endif()
endfunction()
_devgraph_completion(bash devgraph.bash)
_devgraph_completion(zsh _devgraph)
_devgraph_completion(fish devgraph.fish)
