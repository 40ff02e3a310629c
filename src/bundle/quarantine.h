// Strays: files a persona left in a bundle's worktree outside every task's
// footprint and reported by nobody (a scratch note, a log), and where they
// go: the bundle's quarantine in the run directory. A stray is never
// committed, never deleted, never a reason to ask a person, and never
// blamed on a task that did not write it.
//
// Contract:
// - StrayLedger::observe() is called as each persona launch of the task
//   lane ends, with the untracked paths outside every footprint at that
//   moment and the tasks whose launches were in flight then (the one that
//   ended among them). A path seen for the first time gets those tasks as
//   its suspects; a path seen before keeps its first suspects. A path never
//   observed (found only at a commit, say after a resume) has none.
//   attributed_to() is the single suspect when there is exactly one, else
//   "": only then did one task's launches write it. forget() drops a path
//   once it is quarantined, so the same path written again is observed
//   anew.
// - quarantine() moves one untracked regular file or symlink from the
//   worktree to <bundle dir>/quarantine/files/<path> (a free name with a
//   numeric suffix when that one is taken), bytes and mode kept. The index
//   (<bundle dir>/quarantine/index.json, a JSON array) gets the record
//   first, atomically: path, kept_at (relative to the bundle directory),
//   bytes, mode (octal text), suspects, attributed_to (a task id or null),
//   found_at (the task whose commit found it). Then the file moves: a
//   rename, or across filesystems a copy fsynced before the original is
//   unlinked; both directories are fsynced. A kill at any point loses
//   nothing: the original stays until its copy is durable, and a retry
//   records and copies it again.
//   Refused (ErrorKind::usage, nothing written or moved): an empty or
//   absolute path, a `.` or `..` component, anything but a regular file or
//   a symlink.
// - quarantined() reads the index: empty when there is none; an index that
//   is not an array of records is an error naming the file.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bundle/layout.h"
#include "util/expected.h"
#include "util/json.h"

namespace devgraph::bundle {

class StrayLedger {
 public:
  void observe(const std::vector<std::string>& paths, const std::vector<std::string>& in_flight);
  std::vector<std::string> suspects_of(const std::string& path) const;
  std::string attributed_to(const std::string& path) const;
  // After its quarantine: the path written again is a new stray.
  void forget(const std::string& path) { suspects_.erase(path); }

 private:
  std::map<std::string, std::vector<std::string>> suspects_;
};

struct StrayRecord {
  std::string path;
  std::vector<std::string> suspects;
  std::string attributed_to;  // "" when no single task wrote it
  std::string found_at;       // the task whose commit found it
};

// The record as written to the index.
Expected<Json> quarantine(const BundleLayout& layout, const StrayRecord& stray);
Expected<std::vector<Json>> quarantined(const BundleLayout& layout);

}  // namespace devgraph::bundle
