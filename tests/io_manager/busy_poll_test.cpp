// auto mode at busy cores' scheduling points (docs/io_manager.md, The decision): a wait older than
// io.idle_poll_us goes to the spare kernel thread, and such an armed wait is still polled there
// once per io.timer_poll_us, since the woken spare thread may wait for a core until the kernel's
// next tick while every core computes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <thread>

#include "io_test_util.h"
#include "weft/io.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

// One core: a reader waits on a pipe nobody writes until the end, while a thread computes with
// scheduling points. The wait is armed by the first rounds (io.idle_poll_us 0); polls counted
// after that are polls of the armed wait, the only thing pending.
TEST(IoBusyPoll, AnArmedWaitIsPolledAtBusyCoresSchedulingPoints) {
  testing::Descriptors descriptors;
  int fds[2];
  descriptors.pipe(fds);
  Scheduler scheduler(
      testing::io_config("auto", 1, {{"io.idle_poll_us", "0"}, {"io.timer_poll_us", "10"}}));
  std::atomic<bool> read_done{false};
  std::atomic<bool> polled{false};
  std::atomic<bool> stop{false};
  Thread reader = spawn([&] {
    char byte = 0;
    if (::read(fds[0], &byte, 1) == 1) read_done.store(true);
  });
  Thread computer = spawn([&] {
    while (io::stats().handoffs == 0 && !stop.load()) this_thread::yield();
    const std::uint64_t armed_at = io::stats().polls;
    while (io::stats().polls == armed_at && !stop.load()) this_thread::yield();
    polled.store(io::stats().polls > armed_at);
  });
  const bool finished = testing::finishes([&] { return polled.load(); }, [&] { stop.store(true); });
  EXPECT_TRUE(finished) << "no busy core's round polled the armed wait";
  (void)!::write(fds[1], "x", 1);
  computer.join();
  reader.join();
  EXPECT_TRUE(read_done.load());
}

}  // namespace
}  // namespace weft
