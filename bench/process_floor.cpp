// The least any command costs on this machine: a static program that
// starts and exits. Linked the way devgraph is (bench/CMakeLists.txt), so
// the two pay the same start-up of the C library; whatever a devgraph
// command takes above this program is devgraph's own.
int main() {
  return 0;
}
