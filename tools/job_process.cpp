#include "job_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "weft/error.h"

namespace weft::tools {

namespace {

constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP};

std::string system_error(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

// Strings and the null-terminated pointer array execve wants, built before fork: the child may
// not allocate.
class StringArray {
 public:
  explicit StringArray(std::vector<std::string> strings) : strings_(std::move(strings)) {
    for (std::string& text : strings_) pointers_.push_back(text.data());
    pointers_.push_back(nullptr);
  }
  char** get() { return pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

// The signals weftrun handles. One that weftrun's parent set to be ignored (nohup's SIGHUP, SIGINT
// of a background job) stays ignored, and the program inherits that.
sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  for (int signal : kForwardedSignals) {
    struct sigaction action {};
    if (::sigaction(signal, nullptr, &action) == 0 && action.sa_handler != SIG_IGN) {
      sigaddset(&set, signal);
    }
  }
  return set;
}

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_child(const char* path, char** argv, char** envp, int ack_fd,
                             const sigset_t& original_mask, pid_t parent) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // weftrun died before prctl
  ::fcntl(ack_fd, F_SETFD, 0);              // inherited by the program, unlike the read end
  ::sigprocmask(SIG_SETMASK, &original_mask, nullptr);
  ::execve(path, argv, envp);
  const char* reason = std::strerror(errno);
  const char* parts[] = {"weftrun: cannot run ", path, ": ", reason, "\n"};
  for (const char* part : parts) {
    [[maybe_unused]] const ssize_t wrote = ::write(STDERR_FILENO, part, std::strlen(part));
  }
  ::_exit(127);
}

bool read_acknowledgement(int fd) {
  char byte = 0;
  ::fcntl(fd, F_SETFL, O_NONBLOCK);
  return ::read(fd, &byte, 1) == 1 && byte == kAcknowledgement;
}

// True once the child has ended; it stays a zombie (WNOWAIT), so that its process group id
// cannot be reused while weftrun still signals the group.
bool child_ended(pid_t child) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == child;
}

// A child stopped by SIGTTIN or SIGTTOU read or wrote the terminal from its background group: it
// would wait forever.
bool stopped_on_terminal(pid_t child) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(child), &info, WSTOPPED | WNOHANG) == 0 &&
         info.si_pid == child && (info.si_status == SIGTTIN || info.si_status == SIGTTOU);
}

void watch(pid_t child, const sigset_t& signals) {
  std::optional<std::chrono::steady_clock::time_point> kill_at;
  while (!child_ended(child)) {
    if (stopped_on_terminal(child)) {
      std::fprintf(stderr,
                   "weftrun: the program stopped on terminal input or output; it runs in its own "
                   "process group, so redirect its standard input. Ending it.\n");
      ::kill(-child, SIGKILL);
    }
    timespec wait = {3600, 0};
    if (kill_at) {
      const auto left = *kill_at - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) {
        ::kill(-child, SIGKILL);
        kill_at.reset();
        continue;
      }
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      wait = {static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    }
    siginfo_t info{};
    const int signal = ::sigtimedwait(&signals, &info, &wait);
    if (signal == SIGTSTP) {
      ::kill(-child, SIGSTOP);
      ::kill(::getpid(), SIGSTOP);
      ::kill(-child, SIGCONT);  // weftrun was continued
    } else if (signal > 0 && signal != SIGCHLD) {
      ::kill(-child, signal);
      if (!kill_at) kill_at = std::chrono::steady_clock::now() + kKillGrace;
    }
  }
}

}  // namespace

JobOutcome run_job_process(const std::string& path, const std::vector<std::string>& arguments,
                           LaunchSettings launch) {
  int ack[2];
  if (::pipe2(ack, O_CLOEXEC) != 0) throw Error(system_error("cannot create a pipe"));
  launch.ack_fd = ack[1];
  std::vector<std::string> environment;
  for (std::string& entry : process_environment()) {
    if (!is_launch_variable(entry)) environment.push_back(std::move(entry));
  }
  for (std::string& entry : launch_environment(launch)) environment.push_back(std::move(entry));
  StringArray argv(arguments);
  StringArray envp(std::move(environment));

  // An inherited SIG_IGN for SIGCHLD would reap the child behind weftrun's back.
  ::signal(SIGCHLD, SIG_DFL);
  // The watched signals stay blocked in weftrun until it exits: one arriving after the child ended
  // must not end weftrun with another status than the child's.
  const sigset_t signals = watched_signals();
  sigset_t original_mask;
  ::sigprocmask(SIG_BLOCK, &signals, &original_mask);
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) throw Error(system_error("cannot start " + path));
  if (child == 0) exec_child(path.c_str(), argv.get(), envp.get(), ack[1], original_mask, parent);
  ::setpgid(child, child);  // also here, so that the group exists before any forwarding
  ::close(ack[1]);

  watch(child, signals);
  ::kill(-child, SIGKILL);  // what the program left behind in its group
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  JobOutcome outcome;
  outcome.acknowledged = read_acknowledgement(ack[0]);
  ::close(ack[0]);
  if (WIFSIGNALED(status)) {
    outcome.signaled = true;
    outcome.code = WTERMSIG(status);
  } else {
    outcome.code = WEXITSTATUS(status);
  }
  return outcome;
}

}  // namespace weft::tools
