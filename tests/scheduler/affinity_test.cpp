#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "test_config.h"
#include "weft/scheduler.h"
#include "weft/sync.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

using testing::config_with;
using testing::two_vps;

long kernel_tid() {
  return ::syscall(SYS_gettid);
}

ThreadAttr with(Placement placement) {
  ThreadAttr attr;
  attr.placement = placement;
  return attr;
}

// Keeps every virtual processor busy with free threads that yield, so that pinned threads have
// to share their core and free threads get moved around.
struct Churn {
  explicit Churn(int threads) {
    for (int i = 0; i < threads; ++i) {
      workers.push_back(spawn([this] {
        while (!stop.load()) this_thread::yield();
      }));
    }
  }
  ~Churn() {
    stop.store(true);
    for (Thread& t : workers) t.join();
  }
  std::atomic<bool> stop{false};
  std::vector<Thread> workers;
};

TEST(Affinity, PinnedThreadsNeverChangeCore) {
  Scheduler scheduler(two_vps());
  Churn churn(8);
  std::atomic<int> wrong{0};
  std::vector<Thread> pinned;
  for (int i = 0; i < 8; ++i) {
    const int vp = i % 2;
    pinned.push_back(spawn(with(Placement::pinned(vp)), [&wrong, vp] {
      Event never;
      for (int k = 0; k < 2000; ++k) {
        if (this_thread::vp() != vp) wrong.fetch_add(1);
        switch (k % 3) {
          case 0:
            this_thread::yield();
            break;
          case 1:
            never.wait_for(std::chrono::microseconds(10));
            break;
          default:
            this_thread::sleep_for(std::chrono::microseconds(5));
            break;
        }
      }
    }));
  }
  for (Thread& t : pinned) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(Affinity, NumaBoundThreadsStayOnTheirNode) {
  // Four virtual processors on two synthetic NUMA nodes (unbound: this is not the machine).
  Scheduler scheduler(config_with({{"topology", "synthetic:pack:2 [numa] core:2 pu:1"}}));
  ASSERT_EQ(scheduler.num_vps(), 4);
  std::atomic<int> wrong{0};
  std::atomic<int> runs{0};
  std::vector<Thread> threads;
  for (int i = 0; i < 16; ++i) {
    const int node = i % 2;
    threads.push_back(spawn(with(Placement::numa(node)), [&, node] {
      for (int k = 0; k < 500; ++k) {
        if (scheduler.vp_numa(this_thread::vp()) != node) wrong.fetch_add(1);
        runs.fetch_add(1);
        this_thread::yield();
      }
    }));
  }
  for (Thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(runs.load(), 16 * 500);
}

TEST(Affinity, NodeBoundThreadIsWokenWhileAnotherNodeSearches) {
  // Regression: a wake-up for node 0 was skipped because a processor of node 1, which cannot
  // run node 0's threads, was searching; the join below then hung until the test timed out.
  Scheduler scheduler(config_with(
      {{"topology", "synthetic:pack:2 [numa] core:2 pu:1"}, {"scheduler.idle_spin_us", "2000"}}));
  for (int trial = 0; trial < 5; ++trial) {
    std::atomic<bool> stop{false};
    Event feed(Event::Mode::automatic);
    // Keeps VP 2 (node 1) waking and searching: a foreign thread feeds it every 100 us.
    Thread fed = spawn(with(Placement::pinned(2)), [&] {
      while (!stop.load()) feed.wait();
    });
    std::thread feeder([&] {
      while (!stop.load()) {
        feed.set();
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    });
    Event go;
    std::atomic<bool> ran{false};
    Thread waiter = spawn(with(Placement::numa(0)), [&] {
      go.wait();
      ran.store(true);
    });
    // Long enough for node 0's processors to stop searching and sleep.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    go.set();
    waiter.join();
    EXPECT_TRUE(ran.load());
    stop.store(true);
    feeder.join();
    feed.set();
    fed.join();
  }
}

TEST(Affinity, NodeBoundThreadsSpreadOverTheirNode) {
  Scheduler scheduler(config_with({{"topology", "synthetic:pack:1 [numa] core:4 pu:1"}}));
  std::mutex mutex;
  std::set<int> used;
  auto spread = [&] {
    std::lock_guard lock(mutex);
    return used.size() >= 2;
  };
  // Compute-bound threads that never yield, spawned by a thread of the node that never yields
  // either: they run side by side only if surplus work woke the node's sleeping processors.
  // Each gives up after a bounded spin, so a failure ends the test instead of hanging it.
  spawn(with(Placement::pinned(0)), [&] {
    std::vector<Thread> threads;
    for (int i = 0; i < 8; ++i) {
      threads.push_back(spawn(with(Placement::numa(0)), [&] {
        {
          std::lock_guard lock(mutex);
          used.insert(this_thread::vp());
        }
        for (long spins = 0; spins < 20'000'000 && !spread(); ++spins) {
        }
      }));
    }
    for (long spins = 0; spins < 20'000'000 && !spread(); ++spins) {
    }
    for (Thread& t : threads) t.join();
  }).join();
  EXPECT_GE(used.size(), 2u);
}

TEST(Affinity, FreeThreadsAreStolenWhenTheirCoreIsBusy) {
  Scheduler scheduler(two_vps());
  std::atomic<bool> release{false};
  // Atomics, not a mutex: a busy thread that locks and unlocks a std::mutex in a loop can starve
  // the free threads waiting for it in the kernel for as long as it likes.
  std::atomic<unsigned> ran_on{0};  // bit v: a free thread ran on VP v
  std::atomic<int> runs{0};
  // VP 0 is taken by a thread that never yields until the free threads have all run; they are
  // queued on VP 0, so they can only run if VP 1 steals them.
  //
  // VP 1 is kept awake (a thread yielding there) until all eight are queued. Otherwise it could
  // fall asleep between two spawns: a lone thread queued by a VP does not wake another (its own
  // VP is expected to run it), and here that VP never yields (architecture.md, "a thread that
  // never yields keeps its core"), so the last one would wait for good.
  std::atomic<bool> queued{false};
  Thread keeper = spawn(with(Placement::pinned(1)), [&] {
    while (!queued.load()) this_thread::yield();
  });
  Thread busy = spawn(with(Placement::pinned(0)), [&] {
    std::vector<Thread> free;
    for (int i = 0; i < 8; ++i) {
      free.push_back(spawn(with(Placement::free(0)), [&] {
        ran_on.fetch_or(1u << this_thread::vp());
        runs.fetch_add(1);
      }));
    }
    queued.store(true);
    while (runs.load() < 8) {
    }
    release.store(true);
    for (Thread& t : free) t.join();
  });
  busy.join();
  keeper.join();
  EXPECT_TRUE(release.load());
  EXPECT_EQ(ran_on.load(), 1u << 1) << "bit v set: a free thread ran on VP v";
  std::uint64_t steals = 0;
  for (const auto& s : scheduler.stats()) steals += s.steals;
  EXPECT_GE(steals, 8u);
}

TEST(Affinity, ThreadThatMigratesMidFunctionSeesItsNewCore) {
  Scheduler scheduler(two_vps());
  // The kernel thread of each virtual processor, learnt from pinned probes.
  std::map<int, long> tid_of_vp;
  for (int vp = 0; vp < 2; ++vp) {
    long tid = 0;
    spawn(with(Placement::pinned(vp)), [&] { tid = kernel_tid(); }).join();
    tid_of_vp[vp] = tid;
  }
  ASSERT_NE(tid_of_vp[0], tid_of_vp[1]);
  std::atomic<int> migrations{0};
  std::atomic<int> mismatches{0};
  std::atomic<bool> done{false};
  std::vector<Thread> movers;
  for (int i = 0; i < 6; ++i) {
    movers.push_back(spawn(with(Placement::free(0)), [&] {
      for (int k = 0; k < 200'000 && !done.load(); ++k) {
        const int before = this_thread::vp();
        this_thread::yield();
        // Same function, after a switch: both must describe the kernel thread now running us.
        const int after = this_thread::vp();
        if (tid_of_vp[after] != kernel_tid()) mismatches.fetch_add(1);
        if (after != before && migrations.fetch_add(1) > 50) done.store(true);
      }
    }));
  }
  for (Thread& t : movers) t.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_GT(migrations.load(), 0) << "no thread migrated: the test did not exercise anything";
}

}  // namespace
}  // namespace weft
