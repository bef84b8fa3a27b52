// base/parallel.h's ordered_pipeline, as a sweep and a golden run use it: the first two steps on
// the calling thread in index order, commits in index order, a bounded number of items in flight,
// the first exception rethrown after every thread has stopped — on one thread and on several; and
// the WorkerThread its threads and parallel_for's run on.
#include "base/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace ropecheck {
namespace {

struct Item {
  std::size_t index = 0;
  std::size_t square = 0;
};

// Uneven work, so that on several threads items finish out of order.
void wait_a_little(std::size_t i) { std::this_thread::sleep_for(std::chrono::microseconds((i * 7919) % 13 * 50)); }

TEST(OrderedPipeline, MiddleStepAndCommitsInIndexOrderOnAnyNumberOfThreads) {
  const std::thread::id caller = std::this_thread::get_id();
  for (const std::size_t window_per_worker : {std::size_t{2}, std::size_t{8}}) {
    for (int threads : {1, 2, 3, 8}) {
      constexpr std::size_t n = 200;
      std::vector<std::size_t> called, committed;  // written only by the one-at-a-time steps
      std::atomic<int> off_the_calling_thread{0};    // prepare or in_order elsewhere
      std::atomic<int> in_middle{0}, most_in_middle{0};
      std::atomic<int> in_flight{0}, most_in_flight{0};
      ordered_pipeline<Item>(
          n, threads,
          [&](std::size_t i) {
            if (std::this_thread::get_id() != caller) ++off_the_calling_thread;
            const int now = ++in_flight;
            for (int seen = most_in_flight; now > seen && !most_in_flight.compare_exchange_weak(seen, now);) {
            }
            wait_a_little(i);
            return Item{i, 0};
          },
          [&](std::size_t i, Item& item) {
            if (std::this_thread::get_id() != caller) ++off_the_calling_thread;
            const int now = ++in_middle;
            for (int seen = most_in_middle; now > seen && !most_in_middle.compare_exchange_weak(seen, now);) {
            }
            EXPECT_EQ(item.index, i);
            called.push_back(i);
            --in_middle;
          },
          [&](std::size_t i, Item& item) {
            wait_a_little(i + 5);
            item.square = i * i;
          },
          [&](std::size_t i, Item&& item) {
            EXPECT_EQ(item.index, i);
            EXPECT_EQ(item.square, i * i);
            committed.push_back(i);
            --in_flight;
          },
          window_per_worker);
      ASSERT_EQ(called.size(), n) << threads;
      ASSERT_EQ(committed.size(), n) << threads;
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(called[i], i) << threads;
        EXPECT_EQ(committed[i], i) << threads;
      }
      EXPECT_EQ(most_in_middle.load(), 1) << threads;
      // The calls a stateful callee sees are made on the thread it was called from (a Python
      // callable sees Ctrl-C only on the main thread).
      EXPECT_EQ(off_the_calling_thread.load(), 0) << threads;
      // At most window_per_worker·threads items between prepare and commit (one when there is one
      // thread).
      EXPECT_LE(most_in_flight.load(), threads == 1 ? 1 : static_cast<int>(window_per_worker) * threads) << threads;
    }
  }
}

TEST(OrderedPipeline, NoItemsNoCalls) {
  int calls = 0;
  ordered_pipeline<Item>(
      0, 4, [&](std::size_t) { ++calls; return Item{}; }, [&](std::size_t, Item&) { ++calls; }, [&](std::size_t, Item&) { ++calls; },
      [&](std::size_t, Item&&) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(OrderedPipeline, FirstExceptionRethrownAndNothingCommittedAfterIt) {
  for (int threads : {1, 2, 4}) {
    for (int failing_step = 0; failing_step < 4; ++failing_step) {
      constexpr std::size_t n = 100, bad = 37;
      std::vector<std::size_t> committed;
      const auto maybe_throw = [&](int step, std::size_t i) {
        if (step == failing_step && i == bad) throw std::runtime_error("item 37");
      };
      try {
        ordered_pipeline<Item>(
            n, threads,
            [&](std::size_t i) {
              maybe_throw(0, i);
              return Item{i, 0};
            },
            [&](std::size_t i, Item&) { maybe_throw(1, i); },
            [&](std::size_t i, Item&) {
              wait_a_little(i);
              maybe_throw(2, i);
            },
            [&](std::size_t i, Item&&) {
              maybe_throw(3, i);
              committed.push_back(i);
            });
        ADD_FAILURE() << "no exception, threads " << threads << ", step " << failing_step;
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "item 37");
      }
      // Commits stay in order and stop before the failing item.
      ASSERT_LE(committed.size(), bad) << threads << " " << failing_step;
      for (std::size_t i = 0; i < committed.size(); ++i) EXPECT_EQ(committed[i], i);
    }
  }
}

TEST(WorkerThread, RunsItsBodyAndJoins) {
  std::atomic<int> runs{0};
  std::thread::id id;
  {
    WorkerThread t([&] {
      id = std::this_thread::get_id();
      ++runs;
    });
    WorkerThread moved(std::move(t));  // a pool's vector moves them as it grows
    moved.join();
  }
  EXPECT_EQ(runs.load(), 1);
  EXPECT_NE(id, std::this_thread::get_id());
}

#if defined(__linux__)
// Started off its creator's CPU, a worker may then run on every CPU the process may (it restores
// the mask itself): the same set as its creator's, whichever set that is — all the machine's, or
// the one CPU a pinned caller is left (where it cannot start elsewhere, and starts where it is).
TEST(WorkerThread, RunsWhereverItsCreatorMay) {
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  const auto worker_mask = [] {
    cpu_set_t mask;
    CPU_ZERO(&mask);
    WorkerThread t([&] { EXPECT_EQ(pthread_getaffinity_np(pthread_self(), sizeof mask, &mask), 0); });
    t.join();
    return mask;
  };
  const cpu_set_t all = worker_mask();
  EXPECT_TRUE(CPU_EQUAL(&all, &allowed));
  // From a thread pinned to one CPU (its own thread, so this test's leaves its mask as it was).
  std::thread pinned([&] {
    const int here = sched_getcpu();
    ASSERT_GE(here, 0);
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(here, &one);
    ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof one, &one), 0);
    const cpu_set_t got = worker_mask();
    EXPECT_TRUE(CPU_EQUAL(&got, &one));
  });
  pinned.join();
}
#endif

}  // namespace
}  // namespace ropecheck
