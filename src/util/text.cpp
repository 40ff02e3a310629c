#include "util/text.h"

namespace devgraph {

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i ? sep : "") + items[i];
  return s;
}

std::string clip(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(0, n);
}

std::string clip_tail(const std::string& s, size_t n) {
  return s.size() <= n ? s : s.substr(s.size() - n);
}

}  // namespace devgraph
