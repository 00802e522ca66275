// The end of the process against a rank's exit handlers (include/weft/process_end.h), in a forked
// child each: the C library's exit handlers of the child stand in for the ranks' handlers that
// glibc's exit runs, and a plain pthread stands in for a rank that ends meanwhile.
#include "weft/process_end.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

namespace {

int report_fd = -1;  // the child's end of the pipe to the parent
std::atomic<bool> scope_returned{false};

void say(char what) {
  if (::write(report_fd, &what, 1) != 1) ::_exit(90);
}

// Waits up to a second for what another thread of the child does: the parent checks the result.
template <typename Done>
void wait_up_to_a_second(Done done) {
  for (int i = 0; i < 1000 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

// A rank that ends while glibc's exit already runs: its scope must not return, since glibc's exit
// may already have taken (or will take) its handlers, and would end the process in their middle.
void* rank_ending_late(void*) {
  const weft::RankHandlersScope scope;
  scope_returned.store(true);
  say('R');
  return nullptr;
}

void exit_handler_starting_a_late_rank() {
  pthread_t thread;
  if (::pthread_create(&thread, nullptr, rank_ending_late, nullptr) != 0) ::_exit(91);
  wait_up_to_a_second([] { return scope_returned.load(); });
  say('E');
}

struct Child {
  int status = -1;
  std::string said;
};

// Runs body in a forked child that reports through a pipe; returns its exit status and report.
template <typename Body>
Child run_child(Body body) {
  int fds[2];
  EXPECT_EQ(::pipe(fds), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    report_fd = fds[1];
    body();
    ::_exit(92);  // body ends the process
  }
  ::close(fds[1]);
  Child child;
  char buffer[64];
  for (ssize_t n; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) child.said.append(buffer, n);
  ::close(fds[0]);
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  child.status = WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  return child;
}

TEST(ProcessEnd, ARankEndingAfterTheEndBeganLeavesItsHandlersToTheExit) {
  const Child child = run_child([] {
    std::atexit(exit_handler_starting_a_late_rank);
    weft::end_process(7);
  });
  EXPECT_EQ(child.status, 7);
  EXPECT_EQ(child.said, "E") << "the late rank's scope returned while the process was ending";
}

// A rank running its handlers when another thread ends the process: the end waits for them.
TEST(ProcessEnd, TheEndWaitsForARankRunningItsHandlers) {
  const Child child = run_child([] {
    std::atomic<bool> open{false};
    std::thread rank([&open] {
      const weft::RankHandlersScope scope;
      open.store(true);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      say('H');
    });
    while (!open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    rank.detach();
    weft::end_process(7);
  });
  EXPECT_EQ(child.status, 7);
  EXPECT_EQ(child.said, "H");
}

}  // namespace
