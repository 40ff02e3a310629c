# DEVGRAPH_SANITIZE=address;undefined builds every target with those
# sanitizers. CI runs the whole suite once in this configuration.
set(DEVGRAPH_SANITIZE "" CACHE STRING "Semicolon-separated sanitizers (address, undefined, thread)")

add_library(devgraph_sanitizers INTERFACE)
if(DEVGRAPH_SANITIZE)
  list(JOIN DEVGRAPH_SANITIZE "," _devgraph_san)
  target_compile_options(devgraph_sanitizers INTERFACE
      -fsanitize=${_devgraph_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  # Not position independent: the sanitizers' per-check data holds over a
  # million pointers, each a relocation the loader applies at every start
  # of a PIE executable. Linked at a fixed address, a sanitized devgraph
  # starts in a third of the time, and the suite starts thousands of them.
  target_link_options(devgraph_sanitizers INTERFACE -fsanitize=${_devgraph_san} -no-pie)
endif()
