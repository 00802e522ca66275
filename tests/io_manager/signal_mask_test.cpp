// The signal masks of ppoll, pselect and epoll_pwait: the classic pattern of a program that
// blocks a signal everywhere and lets it through only while it waits. A signal the mask leaves
// unblocked, pending when the call starts or arriving while the user thread is parked, ends the
// call with EINTR after its handler ran; a signal the mask blocks does not; the caller's mask is
// the same afterwards.
#include <errno.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <string>

#include "io_test_util.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

using testing::Descriptors;
using testing::finishes;
using testing::io_config;
using testing::ReadinessPipes;

std::atomic<int> caught{0};

void on_usr1(int) {
  caught.fetch_add(1, std::memory_order_relaxed);
}

// Long enough that a wait the signal does not end fails the test by timing out, never by
// how long it took.
constexpr timespec kLongTimeout{5, 0};
constexpr int kLongTimeoutMs = 5000;

bool usr1_blocked_here() {
  sigset_t now;
  pthread_sigmask(SIG_SETMASK, nullptr, &now);
  return sigismember(&now, SIGUSR1) == 1;
}

bool usr1_pending() {
  sigset_t pending;
  sigpending(&pending);
  return sigismember(&pending, SIGUSR1) == 1;
}

// Takes a pending SIGUSR1 without running its handler.
void consume_usr1() {
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  const timespec zero{0, 0};
  EXPECT_EQ(sigtimedwait(&usr1, nullptr, &zero), SIGUSR1);
}

class SignalMask : public ::testing::TestWithParam<std::string> {
 protected:
  // As a pthread program does: SIGUSR1 blocked before any other thread starts, so that the
  // scheduler's kernel threads inherit the mask, and a handler that counts.
  void SetUp() override {
    sigemptyset(&usr1_);
    sigaddset(&usr1_, SIGUSR1);
    sigemptyset(&none_);
    ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &usr1_, &previous_mask_), 0);
    struct sigaction action {};
    action.sa_handler = on_usr1;
    sigemptyset(&action.sa_mask);
    ASSERT_EQ(sigaction(SIGUSR1, &action, &previous_action_), 0);
    caught.store(0);
  }

  void TearDown() override {
    EXPECT_FALSE(usr1_pending()) << "a SIGUSR1 was neither caught nor consumed";
    sigaction(SIGUSR1, &previous_action_, nullptr);
    pthread_sigmask(SIG_SETMASK, &previous_mask_, nullptr);
  }

  // On one core: `waiter` calls the masked function; a second user thread runs only once the
  // waiter is parked in it, then calls `during`.
  void while_parked(const std::function<void()>& waiter, const std::function<void()>& during,
                    const std::function<void()>& rescue) {
    std::atomic<bool> inside{false};
    std::atomic<bool> done{false};
    Thread first = spawn([&] {
      inside.store(true);
      waiter();
      done.store(true);
    });
    Thread second = spawn([&] {
      // One core: this thread runs while the waiter is inside its call only if it parked there.
      while (!inside.load()) this_thread::yield();
      EXPECT_FALSE(done.load()) << "the call returned before the signal was sent";
      during();
    });
    const bool finished = finishes([&] { return done.load(); }, rescue);
    first.join();
    second.join();
    EXPECT_TRUE(finished) << "the call held the only core";
  }

  sigset_t usr1_;
  sigset_t none_;
  sigset_t previous_mask_;
  struct sigaction previous_action_ {};
};

INSTANTIATE_TEST_SUITE_P(Modes, SignalMask, ::testing::ValuesIn(testing::io_modes()),
                         [](const auto& info) { return info.param; });

