// devgraph: the thin executable. All logic lives in the library; this file
// only hands the command line to the verb table.
#include <cstdlib>
#include <string_view>

#include "cli/verbs.h"
#include "util/heap.h"

int main(int argc, char** argv) {
  // Every devgraph process is short-lived or bounded by its peak, so a
  // large input may move the heap onto huge pages (src/util/heap.h).
  // DEVGRAPH_HUGE_PAGES=0 keeps small pages.
  const char* huge = std::getenv("DEVGRAPH_HUGE_PAGES");
  if (huge == nullptr || std::string_view(huge) != "0") devgraph::allow_huge_heap();
  return devgraph::run_main(argc, argv);
}
