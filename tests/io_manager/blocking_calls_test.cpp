// The blocking system calls libweft interposes: a user thread blocked in one of them leaves its
// core to the others, is woken by the event, and gets the C library's result.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
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
using testing::Listener;
using testing::ReadinessPipes;
using Clock = std::chrono::steady_clock;

class BlockingCalls : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(Modes, BlockingCalls, ::testing::ValuesIn(testing::io_modes()),
                         [](const auto& info) { return info.param; });

// One core: if read() held the kernel thread, the writer (the only other thread) could never run.
TEST_P(BlockingCalls, ReadOnAPipeLeavesTheCoreToAnotherThread) {
  Descriptors descriptors;
  int fds[2];
  descriptors.pipe(fds);
  Scheduler scheduler(io_config(GetParam(), 1));
  std::atomic<bool> done{false};
  std::atomic<int> yields_while_reading{0};
  std::atomic<bool> reading{false};
  std::atomic<bool> started{false};
  char got = 0;
  ssize_t result = 0;
  Thread reader = spawn([&] {
    started.store(true);
    reading.store(true);
    result = ::read(fds[0], &got, 1);
    reading.store(false);
    done.store(true);
  });
  Thread writer = spawn([&] {
    while (!started.load()) this_thread::yield();
    // The reader is inside read(): these yields only run if it left the core.
    for (int i = 0; i < 100; ++i) {
      if (reading.load()) yields_while_reading.fetch_add(1);
      this_thread::yield();
    }
    const char byte = 'x';
    EXPECT_EQ(::write(fds[1], &byte, 1), 1);
  });
  const bool finished = finishes([&] { return done.load(); },
                                 [&] { [[maybe_unused]] auto n = ::write(fds[1], "!", 1); });
  reader.join();
  writer.join();
  EXPECT_TRUE(finished) << "read() held the only core";
  EXPECT_EQ(result, 1);
  EXPECT_EQ(got, 'x');
  EXPECT_GT(yields_while_reading.load(), 0);
}

// An external process (forked, using system calls only) answers 8-byte messages over a socket
// pair; the reader, a user thread, is woken by each answer whatever the mode, while another user
// thread of its core keeps computing.
TEST_P(BlockingCalls, ExternalProcessWakesTheReader) {
  Descriptors descriptors;
  int fds[2];
  descriptors.socketpair(fds);
  constexpr int kRounds = 200;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // Only async-signal-safe system calls in the child of a multithreaded process.
    std::uint64_t value = 0;
    for (int i = 0; i < kRounds; ++i) {
      if (::syscall(SYS_read, fds[1], &value, sizeof value) != sizeof value) ::_exit(2);
      // Every fourth answer comes late, so that the reader is surely parked by then.
      if (i % 4 == 0) {
        const timespec pause{0, 2'000'000};
        ::syscall(SYS_nanosleep, &pause, nullptr);
      }
      ++value;
      if (::syscall(SYS_write, fds[1], &value, sizeof value) != sizeof value) ::_exit(3);
    }
    ::_exit(0);
  }
  Scheduler scheduler(io_config(GetParam(), 1));
  std::atomic<bool> done{false};
  std::atomic<long> computed{0};
  bool answers_right = true;
  Thread talker = spawn([&] {
    for (std::uint64_t i = 0; i < kRounds; ++i) {
      const std::uint64_t sent = i * 10;
      if (::send(fds[0], &sent, sizeof sent, 0) != sizeof sent) answers_right = false;
      std::uint64_t answer = 0;
      ssize_t got = i % 2 == 0 ? ::recv(fds[0], &answer, sizeof answer, 0)
                               : ::read(fds[0], &answer, sizeof answer);
      if (got != sizeof answer || answer != sent + 1) answers_right = false;
    }
    done.store(true);
  });
  Thread computer = spawn([&] {
    while (!done.load()) {
      computed.fetch_add(1);
      this_thread::yield();
    }
  });
  const bool finished = finishes([&] { return done.load(); }, [&] { ::kill(child, SIGKILL); });
  talker.join();
  computer.join();
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(finished);
  EXPECT_TRUE(answers_right);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_GT(computed.load(), 0);
  const io::Stats stats = io::stats();
  EXPECT_GT(stats.wakeups, 0u);
  if (GetParam() == "poll") {
    EXPECT_EQ(stats.blocks, 0u);
    EXPECT_EQ(stats.block_detections, 0u);
    EXPECT_GT(stats.poll_detections, 0u);
  }
  if (GetParam() == "block") {
    EXPECT_EQ(stats.poll_detections, 0u);
    EXPECT_GT(stats.block_detections, 0u);
  }
}

