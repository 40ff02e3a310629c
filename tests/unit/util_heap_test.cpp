// The huge-page heap: a hint below the threshold, or without the
// executable's consent, changes nothing; a large hint puts the following
// allocations in a 2 MiB-aligned range advised MADV_HUGEPAGE. Each case
// runs in a fresh process, since it changes the process's allocator.
#include "util/heap.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include "support/test_util.h"

namespace devgraph {
namespace {

// Runs `body` in a fresh process: this test binary executed again with a
// filter that selects only the current test, whose in_child() call then
// runs `body` and exits with its value. A forked child would inherit the
// heap of every test run before this one, and a block freed there could
// serve an allocation the case expects from new heap growth.
int in_child(const std::function<int()>& body) {
  constexpr const char* kMarker = "DEVGRAPH_HEAP_TEST_CHILD";
  if (std::getenv(kMarker) != nullptr) ::_exit(body());
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string filter =
      std::string("--gtest_filter=") + info->test_suite_name() + "." + info->name();
  pid_t pid = ::fork();
  if (pid == 0) {
    ::setenv(kMarker, "1", 1);
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDOUT_FILENO);
    ::execl("/proc/self/exe", "devgraph_unit_tests", filter.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

bool kernel_offers_huge_pages() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(in, modes);
  return modes.find("[always]") != std::string::npos ||
         modes.find("[madvise]") != std::string::npos;
}

// The smaps entry of the mapping that holds `p`: its start and its
// VmFlags line.
struct Mapping {
  std::string flags;  // the VmFlags line
};
Mapping mapping_of(const void* p) {
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::ifstream in("/proc/self/smaps");
  std::string line;
  Mapping current;
  bool inside = false;
  while (std::getline(in, line)) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') > line.find(' ')) {
      inside = lo <= addr && addr < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) {
      current.flags = line;
      return current;
    }
  }
  return {};
}

TEST(HugeHeap, NothingHappensWithoutTheExecutablesConsent) {
  EXPECT_EQ(in_child([] { return expect_large_heap(size_t{64} << 20) ? 1 : 0; }), 0);
}

TEST(HugeHeap, ASmallHintDoesNothing) {
  EXPECT_EQ(in_child([] {
              allow_huge_heap();
              if (expect_large_heap(kLargeHeap - 1)) return 1;
              void* p = std::malloc(4096);
              Mapping m = mapping_of(p);
              return m.flags.find(" hg") == std::string::npos ? 0 : 2;
            }),
            0);
}

TEST(HugeHeap, ALargeHintMovesTheFollowingAllocationsOntoHugePages) {
  if (test::kUnderSanitizers) {
    EXPECT_EQ(in_child([] {
                allow_huge_heap();
                return expect_large_heap(size_t{1} << 20) ? 1 : 0;
              }),
              0);
    return;
  }
  if (!kernel_offers_huge_pages()) GTEST_SKIP() << "the kernel offers no transparent huge pages";
  EXPECT_EQ(in_child([] {
              allow_huge_heap();
              if (!expect_large_heap(size_t{1} << 20)) return 1;
              // Only the first hint acts.
              if (expect_large_heap(size_t{1} << 20)) return 2;
              // A block grown from the heap's top, and one above glibc's
              // usual mapping threshold, both come from the advised range.
              // (Small blocks may reuse memory freed earlier, below it.)
              auto* small = static_cast<char*>(std::malloc(size_t{64} << 10));
              auto* large = static_cast<char*>(std::malloc(size_t{512} << 10));
              if (small == nullptr || large == nullptr) return 3;
              std::memset(large, 1, size_t{512} << 10);
              // The block and the 2 MiB boundary below it are both in
              // advised memory (the kernel may split the advised range
              // into several mappings, each flagged).
              for (const char* p : {small, large}) {
                if (mapping_of(p).flags.find(" hg") == std::string::npos) return 4;
                const auto boundary = reinterpret_cast<uintptr_t>(p) & ~((size_t{2} << 20) - 1);
                if (mapping_of(reinterpret_cast<const void*>(boundary)).flags.find(" hg") ==
                    std::string::npos)
                  return 5;
              }
              std::free(large);
              std::free(small);
              return 0;
            }),
            0);
}

TEST(HugeHeap, AnEnormousHintIsCapped) {
  if (test::kUnderSanitizers || !kernel_offers_huge_pages()) GTEST_SKIP();
  // A hint of 1 TiB must neither overflow the top pad nor reserve it.
  EXPECT_EQ(in_child([] {
              allow_huge_heap();
              if (!expect_large_heap(size_t{1} << 40)) return 1;
              auto* block = static_cast<char*>(std::malloc(size_t{1} << 20));
              if (block == nullptr) return 2;
              std::memset(block, 1, size_t{1} << 20);
              Mapping m = mapping_of(block);
              return m.flags.find(" hg") == std::string::npos ? 3 : 0;
            }),
            0);
}

}  // namespace
}  // namespace devgraph
