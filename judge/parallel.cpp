#include "judge/parallel.h"

#include <sys/mman.h>

#include <cstdint>

namespace ropecheck::judge {

void populate_pages(void* data, std::size_t bytes, int threads) {
#ifdef MADV_POPULATE_WRITE  // Linux 5.14
  constexpr std::uintptr_t kPage = 4096;
  const auto first = (reinterpret_cast<std::uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  const auto last = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kPage - 1);
  if (last <= first) return;
#ifdef MADV_HUGEPAGE
  // The aligned 2 MiB blocks inside also advised as transparent huge pages: where the system's
  // THP mode is "madvise" (as on the VMs of bench/README.md), 64 MB of a check's chunk buffers took
  // 16 384 faults in 4 KiB pages — 19-26 ms on one thread, 12 ms on two, 3-5 ms to unmap — against
  // 9-12, 5-6 and 0.2 ms in 32 faults of 2 MiB, and the judging reads them through fewer TLB
  // entries: `check` of 4096 x 32 x 128 f32 took 28-34 ms less CPU on one thread, 7-31 ms on two
  // (medians of 20 interleaved runs, bench/README.md). In "always" mode the advice changes
  // nothing, in "never" it is ignored, and where no huge page is free the faults fall back to
  // 4 KiB pages.
  constexpr std::uintptr_t kHugePage = std::uintptr_t{1} << 21;
  const auto huge_first = (first + kHugePage - 1) & ~(kHugePage - 1);
  const auto huge_last = last & ~(kHugePage - 1);
  if (huge_last > huge_first) (void)madvise(reinterpret_cast<void*>(huge_first), huge_last - huge_first, MADV_HUGEPAGE);
#endif
  const std::vector<TokenRange> ranges = token_ranges(static_cast<std::int64_t>((last - first) / kPage), threads);
  parallel_for(ranges.size(), threads, [&](std::size_t w) {
    const std::uintptr_t begin = first + static_cast<std::uintptr_t>(ranges[w].begin) * kPage;
    const std::uintptr_t end = first + static_cast<std::uintptr_t>(ranges[w].end) * kPage;
    if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
  });
#else
  (void)data, (void)bytes, (void)threads;
#endif
}

}  // namespace ropecheck::judge
