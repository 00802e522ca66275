// glibc's list of exit functions against fork (scheduler/exit_functions.h): a child forked while
// other threads register and finalize exit functions must be able to exit, and the functions
// registered through libweft's __cxa_atexit run as glibc's would.
#include "exit_functions.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "test_config.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

extern "C" int __cxa_atexit(void (*function)(void*), void* argument, void* dso);
extern "C" void __cxa_finalize(void* dso);

namespace {

// The exit status of `pid`, or -1 once it has not ended in 60 s (killed then): a child that
// inherited a lock taken at the fork waits on it for ever.
int wait_or_kill(pid_t pid) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    const pid_t ended = ::waitpid(pid, &status, WNOHANG);
    if (ended == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
  return -1;
}

void nothing(void*) {}

// Keeps glibc's list busy: a thread registers functions under its own handle and finalizes them,
// over a list made long (every walk of it holds glibc's lock longer).
class ListChurn {
 public:
  explicit ListChurn(int threads) {
    for (int i = 0; i < 1000; ++i) __cxa_atexit(nothing, nullptr, &long_lived_);
    for (int t = 0; t < threads; ++t) {
      threads_.emplace_back([this, t] {
        while (!stop_.load(std::memory_order_relaxed)) {
          for (int i = 0; i < 8; ++i) __cxa_atexit(nothing, nullptr, &handles_[t]);
          __cxa_finalize(&handles_[t]);
        }
      });
    }
  }
  ~ListChurn() {
    stop_.store(true);
    for (std::thread& thread : threads_) thread.join();
  }

 private:
  char long_lived_ = 0;
  char handles_[4] = {};
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

// A child that exits while other threads of its parent were inside glibc's list code at the fork.
// Without the gate the first children here already inherit glibc's lock taken and hang at exit.
TEST(ExitFunctions, ChildrenForkedWhileOthersRegisterAndFinalizeCanExit) {
  if (!weft::detail::exit_functions_gated()) GTEST_SKIP() << "a sanitizer build: glibc's alone";
  const ListChurn churn(2);
  for (int i = 0; i < 100; ++i) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      __cxa_atexit(nothing, nullptr, nullptr);
      std::exit(3);
    }
    ASSERT_EQ(wait_or_kill(pid), 3) << "child " << i << " did not exit (-1: hung)";
  }
}

// The same from user threads, which may park and resume on another kernel thread.
TEST(ExitFunctions, ChildrenForkedByAUserThreadWhileOthersRegisterCanExit) {
  if (!weft::detail::exit_functions_gated()) GTEST_SKIP() << "a sanitizer build: glibc's alone";
  weft::Scheduler scheduler(weft::testing::two_vps());
  std::atomic<bool> stop{false};
  char handles[3] = {};
  std::vector<weft::Thread> churners;
  for (int t = 0; t < 3; ++t) {
    churners.push_back(weft::spawn([&, t] {
      while (!stop.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 8; ++i) __cxa_atexit(nothing, nullptr, &handles[t]);
        __cxa_finalize(&handles[t]);
        weft::this_thread::yield();
      }
    }));
  }
  std::vector<int> statuses;
  weft::spawn([&] {
    for (int i = 0; i < 50; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) std::exit(4);
      statuses.push_back(pid < 0 ? -2 : wait_or_kill(pid));
      weft::this_thread::yield();
    }
  }).join();
  stop.store(true);
  for (weft::Thread& thread : churners) thread.join();
  EXPECT_EQ(statuses, std::vector<int>(50, 4));
}

std::string calls;

void second(void* argument) {
  calls += static_cast<const char*>(argument);
}

void first(void* argument) {
  calls += static_cast<const char*>(argument);
  static char handle_of_first;
  __cxa_atexit(second, const_cast<char*>("2"), &handle_of_first);
  // Registered while finalizing another handle: glibc runs it at that handle's finalization.
  __cxa_finalize(&handle_of_first);
}

char handle_a;
char handle_b;

// Each function is called once, with its argument, at its own handle's finalization, last
// registered first, including one registered and finalized by a function being called.
TEST(ExitFunctions, FunctionsRunOnceWithTheirArgumentAtTheirHandlesFinalization) {
  calls.clear();
  __cxa_atexit(first, const_cast<char*>("1"), &handle_a);
  __cxa_atexit(second, const_cast<char*>("b"), &handle_b);
  __cxa_atexit(second, const_cast<char*>("3"), &handle_a);
  __cxa_finalize(&handle_a);
  EXPECT_EQ(calls, "312");
  __cxa_finalize(&handle_a);
  EXPECT_EQ(calls, "312");
  __cxa_finalize(&handle_b);
  EXPECT_EQ(calls, "312b");
}

int fork_and_wait() {
  const pid_t pid = ::fork();
  if (pid == 0) std::_Exit(5);
  return pid < 0 ? -2 : wait_or_kill(pid);
}

int forked_status = 0;

void forking_function(void*) {
  forked_status = fork_and_wait();
}

char handle_forking;

// A function called by __cxa_finalize that forks: the gate lets its own thread through.
TEST(ExitFunctions, AFunctionBeingFinalizedCanFork) {
  forked_status = 0;
  __cxa_atexit(forking_function, nullptr, &handle_forking);
  std::thread finalizer([] { __cxa_finalize(&handle_forking); });
  finalizer.join();
  EXPECT_EQ(forked_status, 5);
}

}  // namespace