// Sleeps of 1 to 161 ms through the C library's names, on one core: they wake in deadline
// order, never early, and another thread runs while they sleep.
TEST_P(BlockingCalls, SleepsWakeInOrderAndNeverEarly) {
  Scheduler scheduler(io_config(GetParam(), 1));
  std::mutex mutex;
  std::vector<Clock::time_point> woken;
  std::atomic<int> early{0};
  std::atomic<int> sleeping{0};
  std::atomic<bool> ran_during_a_sleep{false};
  std::atomic<int> left{0};
  std::vector<Thread> sleepers;
  const std::vector<int> order = {9, 2, 14, 0, 11, 5, 16, 7, 1, 13, 4, 10, 3, 15, 6, 12, 8};
  left.store(static_cast<int>(order.size()));
  for (int i : order) {
    sleepers.push_back(spawn([&, i] {
      // 1..161 ms, 10 ms apart: the sleep reads the clock again after this read, and a kernel
      // time slice (3-4 ms under load, TSan's slowdown on top) lost between the two reads moves
      // its deadline past this one; with 3 ms apart that reordered two sleepers under TSan.
      const auto duration = std::chrono::milliseconds(1 + 10 * i);
      const auto deadline = Clock::now() + duration;
      sleeping.fetch_add(1);
      switch (i % 4) {
        case 0: {
          const timespec request{0, static_cast<long>(duration.count()) * 1'000'000};
          EXPECT_EQ(::nanosleep(&request, nullptr), 0);
          break;
        }
        case 1:
          EXPECT_EQ(::usleep(static_cast<useconds_t>(duration.count() * 1000)), 0);
          break;
        case 2: {
          const timespec request{0, static_cast<long>(duration.count()) * 1'000'000};
          EXPECT_EQ(::clock_nanosleep(CLOCK_MONOTONIC, 0, &request, nullptr), 0);
          break;
        }
        default: {
          timespec absolute{};
          ::clock_gettime(CLOCK_MONOTONIC, &absolute);
          absolute.tv_nsec += static_cast<long>(duration.count()) * 1'000'000;
          absolute.tv_sec += absolute.tv_nsec / 1'000'000'000;
          absolute.tv_nsec %= 1'000'000'000;
          EXPECT_EQ(::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &absolute, nullptr), 0);
          break;
        }
      }
      sleeping.fetch_sub(1);
      if (Clock::now() < deadline) early.fetch_add(1);
      {
        std::lock_guard lock(mutex);
        woken.push_back(deadline);
      }
      left.fetch_sub(1);
    }));
  }
  Thread watcher = spawn([&] {
    while (left.load() > 0) {
      if (sleeping.load() > 0) ran_during_a_sleep.store(true);
      this_thread::yield();
    }
  });
  for (Thread& sleeper : sleepers) sleeper.join();
  watcher.join();
  EXPECT_EQ(early.load(), 0);
  EXPECT_EQ(woken.size(), order.size());
  EXPECT_TRUE(std::is_sorted(woken.begin(), woken.end()));
  EXPECT_TRUE(ran_during_a_sleep.load());
}

