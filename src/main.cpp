// devgraph: the thin executable. All logic lives in the library; this file
// only hands the command line to the verb table.
#include "cli/verbs.h"

int main(int argc, char** argv) {
  return devgraph::run_main(argc, argv);
}
