// doctor's checks of the placement guard, devgraph's grants and the disk
// (src/doctor/setup.h): levels from hand-built facts, and the grants read
// from a scratch HOME by the install module's own plan, which writes
// nothing.
#include "doctor/setup.h"

#include <gtest/gtest.h>

#include "support/test_util.h"
#include "util/fs.h"

namespace devgraph::doctor {
namespace {

GuardFacts guard_with_clone() {
  GuardFacts f;
  f.primary_top = "/src/widgets";
  f.primary_write = std::string("/src/widgets is a primary clone");
  f.worktree_path = "/ai/worktrees/local/widgets/develop-doctor-check";
  f.develop_home = "/ai/develop/local/widgets";
  return f;
}

TEST(DoctorSetup, AGuardThatAnswersAsExpectedIsOneOk) {
  auto out = check_guard(guard_with_clone());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].level, Level::ok);
  EXPECT_EQ(out[0].message,
            "self-check passes; the primary clone is read-only; worktrees go to "
            "/ai/worktrees/local/widgets/");
  auto alone = check_guard(GuardFacts{});
  ASSERT_EQ(alone.size(), 1u);
  EXPECT_EQ(alone[0].message, "self-check passes");
}

TEST(DoctorSetup, AFailingSelfCheckIsAProblem) {
  GuardFacts f = guard_with_clone();
  f.self_check_failures = {"write into primary: allowed", "other"};
  auto out = check_guard(f);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].level, Level::problem);
  EXPECT_EQ(out[0].message,
            "self-check: 2 check(s) failed, the first: write into primary: allowed");
}

TEST(DoctorSetup, AnExemptPrimaryCloneIsAWarningAndARefusedWorktreeAProblem) {
  GuardFacts f = guard_with_clone();
  f.primary_write.reset();
  f.worktree_placement = std::string("inside the primary clone");
  f.develop_home_write = std::string("inside the primary clone");
  auto out = check_guard(f);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].id, "guard.primary");
  EXPECT_EQ(out[0].level, Level::warning);
  EXPECT_EQ(out[1].id, "guard.worktree");
  EXPECT_EQ(out[1].level, Level::problem);
  EXPECT_NE(out[1].fix.find("DEVELOP_WORKTREES_ROOT"), std::string::npos);
  EXPECT_EQ(out[2].id, "guard.develop_home");
  EXPECT_EQ(out[2].level, Level::problem);
}

TEST(DoctorSetup, GuardFactsFromTheRealGuardOnARealClone) {
  test::Scratch s;
  ASSERT_TRUE(make_directories(s / "repo").ok());
  ASSERT_EQ(test::run_process({"git", "init", "-q", "-b", "main"}, {}, s / "repo").exit_code, 0);
  guard::Roots roots;
  roots.home = s.path();
  roots.worktrees = s / "ai/worktrees";
  roots.develop_home = s / "ai/develop";
  auto place = guard::resolve_placement(s / "repo", std::nullopt, roots);
  ASSERT_TRUE(place.ok());
  auto out = check_guard(gather_guard(*place, roots));
  ASSERT_EQ(out.size(), 1u) << out[0].message;
  EXPECT_EQ(out[0].level, Level::ok);
  // Worktrees inside the clone: the guard refuses them.
  roots.worktrees = s / "repo/worktrees";
  place = guard::resolve_placement(s / "repo", std::nullopt, roots);
  auto inside = check_guard(gather_guard(*place, roots));
  ASSERT_FALSE(inside.empty());
  EXPECT_EQ(inside[0].id, "guard.worktree");
  EXPECT_EQ(inside[0].level, Level::problem);
}

InstallFacts install_facts(install::Tool tool, bool in_use, Expected<bool> grants,
                           std::optional<Expected<bool>> hook = std::nullopt) {
  InstallFacts f;
  f.tool = tool;
  f.config = "/home/u/.claude/settings.json";
  f.in_use = in_use;
  f.grants = std::move(grants);
  f.hook = std::move(hook);
  return f;
}

