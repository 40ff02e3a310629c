# DEVGRAPH_SANITIZE=address;undefined builds every target with those
# sanitizers. CI runs the whole suite once in this configuration.
set(DEVGRAPH_SANITIZE "" CACHE STRING "Semicolon-separated sanitizers (address, undefined, thread)")

#
# devgraph_sanitizers instruments the code compiled with it (the library
# and the executable) and links the runtime; devgraph_sanitizers_link only
# links the runtime. Test code links against an instrumented library but is
# not instrumented itself: the checks are for devgraph's code, and compiling
# every test file with them took a third of CI's sanitizer build.
add_library(devgraph_sanitizers INTERFACE)
add_library(devgraph_sanitizers_link INTERFACE)
if(DEVGRAPH_SANITIZE)
  list(JOIN DEVGRAPH_SANITIZE "," _devgraph_san)
  target_compile_options(devgraph_sanitizers INTERFACE
      -fsanitize=${_devgraph_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  # Not position independent: the sanitizers' per-check data holds over a
  # million pointers, each a relocation the loader applies at every start
  # of a PIE executable. Linked at a fixed address, a sanitized devgraph
  # starts in a third of the time, and the suite starts thousands of them.
  target_link_options(devgraph_sanitizers_link INTERFACE -fsanitize=${_devgraph_san} -no-pie)
endif()
target_link_libraries(devgraph_sanitizers INTERFACE devgraph_sanitizers_link)
