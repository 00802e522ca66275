#include "weft/thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_config.h"
#include "weft/error.h"
#include "weft/scheduler.h"
#include "weft/sync.h"
#include "weft/this_thread.h"

namespace weft {
namespace {

using testing::config_with;
using testing::two_vps;

TEST(Thread, HundredThousandShortThreadsCreatedAndJoined) {
  Scheduler scheduler(two_vps());
  constexpr int kThreads = 100'000;
  std::atomic<int> ran{0};
  // Joined in batches from a weft thread, as a rank would; a batch also spawns its own children.
  Thread parent = spawn([&] {
    std::vector<Thread> batch;
    for (int i = 0; i < kThreads; ++i) {
      batch.push_back(spawn([&] { ran.fetch_add(1, std::memory_order_relaxed); }));
      if (batch.size() == 1000) {
        for (Thread& t : batch) t.join();
        batch.clear();
      }
    }
    for (Thread& t : batch) t.join();
  });
  parent.join();
  EXPECT_EQ(ran.load(), kThreads);
  EXPECT_EQ(scheduler.live_threads(), 0u);
}

TEST(Thread, ManyThreadsAliveAtOnceFromTheMainThread) {
  Scheduler scheduler(two_vps());
  constexpr int kThreads = 5000;
  Event go;
  std::atomic<int> waiting{0};
  std::vector<Thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.push_back(spawn([&] {
      waiting.fetch_add(1);
      go.wait();
    }));
  }
  while (waiting.load() != kThreads) std::this_thread::yield();
  EXPECT_EQ(scheduler.live_threads(), static_cast<std::size_t>(kThreads));
  go.set();
  for (Thread& t : threads) t.join();
}

TEST(Thread, ShutdownWaitsForDetachedThreads) {
  std::atomic<int> done{0};
  {
    Scheduler scheduler(two_vps());
    for (int i = 0; i < 100; ++i) {
      spawn([&] {
        this_thread::sleep_for(std::chrono::milliseconds(2));
        done.fetch_add(1);
      }).detach();
    }
  }
  EXPECT_EQ(done.load(), 100);
}

TEST(Thread, IdentityOfTheCallingThread) {
  Scheduler scheduler(two_vps());
  EXPECT_FALSE(this_thread::is_weft_thread());
  EXPECT_EQ(this_thread::id(), 0u);
  EXPECT_EQ(this_thread::vp(), -1);
  ThreadAttr attr;
  attr.type = ThreadType::progress;
  attr.rank = 7;
  std::uint64_t seen_id = 0;
  ThreadType seen_type = ThreadType::user;
  int seen_rank = -1;
  int seen_priority = -1;
  Thread t = spawn(attr, [&] {
    seen_id = this_thread::id();
    seen_type = this_thread::type();
    seen_rank = this_thread::rank();
    seen_priority = this_thread::priority();
  });
  const std::uint64_t id = t.id();
  t.join();
  EXPECT_EQ(seen_id, id);
  EXPECT_EQ(seen_type, ThreadType::progress);
  EXPECT_EQ(seen_rank, 7);
  EXPECT_EQ(seen_priority, scheduler.config().priority(ThreadType::progress));
}

// A work-first spawn runs the new thread before the caller goes on, and the caller resumes first
// when the new thread stops, ahead of threads queued before.
TEST(Thread, RunAtOnceStartsTheThreadAndResumesTheCallerFirst) {
  Scheduler scheduler(config_with({{"topology", "synthetic:pack:1 core:1 pu:1"}}));
  std::string order;
  ThreadAttr here;
  here.placement = Placement::pinned(0);
  Thread caller = spawn(here, [&] {
    Thread queued = spawn(here, [&] { order += 'q'; });
    ThreadAttr at_once = here;
    at_once.run_at_once = true;
    Thread helper = spawn(at_once, [&] {
      order += 'h';
      this_thread::yield();
      order += 'H';
    });
    order += 'c';
    queued.join();
    helper.join();
  });
  caller.join();
  EXPECT_EQ(order, "hcqH");
}

// Where the caller's processor may not run it (here: the caller is no weft thread), a work-first
// spawn queues the thread like any other.
TEST(Thread, RunAtOnceFromOutsideWeftQueuesTheThread) {
  Scheduler scheduler(two_vps());
  std::atomic<bool> ran{false};
  ThreadAttr attr;
  attr.run_at_once = true;
  Thread t = spawn(attr, [&] { ran.store(true); });
  t.join();
  EXPECT_TRUE(ran.load());
}

TEST(Thread, BadAttributesAreRefusedWithTheirName) {
  Scheduler scheduler(two_vps());
  ThreadAttr pinned;
  pinned.placement = Placement::pinned(5);
  try {
    spawn(pinned, [] {}).join();
    FAIL() << "expected weft::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Placement::pinned(5)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("0..1"), std::string::npos) << e.what();
  }
  ThreadAttr priority;
  priority.priority = 9;
  EXPECT_THROW(spawn(priority, [] {}), Error);
  ThreadAttr numa;
  numa.placement = Placement::numa(3);
  EXPECT_THROW(spawn(numa, [] {}), Error);
  EXPECT_THROW(spawn(std::function<void()>{}), Error);
}

TEST(Thread, SpawnWithoutSchedulerIsRefused) {
  try {
    spawn([] {}).join();
    FAIL() << "expected weft::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no weft::Scheduler"), std::string::npos);
  }
}

TEST(Thread, OnlyOneSchedulerAtATime) {
  Scheduler scheduler(two_vps());
  EXPECT_THROW(Scheduler second(two_vps()), Error);
  EXPECT_EQ(Scheduler::current(), &scheduler);
}

TEST(Thread, TooManyVirtualProcessorsIsRefused) {
  try {
    Scheduler scheduler(
        config_with({{"topology", "synthetic:pack:1 core:2 pu:1"}, {"scheduler.vps", "3"}}));
    FAIL() << "expected weft::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("scheduler.vps"), std::string::npos) << e.what();
  }
}

TEST(ThreadDeathTest, UncaughtExceptionNamesTheThread) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Scheduler scheduler(two_vps());
        ThreadAttr attr;
        attr.type = ThreadType::omp_worker;
        spawn(attr, [] { throw std::runtime_error("boom"); }).join();
      },
      ::testing::ExitedWithCode(1), "type omp_worker.*uncaught exception: boom");
}

TEST(ThreadDeathTest, DestroyingAJoinableThreadIsFatal) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Scheduler scheduler(two_vps());
        Thread t = spawn([] { this_thread::sleep_for(std::chrono::milliseconds(10)); });
      },
      ::testing::ExitedWithCode(1), "joinable weft::Thread .* destroyed");
}

// A store through a null pointer that must reach the hardware and fault: UBSan's null check
// (the ASan + UBSan build) would otherwise end the program before weft's crash handler runs.
__attribute__((no_sanitize("null"))) void store_through_null() {
  volatile int* null = nullptr;
  *null = 1;
}

TEST(ThreadDeathTest, CrashInAThreadNamesIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        Scheduler scheduler(two_vps());
        ThreadAttr attr;
        attr.type = ThreadType::mpi_task;
        attr.rank = 3;
        spawn(attr, store_through_null).join();
      },
      "type mpi_task, rank 3.*crashed with SIGSEGV accessing 0x0 at 0x[0-9a-f]+");
}

}  // namespace
}  // namespace weft