TEST_P(BlockingCalls, PollSelectAndEpollTimeOutNeverEarlyAndSeeReadiness) {
  Descriptors descriptors;
  const ReadinessPipes pipes(descriptors);
  const int(&quiet)[2] = pipes.quiet;
  const int(&busy)[2] = pipes.busy;
  const int epoll = pipes.epoll;
  Scheduler scheduler(io_config(GetParam(), 1));
  std::atomic<int> early{0};
  Thread timeouts = spawn([&] {
    auto start = Clock::now();
    pollfd entry{quiet[0], POLLIN, 0};
    EXPECT_EQ(::poll(&entry, 1, 5), 0);
    if (Clock::now() - start < std::chrono::milliseconds(5)) early.fetch_add(1);

    start = Clock::now();
    fd_set read;
    FD_ZERO(&read);
    FD_SET(quiet[0], &read);
    timeval timeout{0, 5000};
    EXPECT_EQ(::select(quiet[0] + 1, &read, nullptr, nullptr, &timeout), 0);
    EXPECT_FALSE(FD_ISSET(quiet[0], &read));
    if (Clock::now() - start < std::chrono::milliseconds(5)) early.fetch_add(1);

    start = Clock::now();
    epoll_event event{};
    EXPECT_EQ(::epoll_wait(epoll, &event, 1, 5), 0);
    if (Clock::now() - start < std::chrono::milliseconds(5)) early.fetch_add(1);
  });
  timeouts.join();
  EXPECT_EQ(early.load(), 0);

  // Each call waits for a byte the other thread writes after it started waiting.
  std::atomic<int> step{0};
  Thread waiter = spawn([&] {
    pollfd entry{busy[0], POLLIN, 0};
    step.store(1);
    EXPECT_EQ(::poll(&entry, 1, -1), 1);
    EXPECT_TRUE(entry.revents & POLLIN);
    char byte;
    EXPECT_EQ(::read(busy[0], &byte, 1), 1);

    fd_set read;
    FD_ZERO(&read);
    FD_SET(busy[0], &read);
    step.store(2);
    EXPECT_EQ(::select(busy[0] + 1, &read, nullptr, nullptr, nullptr), 1);
    EXPECT_TRUE(FD_ISSET(busy[0], &read));
    EXPECT_EQ(::read(busy[0], &byte, 1), 1);

    epoll_event event{};
    step.store(3);
    EXPECT_EQ(::epoll_wait(epoll, &event, 1, -1), 1);
    EXPECT_EQ(event.data.fd, busy[0]);
    EXPECT_EQ(::read(busy[0], &byte, 1), 1);
    step.store(4);
  });
  Thread writer = spawn([&] {
    for (int expected = 1; expected <= 3; ++expected) {
      while (step.load() != expected) this_thread::yield();
      for (int i = 0; i < 10; ++i) this_thread::yield();
      EXPECT_EQ(::write(busy[1], "x", 1), 1);
      while (step.load() == expected) this_thread::yield();
    }
  });
  const bool finished = finishes([&] { return step.load() == 4; },
                                 [&] {
                                   for (int i = 0; i < 3; ++i)
                                     [[maybe_unused]] auto n = ::write(busy[1], "!", 1);
                                 });
  waiter.join();
  writer.join();
  EXPECT_TRUE(finished);
}

TEST_P(BlockingCalls, AcceptAndConnectOnOneCore) {
  Descriptors descriptors;
  const Listener listening(descriptors,
                           "weft-io-test-" + std::to_string(::getpid()) + "-" + GetParam());
  ASSERT_GE(listening.fd, 0);
  ASSERT_FALSE(HasFailure()) << "the listening socket could not be bound";
  const int listener = listening.fd;
  Scheduler scheduler(io_config(GetParam(), 1));
  std::atomic<bool> accepting{false};
  std::atomic<bool> done{false};
  Thread server = spawn([&] {
    accepting.store(true);
    const int connection = ::accept(listener, nullptr, nullptr);
    EXPECT_GE(connection, 0);
    char byte = 0;
    EXPECT_EQ(::read(connection, &byte, 1), 1);
    EXPECT_EQ(byte, 'c');
    ::close(connection);
    done.store(true);
  });
  Thread client = spawn([&] {
    while (!accepting.load()) this_thread::yield();
    for (int i = 0; i < 10; ++i) this_thread::yield();
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    EXPECT_EQ(listening.connect(fd), 0);
    EXPECT_EQ(::write(fd, "c", 1), 1);
    ::close(fd);
  });
  const bool finished = finishes([&] { return done.load(); }, [] {});
  server.join();
  client.join();
  EXPECT_TRUE(finished);
}

