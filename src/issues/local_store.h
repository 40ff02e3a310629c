// Local issues: devgraph's own issue tracker, the default when a repository
// has no other. One Markdown file per issue, `<N>.md`, in one directory
// (<develop_home>/issues/), so a person, a script and a running
// orchestrator can all file and read issues at the same time.
//
// An issue file is a front matter, then the body:
//
//   ---
//   number: 3
//   title: "Add a --json flag"
//   state: "open"
//   labels: ["devgraph", "cli"]
//   parent: 1
//   priority: "P1"
//   created: "2026-12-01T19:44:49+00:00"
//   updated: "2026-12-02T08:00:00+00:00"
//   branch: "develop/b2-add-a-json-flag"
//   head: "0123abcd..."
//   close_reason: "done in develop/b2-add-a-json-flag"
//   ---
//   body text...
//
// Each front-matter line is `key: VALUE` where VALUE is one line of JSON
// (strings are JSON strings, so any title round-trips exactly, newlines and
// `---` included); the keys are written in this order. number, title,
// state, labels and created are always written; parent, priority, updated,
// branch, head and close_reason only when they have a value. The body is
// every byte after the closing `---` line, unchanged.
//
// Contract:
// - The constructor touches nothing; the directory is created by the
//   first create().
// - Every write takes an exclusive lock (FileLock) on <dir>/.lock, reads
//   the issue, changes it and replaces its file atomically (temporary file,
//   fsync, rename, fsync of the directory). A refused change writes
//   nothing. Numbers are allocated under the lock: the highest `<N>.md`
//   present plus one, from 1.
// - Reads take no lock: a file is only ever replaced whole, so a reader
//   sees one version of it.
// - Only names of the form `<digits>.md` are issue files; anything else
//   (.lock, editor backups, a killed writer's temporary file) is ignored.
// - An issue file that does not parse (no front matter, a line that is not
//   `key: JSON`, an unknown or repeated key, a value of the wrong type, an
//   unknown state, a number that differs from its file name) is an error
//   naming the file, never skipped.
// - Issue::parent is the front matter's parent, else a "Part of #N" line of
//   the body (parent_from_body); Issue::priority is the front matter's
//   priority, else one named by the labels (priority_from_labels). Only the
//   front matter's own values are written back.
//
// Error kinds: usage (an invalid title, label, priority, parent, branch,
// head or issue number), not_found (no such issue), internal (a corrupt
// issue file), refused (the file system refused a read or a write).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "issues/issue.h"
#include "util/clock.h"
#include "util/expected.h"
#include "util/fs.h"

namespace devgraph::issues {

// What create() takes; the rest of an Issue is the store's to set.
struct NewIssue {
  std::string title;  // non-empty after trimming, at most 256 bytes, UTF-8
  std::string body;   // any bytes
  // Each non-empty, at most 64 bytes, UTF-8, without whitespace, commas or
  // control characters.
  std::vector<std::string> labels;
  std::optional<long long> parent;  // positive; the issue need not exist
  std::string priority;             // "P0" | "P1" | "P2" | "" (none)
};

// The checks create() makes, for a caller that validates before it
// resolves where the store lives. Errors are ErrorKind::usage and name the
// field.
Status check_title(const std::string& title);
Status check_label(const std::string& label);
Status check_priority(const std::string& priority);
Status check_parent(long long parent);
Status check_new_issue(const NewIssue& issue);

class LocalIssues {
 public:
  explicit LocalIssues(std::string dir, const Clock& clock = system_clock());

  const std::string& dir() const { return dir_; }
  // The file of issue `number` (which may not exist).
  std::string path_of(long long number) const;

  // Files a new open issue stamped now (iso_utc) and returns it.
  Expected<Issue> create(const NewIssue& issue);
  // Every issue, by number; a missing directory holds none.
  Expected<std::vector<Issue>> list() const;
  // Keep each issue list() read and read its file again only when the file
  // changed (its identity: writers replace it, an editor rewrites it; a
  // file changed less than a tenth of a second, by the store's clock,
  // before it was read is read again), for a
  // process that lists the issues at every decision (the orchestrator).
  void cache_reads(bool on);
  // Issue files list() read (a seam for tests that bound a run's reads).
  size_t file_reads() const { return file_reads_; }
  Expected<Issue> get(long long number) const;
  // Closes an open issue with `reason` ("" for none). An issue already
  // closed is returned as it is, its first reason kept, and not written.
  Expected<Issue> close(long long number, const std::string& reason);
  // Opens a closed issue again and forgets its close reason; an open issue
  // is returned as it is.
  Expected<Issue> reopen(long long number);
  // The branch that delivers the issue and that branch's HEAD (a hex
  // object id), once the branch is ready. Recording the same pair again
  // writes nothing.
  Expected<Issue> record_delivery(long long number, const std::string& branch,
                                  const std::string& head);

 private:
  struct Kept {
    FileIdentity identity;
    bool trusted = false;  // old enough when read for its identity to tell a change
    Issue issue;
  };
  std::string dir_;
  const Clock* clock_;
  bool cache_ = false;
  mutable std::map<long long, Kept> kept_;
  mutable size_t file_reads_ = 0;
};

}  // namespace devgraph::issues
