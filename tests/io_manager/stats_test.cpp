// The I/O manager's statistics: counted as events are detected, published for other processes
// (weft-info io) while the scheduler runs, gone once it shut down.
#include "stats.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <new>
#include <string>

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

// A file left by a process killed before its shutdown names a pid that a later process may get:
// that process is not taken for a weft process publishing statistics.
TEST(IoStats, AFileLeftByADeadProcessIsNotALaterProcessOfTheSamePid) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::pause();
    ::_exit(0);
  }
  // The file as the dead process left it: valid, but written by another process than `child`.
  const std::string name = "/weft-io." + std::to_string(child);
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, sizeof(io::detail::Counters)), 0);
  void* memory =
      ::mmap(nullptr, sizeof(io::detail::Counters), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  ASSERT_NE(memory, MAP_FAILED);
  auto* counters = new (memory) io::detail::Counters;
  counters->start_ticks.store(1);
  counters->magic.store(io::detail::Counters::kMagic);
  EXPECT_FALSE(io::stats_of_process(child).has_value());
  const std::vector<int> pids = io::processes_with_stats();
  EXPECT_EQ(std::find(pids.begin(), pids.end(), child), pids.end());
  ::munmap(memory, sizeof(io::detail::Counters));
  ::shm_unlink(name.c_str());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

}  // namespace
}  // namespace weft
