// Writes 64 MiB, twice the size of this machine's last-level cache, so
// that the next program starts with its code and data out of the CPU's
// caches, as a command does that follows other work (an agent, a build).
// The memory sits on transparent huge pages where the kernel offers them,
// so that evicting costs a few milliseconds, not thousands of page faults.
// bench/alternate runs it before each timed command when asked.
#include <sys/mman.h>

#include <cstddef>
#include <cstring>

int main() {
  constexpr size_t kBytes = size_t{64} << 20;
  void* p = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return 1;
  (void)madvise(p, kBytes, MADV_HUGEPAGE);  // small pages work too, only slower
  std::memset(p, 1, kBytes);
  return 0;
}
