// The shipped contracts, compiled at build time.
//
// Every checkpoint process checks its change against the run state schema,
// and reading and compiling the 5 KB schema cost about as much as the
// rest of a small move. The build therefore compiles each shipped contract
// (tools/embed_schemas.cpp) and compiles the result into the library with
// the file's bytes. At run time a schema file whose bytes equal an
// embedded one takes the embedded tree; any other file (edited, or from
// another skill) is read and compiled as usual. The comparison is exact,
// so the shortcut can never change what a schema means.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "contracts/compiled_schema.h"

namespace devgraph {

namespace embedded {
struct EmbeddedSchema {
  const unsigned char* text;  // the file's bytes
  std::size_t size;
  CompiledSchema (*build)();
};
// Ends with an entry whose text is nullptr. Defined in the generated
// schema_data.cpp.
extern const EmbeddedSchema kSchemas[];
}  // namespace embedded

// The embedded compiled schema whose file is byte for byte `text`, or
// nullopt.
std::optional<CompiledSchema> embedded_schema(std::string_view text);
// The same for the file at `path`, compared without reading it onto the
// heap; nullopt also when it cannot be read (the caller's read reports
// that).
std::optional<CompiledSchema> embedded_schema_of_file(const std::string& path);

}  // namespace devgraph
