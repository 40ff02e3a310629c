// Named crash points: the windows between an effect and its record that a
// resume must survive, each with a name that says which effect it is
// ("commit:b1/T2", "push:develop/b1"), so adding a move never renames the
// resume tests' kill points.
//
// Labels:
//   launch     before a persona is launched            launch:b1/T1/tdd-writer
//   saved      a persona's result file is written      saved:b1/code-reviewer
//   move       before a cursor move; moved: after it   moved:b1/T1/TDD_DONE
//   commit     intent recorded, paths staged           commit:b1/T2, commit:b1/plan
//   committed  after `git commit`, before its record   committed:b1/repair-1
//   push       push intent recorded, not pushed        push:develop/b1
//   pushed     after the push, PR not looked up        pushed:develop/b1
//   pr         PR intent recorded, not created         pr:develop/b1
//   pr_created after `gh pr create`, not read back     pr_created:develop/b1
//   merged     auto-merge asked, PR_CREATED not moved  merged:develop/b1
//   delivered  after the final move, no result yet     delivered:b1
//   critiqued  a discuss round's result is saved, not  critiqued:b1/plan-1
//              yet recorded
//   integrated `clean` recorded an integration, not yet integrated:feature/x
//              landed on the default branch
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace devgraph::bundle {

class CrashPoints {
 public:
  virtual ~CrashPoints() = default;
  // The driver reached `label:subject`.
  virtual void reach(std::string_view label, std::string_view subject) = 0;
};

// DEVGRAPH_BUNDLE_CRASH_AT=SPEC makes the process SIGKILL itself at the
// point SPEC names: `label:subject` (its first hit), `label:subject@N` (its
// Nth hit) or a bare `label` (the first point with that label). Unset: a
// point costs a string comparison.
class EnvCrashPoints final : public CrashPoints {
 public:
  EnvCrashPoints();
  explicit EnvCrashPoints(std::string spec);
  void reach(std::string_view label, std::string_view subject) override;

 private:
  std::string name_;  // label or label:subject
  int want_ = 1;
  int hits_ = 0;
};

}  // namespace devgraph::bundle
