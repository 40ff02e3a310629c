#include "contracts/schema.h"

// Without this valijson aborts the process on a malformed schema.
#define VALIJSON_USE_EXCEPTIONS 1
// valijson includes <iostream> without using it (with exceptions on), and
// that include alone would build the standard streams and their locale
// before main in every devgraph command (see util/console.h). libstdc++
// skips a header whose include guard is defined; what valijson does use
// comes from <istream> and <ostream>. With another library the guard is
// just an unused macro.
#include <istream>
#include <ostream>
#define _GLIBCXX_IOSTREAM 1
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>
#undef _GLIBCXX_IOSTREAM

#include <cstdint>
#include <exception>
#include <string_view>

#include "util/fs.h"

namespace devgraph {
namespace {

// valijson's adapter reads nlohmann::json; devgraph keeps ordered_json.
nlohmann::json to_plain(const Json& v) {
  switch (v.type()) {
    case Json::value_t::object: {
      nlohmann::json o = nlohmann::json::object();
      for (auto it = v.begin(); it != v.end(); ++it) o.emplace(it.key(), to_plain(it.value()));
      return o;
    }
    case Json::value_t::array: {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& item : v) a.push_back(to_plain(item));
      return a;
    }
    case Json::value_t::string:
      return v.get_ref<const std::string&>();
    case Json::value_t::boolean:
      return v.get<bool>();
    case Json::value_t::number_integer:
      return v.get<std::int64_t>();
    case Json::value_t::number_unsigned:
      return v.get<std::uint64_t>();
    case Json::value_t::number_float:
      return v.get<double>();
    default:
      return nullptr;
  }
}

std::string fingerprint_of(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  std::string out = std::to_string(text.size()) + "-";
  for (int shift = 60; shift >= 0; shift -= 4) out += "0123456789abcdef"[(h >> shift) & 15];
  return out;
}

}  // namespace

struct Schema::Impl {
  std::string fingerprint;
  valijson::Schema schema;
};

Schema::Schema(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Schema::Schema(Schema&&) noexcept = default;
Schema& Schema::operator=(Schema&&) noexcept = default;
Schema::~Schema() = default;

Expected<Schema> Schema::load(const std::string& path) {
  DG_TRY(std::string text, read_file(path));
  DG_TRY(Json doc, parse_json(text, path));
  DG_TRY(Schema schema, parse(doc, path));
  schema.impl_->fingerprint = fingerprint_of(text);
  return schema;
}

Expected<Schema> Schema::parse(const Json& schema, const std::string& origin) {
  auto impl = std::make_unique<Impl>();
  try {
    nlohmann::json plain = to_plain(schema);
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter adapter(plain);
    parser.populateSchema(adapter, impl->schema);
  } catch (const std::exception& e) {
    return fail(origin + ": not a usable JSON schema: " + e.what());
  }
  impl->fingerprint = fingerprint_of(schema.dump());
  return Schema(std::move(impl));
}

const std::string& Schema::fingerprint() const {
  return impl_->fingerprint;
}

std::vector<std::string> Schema::validate(const Json& value) const {
  nlohmann::json plain = to_plain(value);
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter adapter(plain);
  std::vector<std::string> out;
  if (validator.validate(impl_->schema, adapter, &results)) return out;
  valijson::ValidationResults::Error err;
  while (results.popError(err)) {
    std::string path;
    for (const auto& part : err.context) {
      if (part == "<root>") continue;
      path += part;
    }
    if (path.empty()) path = "<root>";
    out.push_back(path + ": " + err.description);
  }
  return out;
}

std::string state_schema_path(const std::string& skill_dir) {
  return join_path(skill_dir, "contracts/run-state.schema.json");
}

std::string result_schema_path(const std::string& skill_dir) {
  return join_path(skill_dir, "contracts/agent-result.schema.json");
}

}  // namespace devgraph
