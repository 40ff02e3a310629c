#include "debug/dispatch.h"

#include "debug/returns.h"
#include "templates/render.h"
#include "util/text.h"
#include "util/untrusted.h"

namespace devgraph::debug {

Expected<std::string> render_debug_dispatch(const std::string& skill_dir, const Paths& paths,
                                            const DebugFile& f) {
  std::string state = "status: " + f.status +
                      "\nhypothesis: " + (f.hypothesis.empty() ? "none yet" : f.hypothesis) +
                      "\nnext action: " + (f.next_action.empty() ? "none recorded" : f.next_action);
  std::string answered =
      f.m.answered.empty()
          ? "No checkpoint of this session has been answered yet."
          : "Already answered by a person (never raise these again; only new input goes "
            "through a new checkpoint): " +
                join(f.m.answered, ", ") + ".";
  templates::Values v{
      {"slug", f.slug},
      {"debug_file", paths.file},
      {"worktree", f.m.worktree},
      {"branch", f.m.branch},
      {"goal", f.goal},
      {"tdd_mode", f.tdd ? "true" : "false"},
      {"mode", f.m.mode},
      {"step", std::to_string(f.m.step)},
      {"directive", f.m.directive},
      {"state", fence_untrusted("Where the session stands, as the debug file records it", state)},
      {"answered", answered},
  };
  return templates::render_skill_template(skill_dir, "debug-dispatch", v);
}

Expected<std::string> render_specialist_dispatch(const std::string& skill_dir, const Paths& paths,
                                                 const DebugFile& f) {
  std::string analysis = "Root cause: " + f.resolution.root_cause + "\nProposed fix direction: " +
                         (f.m.fix_direction.empty() ? "none given" : f.m.fix_direction);
  templates::Values v{
      {"slug", f.slug},
      {"hint", f.m.specialist_hint},
      {"debug_file", paths.file},
      {"worktree", f.m.worktree},
      {"analysis", fence_untrusted("The debugger's root cause analysis", analysis)},
  };
  return templates::render_skill_template(skill_dir, "specialist-dispatch", v);
}

}  // namespace devgraph::debug
