#include "bundle/bundle_run.h"

namespace devgraph::bundle {

std::string BundleRun::command(const char* key) const {
  return json_str(ctx.commands, key);
}

Expected<std::string> BundleRun::render(std::string_view name,
                                        const templates::Values& values) const {
  return templates::render_skill_template(skill_dir, name, values);
}

std::optional<std::string> BundleRun::committed_with(const std::string& key,
                                                     const std::string& value) {
  auto hits = git.find_trailer(key, bundle_base);
  if (!hits) return std::nullopt;
  for (const auto& h : *hits)
    if (h.value == value) return h.commit;
  return std::nullopt;
}

}  // namespace devgraph::bundle
