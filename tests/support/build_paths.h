// Where this build keeps the devgraph binary, the source tree, the tests
// and the reference runtime (empty when no copy sits beside the checkout),
// and whether that binary and the library are instrumented by sanitizers.
//
// Contract: fixed at configure time, defined in one source file per test
// variant that CMake writes into the build directory (the same test
// objects link against the regular or the sanitized library); the macros
// keep the names the tests use.
#pragma once

namespace devgraph::build {
extern const char* const kDevgraphBin;
extern const char* const kSourceDir;
extern const char* const kTestDir;
extern const char* const kReferenceDir;
extern const bool kSanitized;
}  // namespace devgraph::build

#define DEVGRAPH_BIN (::devgraph::build::kDevgraphBin)
#define DEVGRAPH_SOURCE_DIR (::devgraph::build::kSourceDir)
#define DEVGRAPH_TEST_DIR (::devgraph::build::kTestDir)
#define DEVGRAPH_REFERENCE_DIR (::devgraph::build::kReferenceDir)
