// The run-time half of the embedded GRAPH.yaml (see yaml_doc.h). The data
// comes from a file the build generates with tools/embed_graph.cpp.
#include <cstring>

#include "graph/yaml_doc.h"

namespace devgraph::embedded {
// Defined in the generated graph_data.cpp.
extern const unsigned char kGraphYaml[];
extern const std::size_t kGraphYamlSize;
extern const unsigned char kGraphDocument[];  // MessagePack
extern const std::size_t kGraphDocumentSize;
}  // namespace devgraph::embedded

namespace devgraph {

std::optional<Json> embedded_graph_document(std::string_view text) {
  using namespace embedded;
  if (kGraphDocumentSize == 0 || text.size() != kGraphYamlSize ||
      std::memcmp(text.data(), kGraphYaml, kGraphYamlSize) != 0)
    return std::nullopt;
  return Json::from_msgpack(kGraphDocument, kGraphDocument + kGraphDocumentSize);
}

}  // namespace devgraph
