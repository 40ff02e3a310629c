# DEVGRAPH_SANITIZE=address;undefined (or thread) builds the whole tree with
# those sanitizers. CI uses DEVGRAPH_SANITIZED_TWIN instead (below).
set(DEVGRAPH_SANITIZE "" CACHE STRING "Semicolon-separated sanitizers (address, undefined, thread)")

#
# devgraph_sanitizers instruments the code compiled with it (the library
# and the executable) and links the runtime; devgraph_sanitizers_link only
# links the runtime. Test code links against an instrumented library but is
# not instrumented itself: the checks are for devgraph's code, and compiling
# every test file with them took a third of CI's sanitizer build.
#
# DEVGRAPH_SANITIZED_TWIN (the top CMakeLists.txt) builds, in the same tree,
# a second library and binary with AddressSanitizer and UBSan, and links the
# same test objects a second time against them: CI's sanitized suite costs
# one more compile of the library, not of the tests.
#
# devgraph_sanitizer_targets(NAME SANITIZERS) makes the two targets for one
# list of sanitizers (none when the list is empty).
function(devgraph_sanitizer_targets name sanitizers)
  add_library(${name} INTERFACE)
  add_library(${name}_link INTERFACE)
  if(sanitizers)
    list(JOIN sanitizers "," _san)
    target_compile_options(${name} INTERFACE
        -fsanitize=${_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
    # Not position independent: the sanitizers' per-check data holds over a
    # million pointers, each a relocation the loader applies at every start
    # of a PIE executable. Linked at a fixed address, a sanitized devgraph
    # starts in a third of the time, and the suite starts thousands of them.
    target_link_options(${name}_link INTERFACE -fsanitize=${_san} -no-pie)
    if("address" IN_LIST sanitizers AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      # No redzones around globals. UBSan keeps a static record for every
      # check it compiles in (about a million in the library), and ASan
      # padded each one to a redzone and registered it: .data grew to over
      # 100 MB, which every sanitized process registered at start and
      # LeakSanitizer scanned at exit, about a second per process in a
      # suite that starts thousands. What goes unchecked is an overflow of
      # a global array (the library's globals are constant tables and
      # strings); heap, stack and use-after-free stay checked.
      target_compile_options(${name} INTERFACE --param=asan-globals=0)
    endif()
  endif()
  target_link_libraries(${name} INTERFACE ${name}_link)
endfunction()

devgraph_sanitizer_targets(devgraph_sanitizers "${DEVGRAPH_SANITIZE}")
