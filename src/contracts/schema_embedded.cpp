#include "contracts/schema_embedded.h"

#include <cstring>

namespace devgraph {

std::optional<CompiledSchema> embedded_schema(std::string_view text) {
  for (const auto* e = embedded::kSchemas; e->text != nullptr; ++e)
    if (e->size == text.size() && std::memcmp(e->text, text.data(), text.size()) == 0)
      return e->build();
  return std::nullopt;
}

}  // namespace devgraph
