#include "store/fast_json.h"

#include <string_view>
#include <unordered_map>
#include <vector>

namespace devgraph {
namespace {

using Object = Json::object_t;
using Pairs = Object::Container;  // the vector under ordered_map

class Builder {
 public:
  Json root;
  std::string error;

  bool null() { return put(Json(nullptr)); }
  bool boolean(bool v) { return put(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return put(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return put(Json(v)); }
  bool number_float(Json::number_float_t v, const std::string&) { return put(Json(v)); }
  bool string(std::string& v) { return put(Json(std::move(v))); }
  bool binary(Json::binary_t&) { return false; }
  bool key(std::string& k) {
    key_ = std::move(k);
    return true;
  }
  bool start_object(std::size_t) { return open(Json(Json::value_t::object)); }
  bool end_object() {
    dedupe(stack_.back()->get_ref<Object&>());
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) { return open(Json(Json::value_t::array)); }
  bool end_array() {
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    error = e.what();
    return false;
  }

 private:
  // Only the innermost open container grows, so pointers to the open
  // containers on the stack stay valid.
  Json* place(Json&& v) {
    if (stack_.empty()) {
      root = std::move(v);
      return &root;
    }
    Json* top = stack_.back();
    if (top->is_array()) {
      auto& arr = top->get_ref<Json::array_t&>();
      arr.push_back(std::move(v));
      return &arr.back();
    }
    Pairs& pairs = top->get_ref<Object&>();
    pairs.emplace_back(std::move(key_), std::move(v));
    return &pairs.back().second;
  }
  bool put(Json&& v) {
    place(std::move(v));
    return true;
  }
  bool open(Json&& v) {
    stack_.push_back(place(std::move(v)));
    return true;
  }
  static void dedupe(Object& obj) {
    Pairs& pairs = obj;
    if (pairs.size() < 2) return;
    bool dup = false;
    if (pairs.size() <= 8) {
      for (size_t i = 1; i < pairs.size() && !dup; ++i)
        for (size_t j = 0; j < i && !dup; ++j) dup = pairs[i].first == pairs[j].first;
    } else {
      std::unordered_map<std::string_view, size_t> seen;
      seen.reserve(pairs.size());
      for (const auto& p : pairs) dup = dup || !seen.emplace(p.first, 0).second;
    }
    if (!dup) return;
    Pairs unique;
    std::unordered_map<std::string, size_t> at;
    for (auto& p : pairs) {
      auto it = at.find(p.first);
      if (it == at.end()) {
        at.emplace(p.first, unique.size());
        unique.emplace_back(p.first, std::move(p.second));
      } else {
        unique[it->second].second = std::move(p.second);
      }
    }
    pairs.clear();
    for (auto& p : unique) pairs.emplace_back(p.first, std::move(p.second));
  }

  std::vector<Json*> stack_;
  std::string key_;
};

}  // namespace

Expected<Json> parse_json_fast(std::string_view text, std::string_view what) {
  Builder b;
  bool ok = false;
  try {
    ok = Json::sax_parse(text, &b);
  } catch (const Json::exception& e) {
    b.error = e.what();
  }
  if (!ok) {
    std::string msg = b.error.empty() ? "parse error" : b.error;
    // nlohmann prefixes "[json.exception.parse_error.101] parse error at ...".
    if (auto pos = msg.find("] "); pos != std::string::npos) msg = msg.substr(pos + 2);
    return fail(std::string(what) + " is not valid JSON: " + msg);
  }
  return std::move(b.root);
}

}  // namespace devgraph
