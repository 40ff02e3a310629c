// Helpers shared by the test suite: temporary directories, running the
// devgraph binary (and other programs) as a real process, reading files.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "support/build_paths.h"
#include "util/fs.h"
#include "util/json.h"

namespace devgraph::test {

// True in the sanitized tests (the library and the binary under ASan and
// UBSan). Every process starts slower there, so the few tests that start
// hundreds of processes run a sample of their cases in it; the regular
// build runs them all.
inline const bool& kUnderSanitizers = ::devgraph::build::kSanitized;

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out;
  std::string err;
};

// Runs argv[0] (looked up in PATH) with the extra environment variables
// (name -> value; an empty value unsets the variable), in `cwd` when given,
// with `input` on stdin. Waits for it to finish. Aborts the test on
// spawn failure.
ProcessResult run_process(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& env = {},
                          const std::string& cwd = "", const std::string& input = "");

// Runs the devgraph binary built with this test suite, and fails the test
// (expect_documented_exit) when the verb exits with a code its row of the
// verb table does not list.
ProcessResult run_devgraph(const std::vector<std::string>& args,
                           const std::map<std::string, std::string>& env = {},
                           const std::string& cwd = "", const std::string& input = "");

// The exit codes verb `verb` documents in the verb table ("0", "3",
// "128+N"), in its order; empty for a verb that documents none or no verb.
std::vector<std::string> documented_exit_codes(std::string_view verb);
// A non-fatal failure when `r` (devgraph run with `args`) exited with a code
// outside its verb's documented ones. A killed process, a word that is no
// verb and a verb without a table pass.
void expect_documented_exit(const std::vector<std::string>& args, const ProcessResult& r);

// Starts argv (argv[0] a path) in a process group of its own, with the stop
// signals at their defaults and none blocked (whatever the shell that ran
// the tests left: a background job starts with SIGINT ignored), the extra
// environment (an empty value unsets), stdout and stderr appended to
// `log`. Returns the pid, which is also the group's id; the caller reaps
// it.
pid_t spawn_group(const std::vector<std::string>& argv, const std::string& log,
                  const std::map<std::string, std::string>& env = {});

// The reference runtime directory (develop-v4), or "" when not available.
std::string reference_dir();
std::string source_dir();
std::string test_dir();

// A temporary directory that lives as long as the test.
class Scratch {
 public:
  Scratch();
  const std::string& path() const { return dir_.path(); }
  std::string operator/(const std::string& rel) const { return join_path(path(), rel); }

 private:
  TempDir dir_;
};

std::string slurp(const std::string& path);
// The names in `dir` (hidden ones too), one per line, sorted: what a test
// compares to prove that nothing else was left behind.
std::string entries(const std::string& dir);
// Every path under `dir` with its content ("" for a directory or a link;
// nothing when `dir` does not exist): what proves a command wrote nothing.
std::map<std::string, std::string> tree_snapshot(const std::string& dir);
// A pid no process has: a child that exited and was reaped.
int dead_pid();
// The JSON records of a JSON Lines file (events.jsonl, run_bundle.log), in
// order; empty lines are skipped, a missing file has none.
std::vector<Json> read_jsonl(const std::string& path);
void write_text(const std::string& path, const std::string& text);

}  // namespace devgraph::test
