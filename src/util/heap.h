// Huge pages for the C heap of a short-lived process that reads a large
// file.
//
// On the virtual machines devgraph runs on, the first touch of each fresh
// 4 KiB page costs 10-20 us, so page faults, not instructions, dominate a
// command such as `checkpoint move` on a 1,000-task run (about 270 faults
// against 10 M instructions). One transparent huge page costs about as much
// as 40 small ones and covers 512, but setting it up costs about 0.5 ms, as
// much as a small command's whole heap: so it is taken only when a command
// is about to hold a large input.
//
// Contract:
// - allow_huge_heap() is called by the verb dispatcher for verbs whose
//   process ends within seconds (run-bundle and demo are not among them:
//   a long run should give freed memory back). Tests and other embedders
//   of the library never call it, so their heap is untouched.
// - expect_large_heap(bytes) is a hint from code about to allocate about
//   `bytes`. With huge pages allowed and `bytes` >= kLargeHeap, the first
//   such hint makes the next few MiB of heap growth come from a 2 MiB-aligned
//   range advised MADV_HUGEPAGE (blocks up to 32 MiB then come from the heap
//   rather than separate mappings, so the large input lands there too).
//   Otherwise it does nothing.
// - Neither changes whether an allocation succeeds. When the kernel has no
//   transparent huge pages or glibc's heap does not behave as expected, the
//   process runs with small pages and a little unused address space.
// - After the switch, freed heap memory stays with the process until exit
//   (trimming would split the huge page).
// - No effect in sanitizer builds or without glibc.
#pragma once

#include <cstddef>

namespace devgraph {

inline constexpr size_t kLargeHeap = size_t{128} << 10;

void allow_huge_heap();
// True when this call moved the heap onto huge pages.
bool expect_large_heap(size_t bytes);

}  // namespace devgraph
