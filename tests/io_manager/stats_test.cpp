// The I/O manager's statistics: counted as events are detected, published for other processes
// (weft-info io) while the scheduler runs, gone once it shut down.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "io_test_util.h"
#include "weft/io.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

TEST(IoStats, CountedAndPublishedWhileTheSchedulerRuns) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  {
    Scheduler scheduler(testing::io_config("block", 1));
    Thread reader = spawn([&] {
      char byte;
      for (int i = 0; i < 10; ++i) EXPECT_EQ(::read(fds[0], &byte, 1), 1);
    });
    Thread writer = spawn([&] {
      for (int i = 0; i < 10; ++i) {
        for (int y = 0; y < 5; ++y) this_thread::yield();
        EXPECT_EQ(::write(fds[1], "x", 1), 1);
      }
    });
    reader.join();
    writer.join();
    const io::Stats own = io::stats();
    EXPECT_EQ(own.mode, io::Mode::block);
    EXPECT_GT(own.wakeups, 0u);
    EXPECT_EQ(own.wakeups, own.block_detections);
    EXPECT_EQ(own.polls, 0u);
    const std::optional<io::Stats> published = io::stats_of_process(::getpid());
    ASSERT_TRUE(published.has_value());
    EXPECT_EQ(published->wakeups, own.wakeups);
    EXPECT_EQ(published->mode, io::Mode::block);
    const std::vector<int> pids = io::processes_with_stats();
    EXPECT_NE(std::find(pids.begin(), pids.end(), ::getpid()), pids.end());
  }
  EXPECT_FALSE(io::stats_of_process(::getpid()).has_value());
  EXPECT_FALSE(io::stats_of_process(-1).has_value());
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace weft
