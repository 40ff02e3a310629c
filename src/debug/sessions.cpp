#include "debug/sessions.h"

#include <dirent.h>

#include <algorithm>

#include "util/text.h"

namespace devgraph::debug {
namespace {

std::vector<std::string> slugs_in(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() <= 3 || name.compare(name.size() - 3, 3, ".md") != 0) continue;
    std::string slug = name.substr(0, name.size() - 3);
    if (check_slug(slug)) out.push_back(slug);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

Listed listed(const std::string& path, const std::string& slug, bool resolved) {
  Listed l;
  l.slug = slug;
  l.file = path;
  l.resolved = resolved;
  auto text = read_file(path);
  auto f = text ? parse(*text, path) : Expected<DebugFile>(text.error());
  if (!f) {
    l.error = f.error().message;
    return l;
  }
  l.status = f->status;
  l.phase = f->m.phase;
  l.updated = f->updated;
  l.trigger = f->trigger;
  if (f->m.phase == "ask" && f->m.pending) {
    l.question_id = f->m.pending->id;
    l.question = f->m.pending->text;
  }
  return l;
}

}  // namespace

std::vector<Listed> list_sessions(const std::string& develop_home) {
  const Paths base = paths_of(develop_home, "x");
  std::vector<Listed> out;
  for (const auto& slug : slugs_in(base.home))
    out.push_back(listed(paths_of(develop_home, slug).file, slug, false));
  for (const auto& slug : slugs_in(dirname_of(base.resolved))) {
    // A session archived but not yet removed from debug/ is listed once.
    bool active =
        std::any_of(out.begin(), out.end(), [&](const Listed& l) { return l.slug == slug; });
    if (!active) out.push_back(listed(paths_of(develop_home, slug).resolved, slug, true));
  }
  std::sort(out.begin(), out.end(),
            [](const Listed& a, const Listed& b) { return a.slug < b.slug; });
  return out;
}

Expected<Opened> open_session(const Paths& paths, const std::string& slug) {
  if (current_path(paths).empty())
    return fail(ErrorKind::usage, "no debug session " + slug + " (see `devgraph debug list`)", 3);
  std::string holder;
  DG_TRY(auto lock, SessionLock::try_take(paths, &holder));
  if (!lock)
    return fail(ErrorKind::refused,
                "session " + slug + " is being worked on by another devgraph process" +
                    (holder.empty() ? "" : " (pid " + holder + ")") +
                    ": one debugger at a time; try again when it stops",
                3);
  DG_TRY(auto file, load(paths));
  return Opened{std::move(*lock), std::move(file)};
}

}  // namespace devgraph::debug
