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

// Writes a valid statistics file for `pid`, as a publisher that started at `ticks` leaves it.
void leave_file(int pid, std::uint64_t ticks) {
  const std::string name = "/weft-io." + std::to_string(pid);
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, sizeof(io::detail::Counters)), 0);
  void* memory =
      ::mmap(nullptr, sizeof(io::detail::Counters), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  ASSERT_NE(memory, MAP_FAILED);
  auto* counters = new (memory) io::detail::Counters;
  counters->start_ticks.store(ticks);
  counters->magic.store(io::detail::Counters::kMagic);
  ::munmap(memory, sizeof(io::detail::Counters));
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
  leave_file(child, 1);
  EXPECT_FALSE(io::stats_of_process(child).has_value());
  const std::vector<int> pids = io::processes_with_stats();
  EXPECT_EQ(std::find(pids.begin(), pids.end(), child), pids.end());
  ::shm_unlink(("/weft-io." + std::to_string(child)).c_str());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
}

bool file_exists(int pid) {
  return ::access(("/dev/shm/weft-io." + std::to_string(pid)).c_str(), F_OK) == 0;
}

// The files of processes killed before their shutdown are removed by the next process that
// starts a scheduler; those of running processes stay.
TEST(IoStats, TheNextSchedulerRemovesTheFilesOfDeadProcesses) {
  const pid_t dead = ::fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(dead, nullptr, 0), dead);
  const pid_t reused = ::fork();
  ASSERT_GE(reused, 0);
  if (reused == 0) {
    ::pause();
    ::_exit(0);
  }
  const pid_t alive = ::fork();
  ASSERT_GE(alive, 0);
  if (alive == 0) {
    ::pause();
    ::_exit(0);
  }
  leave_file(dead, 1);
  // A pid now held by a later process than the file's publisher (which started at tick 1).
  leave_file(reused, 1);
  // A running process whose file is still being made: no magic word yet.
  const std::string young = "/weft-io." + std::to_string(alive);
  const int fd = ::shm_open(young.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ::close(fd);
  // Read before its publisher made it full size, the file is not a running weft process's.
  EXPECT_FALSE(io::stats_of_process(alive).has_value());
  {
    Scheduler scheduler(testing::io_config("auto", 1));
    EXPECT_FALSE(file_exists(dead));
    EXPECT_FALSE(file_exists(reused));
    EXPECT_TRUE(file_exists(alive));
    EXPECT_TRUE(file_exists(::getpid()));
  }
  ::shm_unlink(young.c_str());
  ::shm_unlink(("/weft-io." + std::to_string(dead)).c_str());
  ::shm_unlink(("/weft-io." + std::to_string(reused)).c_str());
  for (pid_t child : {reused, alive}) {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
  }
}

}  // namespace
}  // namespace weft
