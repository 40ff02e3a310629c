#include "util/stem.h"

namespace devgraph {

std::string word_stem(std::string_view word) {
  std::string w;
  w.reserve(word.size());
  for (char c : word) w += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  auto ends = [&](std::string_view tail) {
    return w.size() > tail.size() && w.compare(w.size() - tail.size(), tail.size(), tail) == 0;
  };
  if (w.size() >= 5 && ends("ies")) {
    w.resize(w.size() - 3);
    w += 'y';
  } else if (w.size() >= 5 &&
             (ends("sses") || ends("ches") || ends("shes") || ends("xes") || ends("zes"))) {
    w.resize(w.size() - 2);
  } else if (w.size() >= 4 && ends("s") && !ends("ss") && !ends("us") && !ends("is")) {
    w.pop_back();
  }
  bool cut = false;
  if (w.size() >= 6 && ends("ing")) {
    w.resize(w.size() - 3);
    cut = true;
  } else if (w.size() >= 5 && ends("ed")) {
    w.resize(w.size() - 2);
    cut = true;
  }
  // The consonant the suffix doubled.
  if (cut && w.size() >= 3 && w.back() == w[w.size() - 2] && w.back() != 'l' && w.back() != 's' &&
      w.back() != 'z' && std::string_view("aeiou").find(w.back()) == std::string_view::npos)
    w.pop_back();
  if (w.size() >= 4 && w.back() == 'e') w.pop_back();
  return w;
}

}  // namespace devgraph
