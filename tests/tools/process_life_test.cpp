// Process life of a weft program (tests/programs/process_life.c): fork from every kind of thread
// and every way for the child to end, system/popen/posix_spawn that leave the core to the other
// ranks, exit() from several threads at once, and unknown WEFT_* variables. Each job runs under
// weftrun (one process and -p 2) or plain, with a deadline: a job that hangs is killed and fails.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ostream>
#include <string>
#include <vector>

namespace {

struct Outcome {
  bool finished = false;  // false: still running at the deadline, killed
  int status = -1;        // the exit status, or 128 + the signal
  std::string out, err;
};

// Runs `argv` in a process group of its own with `environment` added, reading its output until it
// ends or `deadline` passes (then the whole group is killed).
Outcome run(const std::vector<std::string>& argv, const std::vector<std::string>& environment = {},
            std::chrono::seconds deadline = std::chrono::seconds(120)) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) std::abort();
  const pid_t child = ::fork();
  if (child == 0) {
    ::setpgid(0, 0);
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(err[1], STDERR_FILENO);
    for (const std::string& assignment : environment)
      ::putenv(const_cast<char*>(assignment.c_str()));
    std::vector<char*> pointers;
    for (const std::string& argument : argv)
      pointers.push_back(const_cast<char*>(argument.c_str()));
    pointers.push_back(nullptr);
    ::execv(pointers[0], pointers.data());
    ::_exit(127);
  }
  ::setpgid(child, child);
  ::close(out[1]);
  ::close(err[1]);
  Outcome outcome;
  const auto end = std::chrono::steady_clock::now() + deadline;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* texts[2] = {&outcome.out, &outcome.err};
  int open = 2;
  bool killed = false;
  while (open > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0 && !killed) {
      ::kill(-child, SIGKILL);
      killed = true;
    }
    if (::poll(fds, 2, killed ? 1000 : static_cast<int>(std::min<long>(left.count(), 1000))) < 0) {
      continue;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        texts[i]->append(buffer, static_cast<std::size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ::kill(-child, SIGKILL);  // whatever of the job is left
  outcome.finished = !killed;
  outcome.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return outcome;
}

std::vector<std::string> under_weftrun(int ranks, int processes, std::vector<std::string> args,
                                       std::vector<std::string> options = {}) {
  std::vector<std::string> argv = {WEFTRUN, "-n", std::to_string(ranks)};
  if (processes > 1) argv.insert(argv.end(), {"-p", std::to_string(processes)});
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back(PROCESS_LIFE);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

void expect_no_errors(const Outcome& outcome) {
  EXPECT_TRUE(outcome.finished) << "the job hung and was killed\n" << outcome.err;
  EXPECT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_NE(outcome.out.find(" No Errors"), std::string::npos) << outcome.out << outcome.err;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t found = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++found;
  }
  return found;
}

// ---- fork ----

struct ForkCase {
  const char* where;
  const char* end;
};

// For gtest's listing of the parameter: "rank, return".
void PrintTo(const ForkCase& c, std::ostream* out) {
  *out << c.where << ", " << c.end;
}

class ProcessLifeFork : public ::testing::TestWithParam<ForkCase> {};

// Every rank forks from the given thread; the child computes, sleeps, runs a parallel region and
// ends the given way; the parent's waitpid returns its status. In one process and over two.
TEST_P(ProcessLifeFork, TheChildIsAPlainProcess) {
  const ForkCase c = GetParam();
  expect_no_errors(run(under_weftrun(2, 1, {"fork", c.where, c.end})));
  expect_no_errors(run(under_weftrun(2, 2, {"fork", c.where, c.end})));
}

INSTANTIATE_TEST_SUITE_P(EveryThreadEveryEnd, ProcessLifeFork,
                         ::testing::Values(ForkCase{"rank", "return"}, ForkCase{"rank", "exit"},
                                           ForkCase{"rank", "_exit"}, ForkCase{"rank", "exec"},
                                           ForkCase{"worker", "exit"}, ForkCase{"worker", "_exit"},
                                           ForkCase{"worker", "exec"}, ForkCase{"pthread", "exit"},
                                           ForkCase{"pthread", "_exit"},
                                           ForkCase{"pthread", "exec"}),
                         [](const ::testing::TestParamInfo<ForkCase>& info) {
                           const std::string end = info.param.end;
                           return std::string(info.param.where) + "_" +
                                  (end == "_exit" ? "underscore_exit" : end);
                         });

// Without weftrun the program is a job of one rank: the same child.
TEST(ProcessLifeForkPlain, ChildReturnsFromMain) {
  expect_no_errors(run({PROCESS_LIFE, "fork", "rank", "return"}));
  expect_no_errors(run({PROCESS_LIFE, "fork", "worker", "exit"}));
}

// ---- system, popen, posix_spawn ----

TEST(ProcessLifeSpawn, SystemPopenAndPosixSpawnFromARankAndAWorker) {
  for (const char* where : {"rank", "worker"}) {
    expect_no_errors(run(under_weftrun(2, 1, {"spawn", where})));
    expect_no_errors(run(under_weftrun(2, 2, {"spawn", where})));
  }
}

// Two ranks on one core: rank 0's children wait until rank 1 has seen them start, which it can
// only do while rank 0 waits for them if that wait leaves the core to rank 1. A wait that froze
// the core would never end: the job is killed at the deadline and the test fails.
TEST(ProcessLifeSpawn, AChildsWaitLeavesTheCoreToTheOtherRanks) {
  char directory[] = "/tmp/weft-process-life-XXXXXX";
  ASSERT_NE(::mkdtemp(directory), nullptr);
  expect_no_errors(run(under_weftrun(2, 1, {"core", directory}, {"--set", "scheduler.vps=1"}), {},
                       std::chrono::seconds(60)));
  EXPECT_EQ(std::system(("rm -rf " + std::string(directory)).c_str()), 0);
}

// ---- exit from several threads at once ----

// Rank 0's pthreads and OpenMP workers each print a line (buffered: stdout is a pipe) and call
// exit(7) at the same moment: the job ends with 7, each line and the line of rank 0's exit handler
// there once (without one thread ending the process, all lines came out twice about once in 150
// jobs). Then the same with pthread 0 calling exit(7) first and the others exit(9) while its exit
// handler runs (200 ms): the first exit is the one that ends the job, with its handler's line
// (without the claim, the later exit ended the job with 9 before the handler was done).
void expect_one_end(const Outcome& outcome, int round) {
  ASSERT_TRUE(outcome.finished) << outcome.err;
  ASSERT_EQ(outcome.status, 7) << "round " << round << ":\n" << outcome.out << outcome.err;
  ASSERT_EQ(count(outcome.out, "exit handler ran\n"), 1u) << "round " << round << ":\n"
                                                          << outcome.out;
  for (int who : {0, 1, 2, 3, 4, 5, 1000, 1001, 1002}) {
    ASSERT_EQ(count(outcome.out, "thread " + std::to_string(who) + " says goodbye\n"), 1u)
        << "round " << round << ":\n"
        << outcome.out;
  }
}

TEST(ProcessLifeExit, SeveralThreadsAtOnceFlushOnceAndEndTheJobWithTheFirstStatus) {
  for (int round = 0; round < 12; ++round) {
    expect_one_end(run(under_weftrun(2, round % 2 + 1, {"exit", "6"})), round);
  }
  for (int round = 0; round < 4; ++round) {
    expect_one_end(run(under_weftrun(2, round % 2 + 1, {"exit-staggered", "6"})), round);
  }
}

// ---- the environment ----

// A site's WEFT_ROOT and a user's WEFT_HOME do not stop a job: one warning per process (weftrun,
// then each process of the program), naming them. A misspelled --set key is still refused.
TEST(ProcessLifeEnvironment, UnknownWeftVariablesWarnOncePerProcess) {
  const std::vector<std::string> site = {"WEFT_ROOT=/opt/weft", "WEFT_HOME=/home/someone"};
  const std::string warning = "weft: warning: ignoring environment variables WEFT_ROOT, WEFT_HOME";
  for (int processes : {1, 2}) {
    const Outcome outcome = run(under_weftrun(2, processes, {"spawn", "rank"}), site);
    expect_no_errors(outcome);
    EXPECT_EQ(count(outcome.err, warning), static_cast<std::size_t>(1 + processes)) << outcome.err;
    EXPECT_NE(outcome.err.find("known: WEFT_DEADLOCK_REPORT, "), std::string::npos) << outcome.err;
    EXPECT_NE(outcome.err.find(", WEFT_TOPOLOGY"), std::string::npos) << outcome.err;
  }
  const Outcome refused =
      run(under_weftrun(2, 1, {"spawn", "rank"}, {"--set", "scheduler.vp=1"}), site);
  EXPECT_EQ(refused.status, 2) << refused.err;
  EXPECT_NE(refused.err.find("unknown configuration key 'scheduler.vp'"), std::string::npos)
      << refused.err;
}

}  // namespace
