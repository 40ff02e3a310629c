// footprint-check on canned `git status --porcelain=v1 -z` output: parsing,
// classification (own / another in-flight task's / outside), renames on
// both sides, exact bytes for awkward names.
#include <gtest/gtest.h>

#include "schedule/schedule.h"

namespace devgraph::schedule {
namespace {

using namespace std::string_literals;
using Ids = std::vector<std::string>;

class CannedRunner final : public CommandRunner {
 public:
  CommandResult answer;
  std::vector<CommandSpec> calls;
  Expected<CommandResult> run(const CommandSpec& spec) override {
    calls.push_back(spec);
    return answer;
  }
};

Plan make_plan() {
  auto p = plan_from_json(Json::parse(R"({"bundle": "b1", "tasks": [
      {"id": "T1", "files": ["src/domain/**", "package.json"]},
      {"id": "T2", "files": ["src/ui/*.ts"]},
      {"id": "T3", "files": ["e2e"]},
      {"id": "T4", "files": ["docs/**"]}]})"));
  EXPECT_TRUE(p.ok());
  return std::move(p).value();
}

TEST(ScheduleFootprint, ParsesEveryEntryKindExactly) {
  std::string out =
      " M src/a b.ts\0"s
      "?? odd/q\"uote 'x'.txt\0"s
      "R  new name.ts\0old name.ts\0"s
      "C  copy.ts\0orig.ts\0"s
      "?? docs/h\xc3\xa9llo w\xc3\xb6rld.md\0"s
      " D gone\0"s
      "?? line\nbreak\0"s;
  auto e = git::parse_porcelain_z(out);
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_EQ(e->size(), 7u);
  EXPECT_EQ((*e)[0].path, "src/a b.ts");
  EXPECT_EQ((*e)[0].worktree, 'M');
  EXPECT_EQ((*e)[1].path, "odd/q\"uote 'x'.txt");
  EXPECT_EQ((*e)[1].index, '?');
  EXPECT_EQ((*e)[2].path, "new name.ts");
  EXPECT_EQ((*e)[2].orig_path, "old name.ts");
  EXPECT_EQ((*e)[3].orig_path, "orig.ts");
  EXPECT_EQ((*e)[4].path, "docs/h\xc3\xa9llo w\xc3\xb6rld.md");
  EXPECT_EQ((*e)[5].orig_path, "");
  EXPECT_EQ((*e)[6].path, "line\nbreak");
  EXPECT_TRUE(git::parse_porcelain_z("").value().empty());
}

TEST(ScheduleFootprint, MalformedStatusIsAnError) {
  EXPECT_FALSE(git::parse_porcelain_z(" M x").ok());        // no NUL
  EXPECT_FALSE(git::parse_porcelain_z("M\0"s).ok());        // too short
  EXPECT_FALSE(git::parse_porcelain_z("R  new\0"s).ok());   // rename without old name
  EXPECT_FALSE(git::parse_porcelain_z("XYZpath\0"s).ok());  // no separator
}

TEST(ScheduleFootprint, ClassifiesOwnOtherAndOutside) {
  Plan plan = make_plan();
  std::vector<StatusEntry> changes = {
      {' ', 'M', "src/domain/a.ts", ""}, {'?', '?', "src/ui/b.ts", ""},
      {'?', '?', "e2e-helpers/x", ""},   {'?', '?', "e2e/spec.ts", ""},
      {' ', 'M', "package.json", ""},    {'?', '?', "src/ui/deep/c.ts", ""},
      {'?', '?', "src/ui/d.ts", ""},
  };
  auto r = classify_changes(plan, "T1", {"T2", "T3"}, changes);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->own, (Ids{"src/domain/a.ts", "package.json"}));
  ASSERT_EQ(r->other_in_flight.size(), 2u);
  EXPECT_EQ(r->other_in_flight[0].first, "T2");
  EXPECT_EQ(r->other_in_flight[0].second, (Ids{"src/ui/b.ts", "src/ui/d.ts"}));
  EXPECT_EQ(r->other_in_flight[1].first, "T3");
  // e2e-helpers only looks like it sits under T3's `e2e`.
  EXPECT_EQ(r->outside, (Ids{"e2e-helpers/x", "src/ui/deep/c.ts"}));
  EXPECT_TRUE(r->violation);
  EXPECT_EQ(r->add_pathspec, (Ids{":(literal)src/domain/a.ts", ":(literal)package.json"}));
  EXPECT_EQ(dump_py(r->to_json()),
            R"({"task": "T1", "own": ["src/domain/a.ts", "package.json"], )"
            R"("other_in_flight": {"T2": ["src/ui/b.ts", "src/ui/d.ts"], "T3": ["e2e/spec.ts"]}, )"
            R"("outside": ["e2e-helpers/x", "src/ui/deep/c.ts"], "violation": true, )"
            R"("add_pathspec": [":(literal)src/domain/a.ts", ":(literal)package.json"]})");
}

