// An issue as the orchestrator reads it, wherever it lives: a local issue
// file (issues/local_store.h) or a GitHub issue read through gh (gh/gh.h).
// Titles and bodies are untrusted text: they reach a persona only inside a
// bundle's spec, fenced as data, and never an argv, a branch name or a path.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace devgraph::issues {

struct Issue {
  long long number = 0;
  std::string title;
  std::string body;
  std::string state = "open";  // "open" | "closed"
  std::vector<std::string> labels;
  // The issue it belongs to: --parent of a local issue, else a
  // "Part of #N" line in the body (parent_from_body).
  std::optional<long long> parent;
  std::string priority;  // "P0" | "P1" | "P2" | "" (none given)
  std::string created;   // ISO 8601, as the source gives it
  std::string updated;   // ditto; "" when the source has none
  // Local issues only, once delivered: the ready branch and its HEAD.
  std::optional<std::string> branch;
  std::optional<std::string> head;
  std::string close_reason;  // local issues: why it was closed
};

// The first "Part of #N" in `body` (case-insensitive, at the start of a
// line, leading spaces allowed), else nullopt.
std::optional<long long> parent_from_body(const std::string& body);

// "P0", "P1" or "P2" from labels named so (or "priority: P0",
// "priority/P1", case-insensitive); "" when none. The highest wins.
std::string priority_from_labels(const std::vector<std::string>& labels);

}  // namespace devgraph::issues
