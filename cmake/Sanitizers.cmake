# DEVGRAPH_SANITIZE=address;undefined builds every target with those
# sanitizers. CI runs the whole suite once in this configuration.
set(DEVGRAPH_SANITIZE "" CACHE STRING "Semicolon-separated sanitizers (address, undefined, thread)")

add_library(devgraph_sanitizers INTERFACE)
if(DEVGRAPH_SANITIZE)
  list(JOIN DEVGRAPH_SANITIZE "," _devgraph_san)
  target_compile_options(devgraph_sanitizers INTERFACE
      -fsanitize=${_devgraph_san} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(devgraph_sanitizers INTERFACE -fsanitize=${_devgraph_san})
endif()
