// The repository's test and build commands, found once when a run starts
// and recorded in its state.json (`commands`: test, build, source), from
// where the bundle driver passes them to bundle_verify, briefs and the
// personas' allow lists.
//
// Detection, first hit wins (paths relative to the repository root):
//
//   found                         test                          build
//   ----------------------------  ----------------------------  ----------------------------
//   .devgraph/commands.json (1)   its "test"                    its "build"
//   package.json scripts.test     npm test                      npm run build
//     and/or scripts.build (2)
//   Cargo.toml                    cargo test                    cargo build
//   go.mod                        go test ./...                 go build ./...
//   CMakeLists.txt (3)            ctest --build-and-test .      ctest --build-and-test .
//                                   build --build-generator       build --build-generator
//                                   "Unix Makefiles"              "Unix Makefiles"
//                                   --test-command ctest
//                                   --output-on-failure
//   GNUmakefile, makefile or      make test, for a `test:`      make build, for a `build:`
//     Makefile, the first there     target                        target, else make for an
//     (make's order) (2)                                          `all:` target
//   pyproject.toml, setup.cfg,    python3 -m pytest             python3 -m compileall -q .
//     pytest.ini or tox.ini
//     mentioning pytest
//   tests/test_*.py (4)           python3 -m unittest discover  python3 -m compileall -q .
//                                   -s tests -t .
//
// (1) {"test": "...", "build": "..."}, either absent or "" for none: the
//     explicit way for a user to say it, and a hit even when both are empty.
// (2) Each command only when its script or target is there; a package.json
//     or Makefile that yields neither is no hit and the next row is tried.
//     npm's default test script (`echo "Error: no test specified" && exit
//     1`) counts as none.
// (3) The commands are run as argv, never through a shell (bundle/words.h
//     refuses `&&`), and the test command runs before the build command:
//     ctest's build-and-test mode configures (into build/), builds and
//     tests in one program; the build command configures and builds.
//     "Unix Makefiles", since build-and-test needs a generator named and
//     make is wherever CMake is.
// (4) A test_*.py file directly in tests/.
//
// `source` names the row: ".devgraph/commands.json", "package.json
// scripts", "Cargo.toml", "go.mod", "CMakeLists.txt", "Makefile targets"
// (the file's own name), "pyproject.toml (pytest)" (likewise), "tests/
// test_*.py (unittest)".
//
// Contract:
// - Reads files only: nothing in the repository is run and nothing is
//   written. Every file read is a regular file of at most
//   kMaxProjectFileBytes (util/fs.h read_file_at_most); Cargo.toml, go.mod
//   and CMakeLists.txt only need to be there.
// - Nothing found: empty test, build and source (not an error).
// - Errors (one line naming the file): a repo_dir that is not a directory
//   (not_found); .devgraph/commands.json or package.json that is not valid
//   JSON or not shaped as above (usage: the user fixes the file, or says
//   the commands in .devgraph/commands.json, which is read first); a file
//   too long or unreadable (refused). A bad file is never skipped silently.
#pragma once

#include <cstddef>
#include <string>

#include "util/expected.h"
#include "util/json.h"

namespace devgraph::project {

struct Commands {
  std::string test;
  std::string build;
  std::string source;  // where they came from (above); "" when nothing was found
};

inline constexpr size_t kMaxProjectFileBytes = size_t{4} << 20;

Expected<Commands> detect_commands(const std::string& repo_dir);

// state.json's `commands` object: {"test", "build", "source"}.
Json commands_json(const Commands& commands);

}  // namespace devgraph::project
