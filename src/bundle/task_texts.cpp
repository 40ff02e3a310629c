// The texts the task lane hands its personas: the task brief (written to
// the task's directory) and the writer and verifier dispatches, rendered
// from skill/templates/.
#include <algorithm>
#include <cctype>
#include <sstream>

#include "bundle/task_lane.h"
#include "util/fs.h"
#include "util/unsynced_files.h"

namespace devgraph::bundle {
namespace {

const char* const kInfraMarkers[] = {
    ".tf",  ".tfvars", "Dockerfile", "docker-compose", ".github/workflows",
    "k8s/", "helm/",   "bicep",      "pulumi"};

}  // namespace

bool is_infrastructure(const schedule::Task& t) {
  std::string kind = t.kind;
  std::transform(kind.begin(), kind.end(), kind.begin(), ::tolower);
  if (kind == "infra" || kind == "infrastructure" || kind == "iac") return true;
  for (const auto& g : t.files)
    for (const char* m : kInfraMarkers)
      if (g.find(m) != std::string::npos) return true;
  return false;
}

std::string plan_section(const std::string& plan, const std::string& id) {
  std::istringstream in(plan);
  std::string line;
  std::vector<std::string> lines;
  while (std::getline(in, line)) lines.push_back(line);
  auto heading_level = [](const std::string& l) -> size_t {
    size_t n = 0;
    while (n < l.size() && l[n] == '#') ++n;
    return (n > 0 && n < l.size() && l[n] == ' ') ? n : 0;
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    size_t level = heading_level(lines[i]);
    if (!level) continue;
    std::string title = lines[i].substr(level);
    while (!title.empty() && title[0] == ' ') title.erase(0, 1);
    std::string lower = title;
    std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
    if (lower.rfind("task ", 0) == 0) title = title.substr(5);
    if (title.rfind(id, 0) != 0) continue;
    if (title.size() > id.size() &&
        (std::isalnum(static_cast<unsigned char>(title[id.size()])) || title[id.size()] == '_'))
      continue;
    std::string out = lines[i];
    for (size_t j = i + 1; j < lines.size(); ++j) {
      size_t l = heading_level(lines[j]);
      if (l && l <= level) break;
      out += "\n" + lines[j];
    }
    return out;
  }
  return "";
}

std::string TaskLane::concurrent_block(const std::string& id) const {
  std::vector<std::string> lines;
  for (const auto& o : in_flight(id)) lines.push_back(o + ": " + join(spec(o).files, ", "));
  return lines.empty() ? "none" : join(lines, "\n");
}

// -- dispatch texts -----------------------------------------------------------

Expected<std::string> TaskLane::write_brief(const std::string& id) {
  const auto& t = spec(id);
  const BundleLayout& L = run_.layout;
  DG_CHECK(make_directories(L.scratch(id)));
  auto plan_text = read_file(L.plan_md());
  std::string section = plan_text ? plan_section(*plan_text, id) : "";
  if (section.empty()) section = "(the plan has no section for this task; use the title and files)";
  templates::Values v{{"task_id", id},
                      {"task_title", t.title},
                      {"bundle_id", run_.bundle()},
                      {"worktree", run_.ctx.worktree},
                      {"base_commit", tasks_[id].base_commit},
                      {"scratch_dir", L.scratch(id)},
                      {"test_command", run_.command("test")},
                      {"build_command", run_.command("build")},
                      {"footprint", templates::bullet_list(t.files)},
                      {"depends_on", t.depends_on.empty() ? "none" : join(t.depends_on, ", ")},
                      {"concurrent_tasks", concurrent_block(id)},
                      {"plan_section", section},
                      {"spec_path", spec_path_},
                      {"plan_path", L.plan_md()}};
  DG_TRY(auto text, run_.render("task-brief", v));
  DG_CHECK(replace_file(L.brief(id), text));  // util/unsynced_files.h
  return L.brief(id);
}

Expected<std::string> TaskLane::writer_dispatch(const std::string& id, const std::string& extra) {
  const BundleLayout& L = run_.layout;
  templates::Values v{{"task_id", id},
                      {"bundle_id", run_.bundle()},
                      {"brief_path", L.brief(id)},
                      {"worktree", run_.ctx.worktree},
                      {"scratch_dir", L.scratch(id)},
                      {"test_command", run_.command("test")},
                      {"concurrent_tasks", concurrent_block(id)},
                      {"extra", extra}};
  return run_.render("writer-dispatch", v);
}

Expected<std::string> TaskLane::verifier_dispatch(const std::string& id) {
  const BundleLayout& L = run_.layout;
  templates::Values v{{"task_id", id},
                      {"bundle_id", run_.bundle()},
                      {"brief_path", L.brief(id)},
                      {"worktree", run_.ctx.worktree},
                      {"base_commit", tasks_[id].base_commit},
                      {"scratch_dir", L.scratch(id)},
                      {"test_command", run_.command("test")}};
  return run_.render("verifier-dispatch", v);
}

}  // namespace devgraph::bundle