TEST(ScheduleFootprint, OtherTasksOnlyCountWhenInFlight) {
  Plan plan = make_plan();
  auto r = classify_changes(plan, "T1", {}, {{'?', '?', "src/ui/b.ts", ""}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->outside, Ids{"src/ui/b.ts"});
  // Naming the task itself among the in-flight ones changes nothing.
  auto self = classify_changes(plan, "T1", {"T1"}, {{'?', '?', "src/domain/x", ""}});
  ASSERT_TRUE(self.ok());
  EXPECT_EQ(self->own, Ids{"src/domain/x"});
  EXPECT_FALSE(self->violation);
}

TEST(ScheduleFootprint, RenameOutOfAnUnownedPathIsAViolation) {
  Plan plan = make_plan();
  // New name inside T1's footprint, old name owned by nobody.
  auto r = classify_changes(plan, "T1", {"T2"}, {{'R', ' ', "src/domain/moved.ts", "lib/orig.ts"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->own, Ids{"src/domain/moved.ts"});
  EXPECT_EQ(r->outside, Ids{"lib/orig.ts"});
  EXPECT_TRUE(r->violation);
}

TEST(ScheduleFootprint, RenameAcrossFootprints) {
  Plan plan = make_plan();
  // From another in-flight task's footprint into this one's: not a
  // violation, but the old side is reported under its owner.
  auto across =
      classify_changes(plan, "T1", {"T2"}, {{'R', ' ', "src/domain/b.ts", "src/ui/b.ts"}});
  ASSERT_TRUE(across.ok());
  EXPECT_EQ(across->own, Ids{"src/domain/b.ts"});
  EXPECT_EQ(across->other_in_flight.at(0).second, Ids{"src/ui/b.ts"});
  EXPECT_FALSE(across->violation);
  EXPECT_EQ(across->add_pathspec, Ids{":(literal)src/domain/b.ts"});
  // Within the footprint: both sides are the task's own and both are staged.
  auto inside =
      classify_changes(plan, "T1", {}, {{'R', ' ', "src/domain/new.ts", "src/domain/old.ts"}});
  ASSERT_TRUE(inside.ok());
  EXPECT_EQ(inside->own, (Ids{"src/domain/new.ts", "src/domain/old.ts"}));
  EXPECT_EQ(inside->add_pathspec,
            (Ids{":(literal)src/domain/new.ts", ":(literal)src/domain/old.ts"}));
  // Out of the footprint to nowhere: the new name is the violation.
  auto out = classify_changes(plan, "T1", {}, {{'R', ' ', "lib/x.ts", "src/domain/x.ts"}});
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->outside, Ids{"lib/x.ts"});
  EXPECT_EQ(out->own, Ids{"src/domain/x.ts"});
}

TEST(ScheduleFootprint, QuotedAndNonAsciiNamesAreKeptExactly) {
  Plan plan = make_plan();
  std::vector<StatusEntry> changes = {{'?', '?', "docs/h\xc3\xa9llo \"w\".md", ""},
                                      {'?', '?', "caf\xc3\xa9 'menu'.txt", ""}};
  auto r = classify_changes(plan, "T4", {}, changes);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->own, Ids{"docs/h\xc3\xa9llo \"w\".md"});
  EXPECT_EQ(r->outside, Ids{"caf\xc3\xa9 'menu'.txt"});
  EXPECT_EQ(dump_py(r->to_json()["outside"]), R"(["caf\u00e9 'menu'.txt"])");
}

TEST(ScheduleFootprint, UnknownTasksAreErrors) {
  Plan plan = make_plan();
  auto bad = classify_changes(plan, "T9", {}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "unknown task 'T9'");
  auto bad_flight = classify_changes(plan, "T1", {"T2", "X", "Y"}, {});
  ASSERT_FALSE(bad_flight.ok());
  EXPECT_EQ(bad_flight.error().message, "unknown in-flight tasks ['X', 'Y']");
}

TEST(ScheduleFootprint, RunsGitStatusThroughTheRunner) {
  Plan plan = make_plan();
  CannedRunner runner;
  runner.answer.exit_code = 0;
  runner.answer.out = "?? src/domain/a.ts\0 M README.md\0"s;
  auto r = footprint_check(plan, "T1", {}, "/repo", runner);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(runner.calls.size(), 1u);
  EXPECT_EQ(runner.calls[0].argv,
            (Ids{"git", "-C", "/repo", "status", "--porcelain=v1", "-z", "--untracked-files=all"}));
  EXPECT_EQ(runner.calls[0].env.at("GIT_OPTIONAL_LOCKS"), "0");
  EXPECT_EQ(r->own, Ids{"src/domain/a.ts"});
  EXPECT_EQ(r->outside, Ids{"README.md"});

  // Unknown ids are refused before git runs.
  EXPECT_FALSE(footprint_check(plan, "T9", {}, "/repo", runner).ok());
  EXPECT_EQ(runner.calls.size(), 1u);

  runner.answer.exit_code = 128;
  runner.answer.out.clear();
  runner.answer.err = "fatal: not a git repository (or any of the parent directories): .git\n";
  auto failed = footprint_check(plan, "T1", {}, "/repo", runner);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message,
            "git status --porcelain=v1 -z --untracked-files=all failed in /repo: fatal: not a git "
            "repository (or any of the parent directories): .git");
}

}  // namespace
}  // namespace devgraph::schedule