// One core: a write larger than the socket's buffer goes out in pieces while its thread waits for
// room, and the reader, the only other thread, drains it meanwhile; a write held on the kernel
// thread until all was queued would never let the reader run. The write returns the whole
// length, as a blocking write does. Then a pipe (not a socket) takes writes twice (the second
// after the descriptor is known not to be one) and a non-blocking full socket gets its EAGAIN.
TEST_P(BlockingCalls, WriteLargerThanTheSocketBufferLeavesTheCoreAndSendsAll) {
  Descriptors descriptors;
  int sockets[2];
  descriptors.socketpair(sockets);
  int pipe_fds[2];
  descriptors.pipe(pipe_fds);
  Scheduler scheduler(io_config(GetParam(), 1));
  constexpr std::size_t kLength = 4 << 20;
  std::vector<char> out(kLength);
  for (std::size_t i = 0; i < kLength; ++i) out[i] = static_cast<char>(i * 7 + i / 4096);
  std::vector<char> in(kLength);
  std::atomic<std::size_t> received{0};
  std::atomic<bool> stop{false};
  ssize_t written = 0;
  Thread writer = spawn([&] { written = ::write(sockets[0], out.data(), kLength); });
  Thread reader = spawn([&] {
    while (received.load() < kLength && !stop.load()) {
      const ssize_t got =
          ::read(sockets[1], in.data() + received.load(), kLength - received.load());
      if (got <= 0) return;
      received.fetch_add(static_cast<std::size_t>(got));
    }
  });
  const bool finished = finishes([&] { return received.load() == kLength; },
                                 [&] {
                                   stop.store(true);
                                   ::shutdown(sockets[0], SHUT_RDWR);
                                   ::shutdown(sockets[1], SHUT_RDWR);
                                 });
  writer.join();
  reader.join();
  EXPECT_TRUE(finished) << "write() held the only core";
  EXPECT_EQ(written, static_cast<ssize_t>(kLength));
  EXPECT_TRUE(in == out);

  Thread pipe_writer = spawn([&] {
    EXPECT_EQ(::write(pipe_fds[1], "ab", 2), 2);
    EXPECT_EQ(::write(pipe_fds[1], "cd", 2), 2);
    ASSERT_EQ(::fcntl(sockets[1], F_SETFL, O_NONBLOCK), 0);
    const std::vector<char> chunk(1 << 16, 'x');
    ssize_t last = 0;
    for (int i = 0; i < 1000 && last >= 0; ++i)
      last = ::write(sockets[1], chunk.data(), chunk.size());
    EXPECT_EQ(last, -1);
    EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK);
  });
  pipe_writer.join();
  char got[4] = {};
  EXPECT_EQ(::read(pipe_fds[0], got, 4), 4);
  EXPECT_EQ(std::string(got, 4), "abcd");
}

TEST_P(BlockingCalls, NonBlockingDescriptorsStillReturnEagain) {
  Descriptors descriptors;
  int fds[2];
  descriptors.pipe(fds);
  ASSERT_EQ(::fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
  Scheduler scheduler(io_config(GetParam(), 1));
  Thread reader = spawn([&] {
    char byte;
    errno = 0;
    EXPECT_EQ(::read(fds[0], &byte, 1), -1);
    EXPECT_EQ(errno, EAGAIN);
    EXPECT_EQ(::recv(fds[0], &byte, 1, MSG_DONTWAIT), -1);
    // A bad descriptor is the C library's business too.
    EXPECT_EQ(::read(-1, &byte, 1), -1);
    EXPECT_EQ(errno, EBADF);
  });
  reader.join();
}

TEST(BlockingCallsOutsideWeft, GoStraightToTheCLibrary) {
  Descriptors descriptors;
  int fds[2];
  descriptors.pipe(fds);
  Scheduler scheduler(io_config("auto", 1));
  // The main thread is no user thread: these block it, as in any program.
  EXPECT_EQ(::write(fds[1], "ab", 2), 2);
  char bytes[2];
  EXPECT_EQ(::read(fds[0], bytes, 2), 2);
  const auto start = Clock::now();
  EXPECT_EQ(::usleep(2000), 0);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(2));
  EXPECT_EQ(io::stats().wakeups, 0u);
}

}  // namespace
}  // namespace weft
