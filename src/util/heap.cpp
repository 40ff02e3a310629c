#include "util/heap.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define DEVGRAPH_HUGE_HEAP 1
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace devgraph {

#ifdef DEVGRAPH_HUGE_HEAP

namespace {

constexpr uintptr_t kHuge = uintptr_t{2} << 20;
// glibc's chunk header in front of every block (prev_size + size).
constexpr uintptr_t kHeader = 2 * sizeof(size_t);

uintptr_t round_up(uintptr_t v, uintptr_t to) {
  return (v + to - 1) & ~(to - 1);
}

// Atomic only so that a hint from another thread is harmless: the first
// large hint of the process acts, whoever gives it.
std::atomic<bool> g_allowed{false};
std::atomic<bool> g_done{false};

bool move_heap_to_huge_pages(size_t window_bytes) {
  window_bytes = round_up(window_bytes, kHuge);
  // Freed memory at the top of the heap stays mapped (a trim would split
  // the huge page), and blocks up to 32 MiB come from the heap rather than
  // from a mapping of their own, so a state file read lands in the window.
  if (mallopt(M_TRIM_THRESHOLD, 256 << 20) == 0) return false;
  if (mallopt(M_MMAP_THRESHOLD, 32 << 20) == 0) return false;
  // Make malloc grow the heap (sbrk) by the window plus room to align it:
  // ask for one block larger than the free top of the heap, with a large
  // top pad, and give it back. The new range is untouched.
  if (mallopt(M_TOP_PAD, static_cast<int>(window_bytes + kHuge)) == 0) return false;
  const size_t top_free = mallinfo2().keepcost;
  void* probe = std::malloc(top_free + 64);
  if (probe == nullptr) return false;
  const auto top = reinterpret_cast<uintptr_t>(probe) - kHeader;
  const auto brk_end = reinterpret_cast<uintptr_t>(sbrk(0));
  std::free(probe);
  mallopt(M_TOP_PAD, 128 << 10);
  // The window starts at the first 2 MiB boundary clear of the page that
  // holds the top's header, and ends at the last one inside the heap.
  const uintptr_t window = round_up(top + kHeader + 4096, kHuge);
  const uintptr_t window_end = brk_end & ~(kHuge - 1);
  if (window_end < window + kHuge || window < top + 2 * kHeader + 64) return false;
  if (madvise(reinterpret_cast<void*>(window), window_end - window, MADV_HUGEPAGE) != 0)
    return false;
  // Fill the gap below the window with one block that is never freed and
  // never touched past its header. It ends exactly at the window, so the
  // heap's next header is the window's first bytes and the page below the
  // window is never touched. (The block's pages cost nothing: only touched
  // pages exist.) glibc sizes a block as the request plus 8, rounded up
  // to 16; window - top is a multiple of 16.
  void* spacer = std::malloc(window - top - kHeader);
  if (spacer == nullptr) return false;
  return reinterpret_cast<uintptr_t>(spacer) == top + kHeader;
}

}  // namespace

void allow_huge_heap() {
  g_allowed = true;
}

bool expect_large_heap(size_t bytes) {
  if (!g_allowed || bytes < kLargeHeap || g_done.exchange(true)) return false;
  // Room for the input, what is built from it, and some slack; the kernel
  // backs only the 2 MiB pages that are touched. Past 64 MiB the heap
  // simply grows on small pages again.
  const size_t window =
      bytes >= (size_t{16} << 20) ? size_t{64} << 20 : std::max(bytes * 4, size_t{4} << 20);
  return move_heap_to_huge_pages(window);
}

#else

void allow_huge_heap() {}
bool expect_large_heap(size_t) {
  return false;
}

#endif

}  // namespace devgraph
