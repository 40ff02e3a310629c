# Compiler warnings for every target of the project. DEVGRAPH_WERROR turns
# them into errors; CI sets it so a warning cannot land.
option(DEVGRAPH_WERROR "Treat compiler warnings as errors" OFF)

set(DEVGRAPH_WARNINGS
    -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align
    -Wunused -Woverloaded-virtual -Wnull-dereference -Wformat=2
    -Wimplicit-fallthrough -Wmisleading-indentation
    # Designated initializers that leave fields at their defaults are intended.
    -Wno-missing-field-initializers)
# GCC 12 reports std::string concatenations as out-of-bounds accesses at
# -O2 (GCC bugs 105329, 105651); these checks give only false positives here.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  list(APPEND DEVGRAPH_WARNINGS -Wno-array-bounds -Wno-stringop-overflow -Wno-restrict)
endif()
if(DEVGRAPH_WERROR)
  list(APPEND DEVGRAPH_WARNINGS -Werror)
endif()

add_library(devgraph_warnings INTERFACE)
target_compile_options(devgraph_warnings INTERFACE ${DEVGRAPH_WARNINGS})