TEST(DoctorSetup, InstallStateIsAWarningOnlyForAToolInUse) {
  EXPECT_EQ(check_install(install_facts(install::Tool::codex, false, false)).level, Level::ok);
  Finding missing = check_install(install_facts(install::Tool::claude, true, false, false));
  EXPECT_EQ(missing.level, Level::warning);
  EXPECT_EQ(missing.id, "install.claude");
  EXPECT_EQ(missing.fix, "run: devgraph install claude --hook");
  Finding no_hook = check_install(install_facts(install::Tool::claude, true, true, false));
  EXPECT_EQ(no_hook.level, Level::warning);
  EXPECT_NE(no_hook.message.find("hook is not registered"), std::string::npos);
  Finding all = check_install(install_facts(install::Tool::claude, true, true, true));
  EXPECT_EQ(all.level, Level::ok);
  EXPECT_EQ(all.message, "claude: grants present, guard hook registered");
  Finding codex = check_install(install_facts(install::Tool::codex, true, false));
  EXPECT_EQ(codex.fix, "run: devgraph install codex");
  Finding unreadable = check_install(
      install_facts(install::Tool::codex, true, Expected<bool>(fail("x.toml:2: bad"))));
  EXPECT_EQ(unreadable.level, Level::warning);
  EXPECT_EQ(unreadable.message, "codex: x.toml:2: bad");
}

TEST(DoctorSetup, GatherInstallReadsTheToolsConfigWithoutWritingIt) {
  test::Scratch home;
  install::Context ctx;
  ctx.home = home.path();
  ctx.devgraph_bin = "/opt/devgraph/bin/devgraph";
  ctx.location = home / "repo";
  InstallFacts none = gather_install(install::Tool::claude, ctx, "");
  EXPECT_FALSE(none.in_use);
  ASSERT_TRUE(none.grants.ok());
  EXPECT_FALSE(*none.grants);
  EXPECT_EQ(test::entries(home.path()), "");

  ctx.hook = false;
  auto plan = install::plan_install(install::Tool::claude, ctx);
  ASSERT_TRUE(plan.ok());
  ASSERT_TRUE(install::apply_plan(*plan, "20260101T000000Z").ok());
  InstallFacts granted = gather_install(install::Tool::claude, ctx, "");
  EXPECT_TRUE(granted.in_use);
  EXPECT_TRUE(*granted.grants);
  ASSERT_TRUE(granted.hook.has_value());
  EXPECT_FALSE(**granted.hook);
  EXPECT_EQ(check_install(granted).level, Level::warning);
}

TEST(DoctorSetup, DiskSpaceUnderFiveGibIsAWarningUnderOneAProblem) {
  DiskFacts f;
  f.root = f.measured = "/home/u/.ai/worktrees";
  f.free_bytes = std::uint64_t{512} << 20;
  Finding low = check_disk(f);
  EXPECT_EQ(low.level, Level::problem);
  EXPECT_EQ(low.message.rfind("0.5 GiB free for /home/u/.ai/worktrees", 0), 0u) << low.message;
  f.free_bytes = std::uint64_t{3} << 30;
  EXPECT_EQ(check_disk(f).level, Level::warning);
  f.free_bytes = std::uint64_t{20} << 30;
  Finding plenty = check_disk(f);
  EXPECT_EQ(plenty.level, Level::ok);
  EXPECT_EQ(plenty.message, "20.0 GiB free for /home/u/.ai/worktrees");
  f.free_bytes.reset();
  f.error = "Permission denied";
  EXPECT_EQ(check_disk(f).level, Level::warning);
}

TEST(DoctorSetup, DiskIsMeasuredAtTheNearestExistingDirectoryOncePerFileSystem) {
  test::Scratch s;
  guard::Roots roots;
  roots.worktrees = s / "ai/worktrees";
  roots.develop_home = s / "ai/develop";
  auto disks = gather_disk(roots);
  ASSERT_EQ(disks.size(), 1u);
  EXPECT_EQ(disks[0].root, s / "ai/worktrees");
  EXPECT_EQ(disks[0].measured, s.path());
  EXPECT_TRUE(disks[0].free_bytes.has_value());
}

}  // namespace
}  // namespace devgraph::doctor