TEST_P(SignalMask, APendingSignalTheMaskUnblocksEndsTheCallAtOnce) {
  Descriptors descriptors;
  const ReadinessPipes pipes(descriptors);
  Scheduler scheduler(io_config(GetParam(), 1));
  Thread thread = spawn([&] {
    EXPECT_TRUE(usr1_blocked_here());
    pollfd entry{pipes.quiet[0], POLLIN, 0};
    ASSERT_EQ(::kill(::getpid(), SIGUSR1), 0);
    errno = 0;
    EXPECT_EQ(::ppoll(&entry, 1, &kLongTimeout, &none_), -1);
    EXPECT_EQ(errno, EINTR);
    EXPECT_EQ(caught.load(), 1);

    fd_set read;
    FD_ZERO(&read);
    FD_SET(pipes.quiet[0], &read);
    ASSERT_EQ(::kill(::getpid(), SIGUSR1), 0);
    errno = 0;
    EXPECT_EQ(::pselect(pipes.quiet[0] + 1, &read, nullptr, nullptr, &kLongTimeout, &none_), -1);
    EXPECT_EQ(errno, EINTR);
    EXPECT_EQ(caught.load(), 2);

    epoll_event event{};
    ASSERT_EQ(::kill(::getpid(), SIGUSR1), 0);
    errno = 0;
    EXPECT_EQ(::epoll_pwait(pipes.epoll, &event, 1, kLongTimeoutMs, &none_), -1);
    EXPECT_EQ(errno, EINTR);
    EXPECT_EQ(caught.load(), 3);
    EXPECT_TRUE(usr1_blocked_here());
  });
  thread.join();
}

TEST_P(SignalMask, ASignalArrivingWhileParkedEndsTheCallAndTheMaskComesBack) {
  Descriptors descriptors;
  const ReadinessPipes pipes(descriptors);
  Scheduler scheduler(io_config(GetParam(), 1));
  // Every kernel thread blocks SIGUSR1 but the one that waits with the call's mask applied.
  const auto send = [] { EXPECT_EQ(::kill(::getpid(), SIGUSR1), 0); };
  const auto rescue = [&] { [[maybe_unused]] auto n = ::write(pipes.quiet[1], "!", 1); };
  while_parked(
      [&] {
        pollfd entry{pipes.quiet[0], POLLIN, 0};
        errno = 0;
        EXPECT_EQ(::ppoll(&entry, 1, nullptr, &none_), -1);
        EXPECT_EQ(errno, EINTR);
        EXPECT_EQ(caught.load(), 1);
        EXPECT_TRUE(usr1_blocked_here());
      },
      send, rescue);
  while_parked(
      [&] {
        fd_set read;
        FD_ZERO(&read);
        FD_SET(pipes.quiet[0], &read);
        errno = 0;
        EXPECT_EQ(::pselect(pipes.quiet[0] + 1, &read, nullptr, nullptr, nullptr, &none_), -1);
        EXPECT_EQ(errno, EINTR);
        // An interrupted pselect leaves the sets as they were.
        EXPECT_TRUE(FD_ISSET(pipes.quiet[0], &read));
        EXPECT_EQ(caught.load(), 2);
      },
      send, rescue);
  while_parked(
      [&] {
        epoll_event event{};
        errno = 0;
        EXPECT_EQ(::epoll_pwait(pipes.epoll, &event, 1, -1, &none_), -1);
        EXPECT_EQ(errno, EINTR);
        EXPECT_EQ(caught.load(), 3);
      },
      send, rescue);
  // Once the waits are over no kernel thread lets SIGUSR1 through: it stays pending.
  Thread after = spawn([&] {
    send();
    EXPECT_TRUE(usr1_pending());
    EXPECT_EQ(caught.load(), 3);
    consume_usr1();
  });
  after.join();
}

TEST_P(SignalMask, ASignalTheMaskBlocksDoesNotEndTheCall) {
  Descriptors descriptors;
  const ReadinessPipes pipes(descriptors);
  Scheduler scheduler(io_config(GetParam(), 1));
  char byte = 0;
  while_parked(
      [&] {
        pollfd entry{pipes.busy[0], POLLIN, 0};
        EXPECT_EQ(::ppoll(&entry, 1, nullptr, &usr1_), 1);
        EXPECT_EQ(::read(pipes.busy[0], &byte, 1), 1);
        EXPECT_EQ(caught.load(), 0);
        EXPECT_TRUE(usr1_pending());
        consume_usr1();
      },
      [&] {
        EXPECT_EQ(::kill(::getpid(), SIGUSR1), 0);
        EXPECT_EQ(::write(pipes.busy[1], "1", 1), 1);
      },
      [&] { [[maybe_unused]] auto n = ::write(pipes.busy[1], "!", 1); });
  EXPECT_EQ(byte, '1');
}

}  // namespace
}  // namespace weft
