# ccache as the compiler launcher when it is installed (DEVGRAPH_CCACHE=OFF,
# or a CMAKE_CXX_COMPILER_LAUNCHER of your own, turns it off).
#
# Set so that a second checkout of the same commit, in another directory,
# compiles nothing again: paths under the source tree are hashed relative
# to the build directory (base_dir), the working directory is left out of
# the hash (debug info then names the first checkout's directory, which
# only a sanitizer build carries), and the precompiled headers are
# accepted (sloppiness, as ccache's manual asks for them). The cache
# itself is ccache's own (CCACHE_DIR, else ~/.cache/ccache): outside every
# checkout, so it outlives a clean clone.
find_program(DEVGRAPH_CCACHE_PROGRAM ccache)
option(DEVGRAPH_CCACHE "Compile through ccache when it is installed" ON)
if(DEVGRAPH_CCACHE AND DEVGRAPH_CCACHE_PROGRAM AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER
      /usr/bin/env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR} CCACHE_NOHASHDIR=true
      CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
      ${DEVGRAPH_CCACHE_PROGRAM})
endif()
