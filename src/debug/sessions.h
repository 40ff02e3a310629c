// The debug sessions of a repository, as `debug list`, `debug show`,
// `devgraph inbox` and the answering verbs find them in
// `<develop_home>/debug/`.
//
// Contract:
// - list_sessions() reads without the lock (every file is replaced
//   atomically, so a read sees one whole version): the active sessions
//   (`<slug>.md`) and the resolved ones (`resolved/<slug>.md`), by slug. A
//   file that does not parse is listed with its error, never skipped; a
//   name that is not a slug is ignored.
// - open_session() takes the session lock without waiting, then reads the
//   file under it: ErrorKind::refused (exit 3) naming the holder when
//   another process holds the lock; ErrorKind::usage (exit 3) when there is
//   no such session. It writes nothing but the lock file.
#pragma once

#include <string>
#include <vector>

#include "debug/debug_file.h"
#include "util/expected.h"

namespace devgraph::debug {

struct Listed {
  std::string slug, file, status, phase, updated, trigger;
  bool resolved = false;
  std::string question_id, question;  // when it waits for a person
  std::string error;                  // the file does not parse
};

std::vector<Listed> list_sessions(const std::string& develop_home);

struct Opened {
  SessionLock lock;
  DebugFile file;
};

Expected<Opened> open_session(const Paths& paths, const std::string& slug);

}  // namespace devgraph::debug
