#include "contracts/schema_embedded.h"

#include <cstring>

#include "util/fs.h"

namespace devgraph {

std::optional<CompiledSchema> embedded_schema(std::string_view text) {
  for (const auto* e = embedded::kSchemas; e->text != nullptr; ++e)
    if (e->size == text.size() && std::memcmp(e->text, text.data(), text.size()) == 0)
      return e->build();
  return std::nullopt;
}

std::optional<CompiledSchema> embedded_schema_of_file(const std::string& path) {
  const size_t size = file_size(path);
  for (const auto* e = embedded::kSchemas; e->text != nullptr; ++e) {
    if (e->size != size) continue;
    auto same = file_has_bytes(path, {reinterpret_cast<const char*>(e->text), e->size});
    if (same && *same) return e->build();
  }
  return std::nullopt;
}

}  // namespace devgraph
