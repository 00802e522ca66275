#include "weft/sync.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test_config.h"
#include "weft/error.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

using testing::config_with;
using testing::two_vps;

constexpr int kRounds = 2000;

ThreadAttr pinned(int vp) {
  ThreadAttr attr;
  attr.placement = Placement::pinned(vp);
  return attr;
}

// The two sides of each ping-pong run on one core (vp 0, 0) and on two cores (vp 0, 1).
class PingPong : public ::testing::TestWithParam<int> {
 protected:
  PingPong() : scheduler_(two_vps()) {}
  int other_vp() const { return GetParam(); }
  Scheduler scheduler_;
};

TEST_P(PingPong, MutexAndConditionVariable) {
  Mutex mutex;
  ConditionVariable cv;
  int turn = 0;
  int total = 0;
  auto side = [&](int me) {
    for (int i = 0; i < kRounds; ++i) {
      std::unique_lock lock(mutex);
      cv.wait(lock, [&] { return turn == me; });
      ++total;
      turn = 1 - me;
      cv.notify_one();
    }
  };
  Thread a = spawn(pinned(0), [&] { side(0); });
  Thread b = spawn(pinned(other_vp()), [&] { side(1); });
  a.join();
  b.join();
  EXPECT_EQ(total, 2 * kRounds);
}

TEST_P(PingPong, AutomaticEvents) {
  Event ping(Event::Mode::automatic);
  Event pong(Event::Mode::automatic);
  int count = 0;
  Thread a = spawn(pinned(0), [&] {
    for (int i = 0; i < kRounds; ++i) {
      ping.set();
      pong.wait();
    }
  });
  Thread b = spawn(pinned(other_vp()), [&] {
    for (int i = 0; i < kRounds; ++i) {
      ping.wait();
      ++count;
      pong.set();
    }
  });
  a.join();
  b.join();
  EXPECT_EQ(count, kRounds);
}

TEST_P(PingPong, ManualEventsWithClear) {
  Event ping;
  Event pong;
  int count = 0;
  Thread a = spawn(pinned(0), [&] {
    for (int i = 0; i < kRounds; ++i) {
      ping.set();
      pong.wait();
      pong.clear();
    }
  });
  Thread b = spawn(pinned(other_vp()), [&] {
    for (int i = 0; i < kRounds; ++i) {
      ping.wait();
      ping.clear();
      ++count;
      pong.set();
    }
  });
  a.join();
  b.join();
  EXPECT_EQ(count, kRounds);
}

TEST_P(PingPong, Barrier) {
  Barrier barrier(2);
  std::atomic<int> serial{0};
  int shared = 0;
  bool consistent = true;
  auto side = [&](int me) {
    for (int i = 0; i < kRounds; ++i) {
      if (i % 2 == me) ++shared;
      if (barrier.arrive_and_wait()) serial.fetch_add(1);
      // Both sides see the same value between two barriers.
      if (shared != i + 1) consistent = false;
      barrier.arrive_and_wait();
    }
  };
  Thread a = spawn(pinned(0), [&] { side(0); });
  Thread b = spawn(pinned(other_vp()), [&] { side(1); });
  a.join();
  b.join();
  EXPECT_EQ(serial.load(), kRounds);
  EXPECT_TRUE(consistent);
}

TEST_P(PingPong, CollaborativeWait) {
  std::atomic<int> ball{0};
  std::atomic<int> polls{0};
  auto side = [&](int me) {
    for (int i = 0; i < kRounds; ++i) {
      wait_until([&] { return ball.load() % 2 == me; }, [&] { polls.fetch_add(1); });
      ball.fetch_add(1);
    }
  };
  Thread a = spawn(pinned(0), [&] { side(0); });
  Thread b = spawn(pinned(other_vp()), [&] { side(1); });
  a.join();
  b.join();
  EXPECT_EQ(ball.load(), 2 * kRounds);
  EXPECT_GT(polls.load(), 0);
}

TEST_P(PingPong, JoinChain) {
  // Each thread spawns the next and joins it: a chain of join wake-ups across cores.
  std::atomic<int> depth{0};
  std::function<void(int)> link = [&](int n) {
    depth.fetch_add(1);
    if (n == 0) return;
    Thread next = spawn(pinned(n % 2 == 0 ? 0 : other_vp()), [&, n] { link(n - 1); });
    next.join();
  };
  spawn(pinned(0), [&] { link(500); }).join();
  EXPECT_EQ(depth.load(), 501);
}

