#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <vector>

#include "test_config.h"
#include "weft/preemption.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

// The registered code: only what the linker puts in this section (its bounds are the
// __start_/__stop_ symbols it defines for a section named like a C identifier).
#define PREEMPTIBLE __attribute__((section("weft_preemption_test"), noinline))
extern "C" const char __start_weft_preemption_test[];
extern "C" const char __stop_weft_preemption_test[];

namespace weft {
namespace {

using testing::config_with;

// A busy-wait with no scheduling point, as the LLVM OpenMP tests' `while (flag == 0);`.
PREEMPTIBLE void spin_until_set(const std::atomic<int>& flag) {
  while (flag.load(std::memory_order_relaxed) == 0) {
  }
}

double thread_cpu_ms() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) * 1e-6;
}

// Unregistered: spins for `cpu_ms` of its kernel thread's CPU time, then says whether `flag` was
// set meanwhile.
bool set_while_spinning(const std::atomic<int>& flag, double cpu_ms) {
  const double end = thread_cpu_ms() + cpu_ms;
  while (thread_cpu_ms() < end) {
    if (flag.load(std::memory_order_relaxed) != 0) return true;
  }
  return false;
}

void register_test_code() {
  static const bool registered = [] {
    allow_preemption_in(__start_weft_preemption_test,
                        static_cast<std::size_t>(__stop_weft_preemption_test -
                                                 __start_weft_preemption_test));
    return true;
  }();
  (void)registered;
}

// errno through calls the compiler cannot fold: __errno_location is declared const, and the
// thread may resume on another kernel thread, whose errno is another variable.
[[gnu::noinline]] void set_errno(int value) {
  asm volatile("" ::: "memory");
  errno = value;
}
[[gnu::noinline]] int get_errno() {
  asm volatile("" ::: "memory");
  return errno;
}

std::uint64_t preemptions(const Scheduler& scheduler) {
  std::uint64_t total = 0;
  for (const auto& vp : scheduler.stats()) total += vp.preemptions;
  return total;
}

TEST(Preemption, SpinnerYieldsToTheTeammateItWaitsForOnItsCore) {
  // One core: without preemption the spinner, spawned first, would keep it forever.
  Scheduler scheduler(config_with({{"topology", "synthetic:pack:1 core:1 pu:1"}}));
  register_test_code();
  std::atomic<int> flag{0};
  Thread spinner = spawn([&] { spin_until_set(flag); });
  Thread setter = spawn([&] { flag.store(1, std::memory_order_relaxed); });
  spinner.join();
  setter.join();
  EXPECT_GE(preemptions(scheduler), 1u);
}

TEST(Preemption, ThreeSpinnersAndOneSetterOnTwoCores) {
  // omp_for_nowait's shape: a team of four on two cores, three of them waiting for the fourth.
  Scheduler scheduler(testing::two_vps());
  register_test_code();
  std::atomic<int> flag{0};
  std::vector<Thread> team;
  for (int i = 0; i < 3; ++i) team.push_back(spawn([&] { spin_until_set(flag); }));
  team.push_back(spawn([&] { flag.store(1, std::memory_order_relaxed); }));
  for (Thread& thread : team) thread.join();
  EXPECT_GE(preemptions(scheduler), 1u);
}

TEST(Preemption, CodeNotRegisteredKeepsItsCore) {
  // Ten periods of CPU spinning outside the registered section: the setter, queued behind on the
  // one core, must not run meanwhile.
  Scheduler scheduler(config_with(
      {{"topology", "synthetic:pack:1 core:1 pu:1"}, {"scheduler.preempt_ms", "5"}}));
  register_test_code();
  std::atomic<int> flag{0};
  bool set_early = true;
  Thread spinner = spawn([&] { set_early = set_while_spinning(flag, 50); });
  Thread setter = spawn([&] { flag.store(1, std::memory_order_relaxed); });
  spinner.join();
  setter.join();
  EXPECT_FALSE(set_early);
  EXPECT_EQ(preemptions(scheduler), 0u);
}

TEST(Preemption, AloneOnItsCoreItIsLeftRunning) {
  Scheduler scheduler(config_with(
      {{"topology", "synthetic:pack:1 core:1 pu:1"}, {"scheduler.preempt_ms", "1"}}));
  register_test_code();
  std::atomic<int> flag{0};
  std::atomic<bool> spinning{false};
  // A kernel thread sets the flag once the spinner has spun for a while: nothing waits on the
  // spinner's core, so no tick switches it out.
  Thread spinner = spawn([&] {
    spinning.store(true);
    spin_until_set(flag);
  });
  while (!spinning.load()) {
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
  while (std::chrono::steady_clock::now() < until) {
  }
  flag.store(1, std::memory_order_relaxed);
  spinner.join();
  EXPECT_EQ(preemptions(scheduler), 0u);
}

TEST(Preemption, ErrnoFollowsThePreemptedThread) {
  Scheduler scheduler(testing::two_vps());
  register_test_code();
  std::atomic<int> flag{0};
  std::atomic<int> started{0};
  std::vector<int> seen(4, 0);
  std::vector<Thread> team;
  // Each spinner sets its own errno, spins until preempted and resumed (maybe elsewhere), and
  // must find its value again; the others' set different values meanwhile.
  for (int i = 0; i < 4; ++i) {
    team.push_back(spawn([&, i] {
      set_errno(1000 + i);
      started.fetch_add(1);
      spin_until_set(flag);
      seen[static_cast<std::size_t>(i)] = get_errno();
    }));
  }
  team.push_back(spawn([&] {
    while (started.load() < 4) this_thread::yield();
    flag.store(1, std::memory_order_relaxed);
  }));
  for (Thread& thread : team) thread.join();
  for (int i = 0; i < 4; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)], 1000 + i);
  EXPECT_GE(preemptions(scheduler), 1u);
}

}  // namespace
}  // namespace weft
