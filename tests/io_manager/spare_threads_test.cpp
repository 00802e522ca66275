// Blocking calls that cannot become waits on the I/O manager (file locks, waits for child
// processes, a read of a regular file that must go to the disk, anything wrapped in
// weft::io::blocking_call): a spare kernel thread makes them while the caller is parked, so that
// on a single core the thread that unblocks the call still runs.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "io_test_util.h"
#include "weft/io.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

using testing::Descriptors;
using testing::finishes;
using testing::io_config;

// A file of the test, removed at the end.
class TempFile {
 public:
  TempFile() {
    std::string pattern = (std::filesystem::temp_directory_path() / "weft-io-XXXXXX").string();
    const int fd = ::mkstemp(pattern.data());
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    ::close(fd);
    path_ = pattern;
  }
  ~TempFile() { ::unlink(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const char* path() const { return path_.c_str(); }

 private:
  std::string path_;
};

// Runs `blocked` (a call that blocks until `release` runs) in one user thread and `release` in
// another of the same single core, after yielding while the first is inside its call. If the call
// held the core, `release` could never run: the watchdog then calls `rescue` and the test fails.
void expect_core_runs_others(const std::function<void()>& blocked,
                             const std::function<void()>& release,
                             const std::function<void()>& rescue) {
  std::atomic<bool> inside{false};
  std::atomic<bool> done{false};
  std::atomic<int> yields_while_inside{0};
  Thread caller = spawn([&] {
    inside.store(true);
    blocked();
    inside.store(false);
    done.store(true);
  });
  Thread releaser = spawn([&] {
    // A caller that held the core may be done before this thread first runs.
    while (!inside.load() && !done.load()) this_thread::yield();
    for (int i = 0; i < 100; ++i) {
      if (inside.load()) yields_while_inside.fetch_add(1);
      this_thread::yield();
    }
    release();
  });
  const bool finished = finishes([&] { return done.load(); }, rescue);
  caller.join();
  releaser.join();
  EXPECT_TRUE(finished) << "the blocking call held the only core";
  EXPECT_GT(yields_while_inside.load(), 0);
}

class SpareThreads : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(Modes, SpareThreads, ::testing::ValuesIn(testing::io_modes()),
                         [](const auto& info) { return info.param; });

TEST_P(SpareThreads, FlockLeavesTheCoreToTheThreadThatUnlocks) {
  TempFile file;
  Descriptors descriptors;
  const int holder = descriptors.adopt(::open(file.path(), O_RDWR | O_CLOEXEC));
  const int other = descriptors.adopt(::open(file.path(), O_RDWR | O_CLOEXEC));
  ASSERT_GE(holder, 0);
  ASSERT_GE(other, 0);
  ASSERT_EQ(::flock(holder, LOCK_EX), 0);
  Scheduler scheduler(io_config(GetParam(), 1));
  int result = -1;
  expect_core_runs_others([&] { result = ::flock(other, LOCK_EX); },
                          [&] { EXPECT_EQ(::flock(holder, LOCK_UN), 0); },
                          [&] { ::flock(holder, LOCK_UN); });
  EXPECT_EQ(result, 0);
  EXPECT_GE(io::stats().spare_calls, 1u);
  // A lock that is free is taken at once, on the caller's core.
  Thread again = spawn([&] {
    EXPECT_EQ(::flock(other, LOCK_UN), 0);
    EXPECT_EQ(::flock(holder, LOCK_EX | LOCK_NB), 0);
    errno = 0;
    EXPECT_EQ(::flock(other, LOCK_EX | LOCK_NB), -1);
    EXPECT_EQ(errno, EWOULDBLOCK);
  });
  again.join();
}

TEST_P(SpareThreads, OpenFileDescriptionLockWaitsOnASpareThread) {
  TempFile file;
  Descriptors descriptors;
  const int holder = descriptors.adopt(::open(file.path(), O_RDWR | O_CLOEXEC));
  const int other = descriptors.adopt(::open(file.path(), O_RDWR | O_CLOEXEC));
  ASSERT_GE(holder, 0);
  ASSERT_GE(other, 0);
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  ASSERT_EQ(::fcntl(holder, F_OFD_SETLK, &lock), 0);
  Scheduler scheduler(io_config(GetParam(), 1));
  auto unlock = [&] {
    struct flock release {};
    release.l_type = F_UNLCK;
    release.l_whence = SEEK_SET;
    return ::fcntl(holder, F_OFD_SETLK, &release);
  };
  int result = -1;
  expect_core_runs_others(
      [&] {
        struct flock wanted {};
        wanted.l_type = F_WRLCK;
        wanted.l_whence = SEEK_SET;
        result = ::fcntl(other, F_OFD_SETLKW, &wanted);
      },
      [&] { EXPECT_EQ(unlock(), 0); }, [&] { unlock(); });
  EXPECT_EQ(result, 0);
  EXPECT_GE(io::stats().spare_calls, 1u);
}

// A child process (forked before any thread exists) that exits with `code` once it reads a byte
// from its pipe, holding a lockf lock on `lock_fd` (when >= 0) until then.
struct Child {
  pid_t pid = -1;
  int release_fd = -1;
};

Child start_child(Descriptors& descriptors, int code, int lock_fd) {
  int fds[2];
  descriptors.pipe(fds);
  int ready[2];
  descriptors.pipe(ready);
  Child child;
  child.release_fd = fds[1];
  child.pid = ::fork();
  if (child.pid == 0) {
    if (lock_fd >= 0 && ::lockf(lock_fd, F_LOCK, 0) != 0) ::_exit(90);
    char byte = 0;
    if (::syscall(SYS_write, ready[1], &byte, 1) != 1) ::_exit(91);
    if (::syscall(SYS_read, fds[0], &byte, 1) != 1) ::_exit(92);
    ::_exit(code);
  }
  char byte = 0;
  // The main thread is no user thread: this is the C library's read.
  if (child.pid > 0 && ::read(ready[0], &byte, 1) != 1) child.pid = -1;
  return child;
}

TEST_P(SpareThreads, WaitpidLeavesTheCoreToTheThreadThatEndsTheChild) {
  Descriptors descriptors;
  const Child child = start_child(descriptors, 7, -1);
  ASSERT_GT(child.pid, 0);
  Scheduler scheduler(io_config(GetParam(), 1));
  int status = 0;
  pid_t result = -1;
  expect_core_runs_others([&] { result = ::waitpid(child.pid, &status, 0); },
                          [&] { EXPECT_EQ(::write(child.release_fd, "x", 1), 1); },
                          [&] { ::kill(child.pid, SIGKILL); });
  EXPECT_EQ(result, child.pid);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
  EXPECT_GE(io::stats().spare_calls, 1u);
  // No child left: the answer comes at once, with the C library's error.
  Thread again = spawn([] {
    errno = 0;
    EXPECT_EQ(::waitpid(-1, nullptr, 0), -1);
    EXPECT_EQ(errno, ECHILD);
  });
  again.join();
}

TEST_P(SpareThreads, WaitidAndWaitToo) {
  Descriptors descriptors;
  const Child first = start_child(descriptors, 3, -1);
  const Child second = start_child(descriptors, 4, -1);
  ASSERT_GT(first.pid, 0);
  ASSERT_GT(second.pid, 0);
  Scheduler scheduler(io_config(GetParam(), 1));
  siginfo_t info{};
  int result = -1;
  expect_core_runs_others(
      [&] { result = ::waitid(P_PID, static_cast<id_t>(first.pid), &info, WEXITED); },
      [&] { EXPECT_EQ(::write(first.release_fd, "x", 1), 1); },
      [&] { ::kill(first.pid, SIGKILL); });
  EXPECT_EQ(result, 0);
  EXPECT_EQ(info.si_pid, first.pid);
  EXPECT_EQ(info.si_status, 3);
  int status = 0;
  pid_t waited = -1;
  expect_core_runs_others([&] { waited = ::wait(&status); },
                          [&] { EXPECT_EQ(::write(second.release_fd, "x", 1), 1); },
                          [&] { ::kill(second.pid, SIGKILL); });
  EXPECT_EQ(waited, second.pid);
  EXPECT_EQ(WEXITSTATUS(status), 4);
}

// lockf takes a POSIX record lock, which only another process can hold against us.
TEST_P(SpareThreads, LockfWaitsForTheLockOfAnotherProcess) {
  TempFile file;
  Descriptors descriptors;
  const int fd = descriptors.adopt(::open(file.path(), O_RDWR | O_CLOEXEC));
  ASSERT_GE(fd, 0);
  const Child holder = start_child(descriptors, 0, fd);
  ASSERT_GT(holder.pid, 0);
  Scheduler scheduler(io_config(GetParam(), 1));
  int result = -1;
  expect_core_runs_others([&] { result = ::lockf(fd, F_LOCK, 0); },
                          [&] { EXPECT_EQ(::write(holder.release_fd, "x", 1), 1); },
                          [&] { ::kill(holder.pid, SIGKILL); });
  EXPECT_EQ(result, 0);
  ::waitpid(holder.pid, nullptr, 0);
}

TEST_P(SpareThreads, BlockingCallRunsAnyCallWithItsErrnoAndExceptions) {
  Descriptors descriptors;
  int fds[2];
  descriptors.pipe(fds);
  Scheduler scheduler(io_config(GetParam(), 1));
  char got = 0;
  long result = -1;
  // A raw system call: no interposition sees it, only blocking_call keeps the core free.
  expect_core_runs_others(
      [&] { result = io::blocking_call([&] { return ::syscall(SYS_read, fds[0], &got, 1); }); },
      [&] { EXPECT_EQ(::write(fds[1], "b", 1), 1); },
      [&] { [[maybe_unused]] auto n = ::write(fds[1], "!", 1); });
  EXPECT_EQ(result, 1);
  EXPECT_EQ(got, 'b');
  Thread checks = spawn([&] {
    errno = 0;
    EXPECT_EQ(io::blocking_call([] { return ::syscall(SYS_read, -1, nullptr, 0); }), -1);
    EXPECT_EQ(errno, EBADF);
    EXPECT_THROW(io::blocking_call([]() -> int { throw std::logic_error("inside"); }),
                 std::logic_error);
    int calls = 0;
    io::blocking_call([&] { ++calls; });
    EXPECT_EQ(calls, 1);
  });
  checks.join();
}

TEST(SpareThreadsLimit, ACallFindingEverySpareThreadBusyRunsOnItsCore) {
  Descriptors descriptors;
  int fds[2];
  descriptors.pipe(fds);
  Scheduler scheduler(io_config("auto", 2, {{"io.spare_threads", "0"}}));
  Thread reader = spawn([&] {
    char byte = 0;
    EXPECT_EQ(io::blocking_call([&] { return ::syscall(SYS_read, fds[0], &byte, 1); }), 1);
  });
  // The main thread is no user thread: the write goes straight to the C library.
  EXPECT_EQ(::write(fds[1], "x", 1), 1);
  reader.join();
  const io::Stats stats = io::stats();
  EXPECT_EQ(stats.spare_calls, 0u);
  EXPECT_EQ(stats.spare_full, 1u);
}

TEST(SpareThreadsOutsideWeft, BlockingCallRunsOnTheCallingThread) {
  int calls = 0;
  io::blocking_call([&] { ++calls; });
  Scheduler scheduler(io_config("auto", 1));
  io::blocking_call([&] { ++calls; });
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(io::stats().spare_calls, 0u);
}

// Drops the file's pages from the page cache; true when the page at `offset` is really out.
bool drop_from_page_cache(int fd, off_t offset) {
  if (::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) return false;
  void* map = ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fd, offset);
  if (map == MAP_FAILED) return false;
  unsigned char resident = 1;
  const bool known = ::mincore(map, 4096, &resident) == 0;
  ::munmap(map, 4096);
  return known && (resident & 1) == 0;
}

// A read of a regular file whose pages are not in the page cache would block on the disk: the
// non-blocking try says so and starts the disk read in the kernel. Either a spare thread makes
// the read (read, then pread) or, where the disk answered before the second try (a fast device,
// a loaded machine), that try finds the data: both keep the core free, and a read that blocked
// it counts as neither.
TEST(SpareThreadsFiles, UncachedRegularFileReadNeverBlocksItsCore) {
  TempFile file;
  struct statfs system {};
  ASSERT_EQ(::statfs(file.path(), &system), 0);
  if (system.f_type == 0x01021994 /* tmpfs */) GTEST_SKIP() << "tmpfs has no disk to wait for";
  Descriptors descriptors;
  const int fd = descriptors.adopt(::open(file.path(), O_RDWR | O_CLOEXEC));
  ASSERT_GE(fd, 0);
  constexpr off_t kFar = 512 * 1024;
  std::vector<char> data(1 << 20, 'f');
  std::fill(data.begin() + kFar, data.begin() + kFar + 4096, 'p');
  ASSERT_EQ(::write(fd, data.data(), data.size()), static_cast<ssize_t>(data.size()));
  ASSERT_EQ(::fsync(fd), 0);
  ASSERT_EQ(::lseek(fd, 0, SEEK_SET), 0);
  Scheduler scheduler(io_config("auto", 1));
  enum class Way { spare_thread, second_try };
  // Reads `offset` with read (at the file's start) or pread from a dropped cache, up to 5 times:
  // another reader of the disk may bring the page back between the drop and the read, and then
  // the first try finds it. Returns how the first read that found it gone was made, nullopt
  // when none did (or the page cannot be dropped here).
  auto uncached_read = [&](off_t offset, char expected) -> std::optional<Way> {
    for (int attempt = 0; attempt < 5; ++attempt) {
      const io::Stats before = io::stats();
      if (!drop_from_page_cache(fd, offset)) return std::nullopt;
      Thread reader = spawn([&] {
        std::vector<char> back(4096, 0);
        if (offset == 0) {
          EXPECT_EQ(::lseek(fd, 0, SEEK_SET), 0);
          EXPECT_EQ(::read(fd, back.data(), back.size()), 4096);
        } else {
          EXPECT_EQ(::pread(fd, back.data(), back.size(), offset), 4096);
        }
        EXPECT_EQ(back, std::vector<char>(4096, expected));
      });
      reader.join();
      const io::Stats after = io::stats();
      const std::uint64_t spare = after.spare_calls - before.spare_calls;
      const std::uint64_t second = after.ready_rereads - before.ready_rereads;
      EXPECT_LE(spare + second, 1u) << "one read: one spare call or one second try at most";
      if (spare == 1) return Way::spare_thread;
      if (second == 1) return Way::second_try;
    }
    return std::nullopt;
  };
  auto name = [](Way way) { return way == Way::spare_thread ? "a spare thread" : "a second try"; };
  if (!drop_from_page_cache(fd, 0)) GTEST_SKIP() << "the file stays in the page cache here";
  const std::optional<Way> read = uncached_read(0, 'f');
  ASSERT_TRUE(read) << "no read of the uncached file went to a spare thread or a second try in "
                       "5 tries: it blocked its core (or the page came back every time)";
  std::printf("read of the uncached file made by %s\n", name(*read));
  const std::optional<Way> positioned = uncached_read(kFar, 'p');
  ASSERT_TRUE(positioned) << "no pread of the uncached file went to a spare thread or a second "
                             "try in 5 tries";
  std::printf("pread of the uncached file made by %s\n", name(*positioned));
}

}  // namespace
}  // namespace weft