INSTANTIATE_TEST_SUITE_P(Cores, PingPong, ::testing::Values(0, 1),
                         [](const auto& info) { return info.param == 0 ? "OneCore" : "TwoCores"; });

TEST(Sync, MutexExcludesUnderContention) {
  Scheduler scheduler(two_vps());
  Mutex mutex;
  long counter = 0;
  std::vector<Thread> threads;
  for (int i = 0; i < 16; ++i) {
    threads.push_back(spawn([&] {
      for (int k = 0; k < 5000; ++k) {
        std::lock_guard lock(mutex);
        ++counter;
        if (k % 64 == 0) this_thread::yield();
      }
    }));
  }
  for (Thread& t : threads) t.join();
  EXPECT_EQ(counter, 16 * 5000);
}

TEST(Sync, ForeignKernelThreadWakesWeftThreads) {
  Scheduler scheduler(two_vps());
  constexpr int kThreads = 64;
  Event go;
  Mutex mutex;
  ConditionVariable cv;
  int generation = 0;
  std::atomic<int> woken{0};
  std::vector<Thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.push_back(spawn([&] {
      go.wait();
      std::unique_lock lock(mutex);
      cv.wait(lock, [&] { return generation == 1; });
      woken.fetch_add(1);
    }));
  }
  // A plain std::thread, unknown to weft, sets the event and notifies the condition.
  std::thread foreign([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    go.set();
    {
      std::lock_guard lock(mutex);
      generation = 1;
    }
    cv.notify_all();
  });
  for (Thread& t : threads) t.join();
  foreign.join();
  EXPECT_EQ(woken.load(), kThreads);
}

TEST(Sync, ForeignKernelThreadWaitsOnWeftPrimitives) {
  Scheduler scheduler(two_vps());
  Event ready(Event::Mode::automatic);
  Barrier barrier(3);
  std::atomic<int> passed{0};
  Thread a = spawn([&] {
    ready.set();
    barrier.arrive_and_wait();
    passed.fetch_add(1);
  });
  Thread b = spawn([&] {
    barrier.arrive_and_wait();
    passed.fetch_add(1);
  });
  ready.wait();
  barrier.arrive_and_wait();
  a.join();
  b.join();
  EXPECT_EQ(passed.load(), 2);
}

TEST(Sync, TimedWaitsTimeOutAndNotifiedOnesDoNot) {
  Scheduler scheduler(two_vps());
  auto check = [] {
    Event never;
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(never.wait_for(std::chrono::milliseconds(3)));
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(3));
    Mutex mutex;
    ConditionVariable cv;
    std::unique_lock lock(mutex);
    EXPECT_FALSE(cv.wait_for(lock, std::chrono::milliseconds(2)));
    Event soon;
    Thread setter = spawn([&] { soon.set(); });
    EXPECT_TRUE(soon.wait_for(std::chrono::seconds(30)));
    setter.join();
  };
  spawn(check).join();
  check();  // the same from a kernel thread outside weft
}

TEST(Sync, NotifyRacingWithTimeoutLosesNothing) {
  Scheduler scheduler(two_vps());
  constexpr int kTokens = 2000;
  Event token(Event::Mode::automatic);
  Event ack(Event::Mode::automatic);
  std::atomic<int> received{0};
  std::atomic<bool> stop{false};
  std::vector<Thread> waiters;
  for (int i = 0; i < 4; ++i) {
    // Short, varied timeouts so that wake-ups keep racing with expiries.
    waiters.push_back(spawn([&, i] {
      for (int k = 0; !stop.load(); ++k) {
        if (token.wait_for(std::chrono::microseconds(1 + (k * 7 + i) % 40))) {
          received.fetch_add(1);
          ack.set();
        }
      }
    }));
  }
  // Each token must reach exactly one waiter: a wake-up lost to a racing timeout would leave
  // the token neither set nor received, and this loop would hang (the test then times out).
  Thread setter = spawn(pinned(1), [&] {
    for (int k = 0; k < kTokens; ++k) {
      token.set();
      ack.wait();
    }
    stop.store(true);
  });
  setter.join();
  for (Thread& t : waiters) t.join();
  EXPECT_EQ(received.load(), kTokens);
  EXPECT_FALSE(token.is_set());
}

TEST(Sync, BadBarrierCountIsRefused) {
  EXPECT_THROW(Barrier(0), Error);
}

}  // namespace
}  // namespace weft
