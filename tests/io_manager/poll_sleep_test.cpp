// auto mode's idle cores sleep in poll(2) on the polled waits (docs/io_manager.md, The
// decision): the event wakes the sleeping core, which completes the wait without handing it to
// the spare kernel thread; a wait registered meanwhile joins the sleeper's set; a sleeper woken
// for other work hands the waits to blocking before it runs that work.
//
// The writers wait for io::stats().poll_sleeps to grow before they write, so that the event
// comes while a core sleeps in poll(2) whatever the machine's load; without the poll-sleep the
// count never grows and the test fails on its watchdog.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "io_test_util.h"
#include "weft/config.h"
#include "weft/io.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

// auto mode with io.idle_poll_us at its maximum. A busy core's scheduling point hands a wait
// older than that to blocking (docs/io_manager.md); with the default 500 us, a kernel thread of
// the test preempted that long between a read's registration and its park, as on a loaded CI
// machine, sent the wait to the spare thread, and no core ever slept on it again.
Config poll_sleep_config(int vps, std::vector<std::pair<std::string, std::string>> more = {}) {
  more.emplace_back("io.idle_poll_us", "1000000");
  return testing::io_config("auto", vps, std::move(more));
}

// Waits on this kernel thread until a core has begun `count` sleeps in poll(2); false when
// `stop` is set, when a wait went to blocking instead (no core sleeps on it any more), or after a
// limit that only bounds a hang.
bool poll_sleeps_reach(std::uint64_t count, const std::atomic<bool>& stop) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (;;) {
    const io::Stats stats = io::stats();
    if (stats.poll_sleeps >= count) return true;
    if (stats.handoffs != 0 || stop.load() || std::chrono::steady_clock::now() > give_up) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// A weft thread reads one byte from the pipe `fds`, which a kernel thread outside weft writes
// once a core sleeps in poll(2). Returns whether the read finished before the watchdog (which
// writes a byte itself, so that nothing hangs).
bool read_written_during_a_poll_sleep(const int fds[2]) {
  std::atomic<bool> read_done{false};
  std::atomic<bool> stop{false};
  Thread reader = spawn([&] {
    char byte = 0;
    if (::read(fds[0], &byte, 1) == 1) read_done.store(true);
  });
  std::thread writer([&] {
    // Written whatever happened: a wait handed to blocking still ends (reported below).
    poll_sleeps_reach(1, stop);
    if (!stop.load()) (void)!::write(fds[1], "x", 1);
  });
  const bool finished = testing::finishes([&] { return read_done.load(); },
                                          [&] {
                                            stop.store(true);
                                            (void)!::write(fds[1], "x", 1);
                                          });
  writer.join();
  reader.join();
  EXPECT_EQ(io::stats().handoffs, 0u) << "the wait went to blocking before a core slept on it";
  return finished;
}

TEST(IoPollSleep, AnIdleCoreSleepsInPollAndTheEventEndsTheWait) {
  testing::Descriptors descriptors;
  int fds[2];
  descriptors.pipe(fds);
  Scheduler scheduler(poll_sleep_config(2));
  std::atomic<int> reads{0};
  std::atomic<bool> stop{false};
  Thread reader = spawn([&] {
    char byte = 0;
    for (int i = 0; i < 3; ++i) {
      if (::read(fds[0], &byte, 1) != 1) return;
      reads.fetch_add(1);
    }
  });
  std::thread writer([&] {
    for (int i = 0; i < 3; ++i) {
      // The i-th read's wait sleeps in poll(2) after the i sleeps of the reads before.
      // Written whatever happened: a wait handed to blocking still ends (reported below).
      poll_sleeps_reach(static_cast<std::uint64_t>(i) + 1, stop);
      if (stop.load() || ::write(fds[1], "x", 1) != 1) return;
      while (reads.load() <= i && !stop.load()) std::this_thread::yield();
    }
  });
  const bool finished = testing::finishes([&] { return reads.load() == 3; },
                                          [&] {
                                            stop.store(true);
                                            (void)!::write(fds[1], "xxx", 3);
                                          });
  EXPECT_TRUE(finished) << "a core sleeping in poll(2) missed the event";
  writer.join();
  reader.join();
  const io::Stats stats = io::stats();
  EXPECT_GE(stats.poll_sleeps, 3u);
  // Found by the sleeping core's polling, never handed to the spare kernel thread.
  EXPECT_EQ(stats.handoffs, 0u);
  EXPECT_EQ(stats.block_detections, 0u);
  EXPECT_GE(stats.poll_detections, 3u);
}

// The sleeping core completes the wait from its poll(2)'s own answer: a polling round after it
// would ask the kernel again, one system call more per event than a blocking reader makes.
TEST(IoPollSleep, TheSleepingCoreEndsTheWaitFromPollsAnswer) {
  testing::Descriptors descriptors;
  int fds[2];
  descriptors.pipe(fds);
  Scheduler scheduler(poll_sleep_config(1));
  EXPECT_TRUE(read_written_during_a_poll_sleep(fds))
      << "a core sleeping in poll(2) missed the event";
  // At least once: a signal that interrupts the poll(2) leaves the event to the idle loop.
  EXPECT_GE(io::stats().poll_sleep_detections, 1u);
}

// A wait is not polled in its first half io.switch_poll_us: its thread's read has just checked
// the descriptor. The idle core still watches it at once, sleeping in poll(2) on it. With a
// period of 1 s no polling round may check the wait: the poll sleep alone ends it.
TEST(IoPollSleep, AFreshWaitIsLeftToThePollSleep) {
  testing::Descriptors descriptors;
  int fds[2];
  descriptors.pipe(fds);
  Scheduler scheduler(poll_sleep_config(1, {{"io.switch_poll_us", "1000000"}}));
  EXPECT_TRUE(read_written_during_a_poll_sleep(fds)) << "a fresh wait was not watched";
  EXPECT_EQ(io::stats().polls, 0u) << "a polling round checked a wait its thread had just tried";
}

// Core 1 computes (no scheduling point, so neither its idle loop nor its switch hook touches the
// waits) while core 0, idle, sleeps in poll(2) on the first wait; then the second wait is
// registered from core 1. Were core 1 the sleeper, starting the second reader would wake it for
// work and hand the first wait to blocking: the second wait would then join no sleeper's set.
TEST(IoPollSleep, AWaitRegisteredWhileACoreSleepsInPollJoinsItsSet) {
  testing::Descriptors descriptors;
  int first[2];
  int second[2];
  descriptors.pipe(first);
  descriptors.pipe(second);
  Scheduler scheduler(poll_sleep_config(2));
  std::atomic<bool> first_done{false};
  std::atomic<bool> second_done{false};
  std::atomic<bool> computed{false};
  std::atomic<bool> stop{false};
  ThreadAttr on_core0;
  on_core0.placement = Placement::pinned(0);
  ThreadAttr on_core1;
  on_core1.placement = Placement::pinned(1);
  Thread computer = spawn(on_core1, [&] {
    while (!computed.load() && !stop.load()) {
    }
  });
  Thread a = spawn(on_core0, [&] {
    char byte = 0;
    if (::read(first[0], &byte, 1) == 1) first_done.store(true);
  });
  if (!poll_sleeps_reach(1, stop)) {
    ADD_FAILURE() << "no core slept in poll(2) on the wait";
    computed.store(true);
    (void)!::write(first[1], "x", 1);
    return;
  }
  // Core 0 sleeps in poll(2) on the first pipe; the second wait must wake it to be added.
  const std::uint64_t before = io::stats().poll_sleeps;
  Thread b = spawn(on_core1, [&] {
    char byte = 0;
    if (::read(second[0], &byte, 1) == 1) second_done.store(true);
  });
  computed.store(true);
  std::thread writer([&] {
    // A core sleeps again once it has the second wait in its set. Written whatever happened: a
    // wait handed to blocking still ends (reported below).
    poll_sleeps_reach(before + 1, stop);
    if (stop.load() || ::write(second[1], "x", 1) != 1) return;
    while (!second_done.load() && !stop.load()) std::this_thread::yield();
    (void)!::write(first[1], "x", 1);
  });
  const bool finished = testing::finishes([&] { return first_done.load() && second_done.load(); },
                                          [&] {
                                            stop.store(true);
                                            (void)!::write(first[1], "x", 1);
                                            (void)!::write(second[1], "x", 1);
                                          });
  EXPECT_TRUE(finished) << "a wait registered while a core slept in poll(2) was not watched";
  writer.join();
  computer.join();
  a.join();
  b.join();
  // Nothing woke a sleeper for work: both events were found by polling.
  EXPECT_EQ(io::stats().handoffs, 0u) << "a wait went to blocking before a core slept on it";
}

TEST(IoPollSleep, ASleeperWokenForWorkHandsTheWaitsToBlocking) {
  testing::Descriptors descriptors;
  int fds[2];
  descriptors.pipe(fds);
  // The spare thread alone may then end the wait: the computing core polls armed waits only once
  // per io.timer_poll_us, here 10 s.
  Scheduler scheduler(poll_sleep_config(1, {{"io.timer_poll_us", "10000000"}}));
  std::atomic<bool> read_done{false};
  std::atomic<bool> stop{false};
  Thread reader = spawn([&] {
    char byte = 0;
    if (::read(fds[0], &byte, 1) == 1) read_done.store(true);
  });
  if (!poll_sleeps_reach(1, stop)) {
    ADD_FAILURE() << "no core slept in poll(2) on the wait";
    (void)!::write(fds[1], "x", 1);
    return;
  }
  // The one core, asleep in poll(2) on the read, is woken for a thread that computes without a
  // scheduling point until the wait has gone to the spare kernel thread: no polling core is left.
  Thread computer = spawn([&] {
    while (io::stats().handoffs == 0 && !stop.load()) {
    }
    while (!read_done.load() && !stop.load()) this_thread::yield();
  });
  std::thread writer([&] {
    while (io::stats().handoffs == 0 && !stop.load()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    (void)!::write(fds[1], "x", 1);
  });
  const bool finished = testing::finishes([&] { return read_done.load(); },
                                          [&] {
                                            stop.store(true);
                                            (void)!::write(fds[1], "x", 1);
                                          });
  EXPECT_TRUE(finished) << "the wait was not handed to blocking when its core went to work";
  writer.join();
  computer.join();
  reader.join();
  EXPECT_GE(io::stats().block_detections, 1u);
}

}  // namespace
}  // namespace weft
