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
