#include "job_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>

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

struct Child {
  pid_t pid = -1;
  int ack_read = -1;  // read end of its acknowledgement pipe
  bool ended = false;
  siginfo_t end{};  // how it ended, once it has
};

bool failed(const siginfo_t& end) {
  return end.si_code != CLD_EXITED || end.si_status != 0;
}

// The children started so far. However run_job_processes is left, none outlives it: what was not
// reaped on the way out is killed and reaped here.
class Children {
 public:
  Children() = default;
  Children(const Children&) = delete;
  Children& operator=(const Children&) = delete;
  ~Children() {
    for (Child& child : list) {
      if (child.pid > 0) {
        ::kill(-child.pid, SIGKILL);
        ::kill(child.pid, SIGKILL);
        int status = 0;
        while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
        }
      }
      if (child.ack_read >= 0) ::close(child.ack_read);
    }
  }

  std::vector<Child> list;

  bool all_ended() const {
    for (const Child& child : list) {
      if (!child.ended) return false;
    }
    return true;
  }
  void signal_running(int signal) const {
    for (const Child& child : list) {
      if (!child.ended) ::kill(-child.pid, signal);
    }
  }
};

// True once the child has ended, `end` saying how; it stays a zombie (WNOWAIT), so that its
// process group id cannot be reused while weftrun still signals the group.
bool child_ended(pid_t child, siginfo_t& end) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid != child) {
    return false;
  }
  end = info;
  return true;
}

// A child stopped by SIGTTIN or SIGTTOU read or wrote the terminal from its background group: it
// would wait forever.
bool stopped_on_terminal(pid_t child) {
  siginfo_t info{};
  return ::waitid(P_PID, static_cast<id_t>(child), &info, WSTOPPED | WNOHANG) == 0 &&
         info.si_pid == child && (info.si_status == SIGTTIN || info.si_status == SIGTTOU);
}

using Clock = std::chrono::steady_clock;

// When the running children get SIGKILL; kNever while no deadline is set.
constexpr Clock::time_point kNever = Clock::time_point::max();

// Notes the children that ended since the last look. The first that failed is `failed`; the
// others still running are then sent SIGTERM, and SIGKILL at `kill_at`. Among failures seen at
// the same look, one ended by a signal is named first: a process killed or crashed did not end
// because of a peer, whereas one that exited non-zero may have reported a peer's departure.
void collect_ended(Children& children, std::optional<int>& failed_process,
                   Clock::time_point& kill_at) {
  std::optional<int> exited_non_zero;
  std::optional<int> signaled;
  for (std::size_t i = 0; i < children.list.size(); ++i) {
    Child& child = children.list[i];
    if (child.ended) continue;
    if (!child_ended(child.pid, child.end)) {
      if (stopped_on_terminal(child.pid)) {
        std::fprintf(stderr,
                     "weftrun: the program stopped on terminal input or output; it runs in its own "
                     "process group, so redirect its standard input. Ending it.\n");
        ::kill(-child.pid, SIGKILL);
      }
      continue;
    }
    child.ended = true;
    ::kill(-child.pid, SIGKILL);  // what the process left behind in its group
    std::optional<int>& kind = child.end.si_code == CLD_EXITED ? exited_non_zero : signaled;
    if (failed(child.end) && !kind) kind = static_cast<int>(i);
  }
  if (failed_process || (!signaled && !exited_non_zero)) return;
  failed_process = signaled ? signaled : exited_non_zero;
  if (!children.all_ended()) {
    children.signal_running(SIGTERM);
    kill_at = std::min(kill_at, Clock::now() + kFailureGrace);
  }
}

std::optional<int> watch(Children& children, const sigset_t& signals) {
  std::optional<int> failed_process;
  Clock::time_point kill_at = kNever;
  while (true) {
    collect_ended(children, failed_process, kill_at);
    if (children.all_ended()) return failed_process;
    timespec wait = {3600, 0};
    if (kill_at != kNever) {
      const auto left = kill_at - Clock::now();
      if (left <= Clock::duration::zero()) {
        children.signal_running(SIGKILL);
        kill_at = kNever;
        continue;
      }
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      wait = {static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    }
    siginfo_t info{};
    const int signal = ::sigtimedwait(&signals, &info, &wait);
    if (signal == SIGTSTP) {
      children.signal_running(SIGSTOP);
      ::kill(::getpid(), SIGSTOP);
      children.signal_running(SIGCONT);  // weftrun was continued
    } else if (signal == SIGQUIT) {
      // A running job answers with every user thread's stack (mpi/diagnostics/monitor.h) and
      // goes on: no kill follows.
      children.signal_running(signal);
    } else if (signal > 0 && signal != SIGCHLD) {
      children.signal_running(signal);
      if (kill_at == kNever) kill_at = Clock::now() + kKillGrace;
    }
  }
}

// Starts one child; in `children` as soon as it exists.
void start_child(Children& children, const std::string& path,
                 const std::vector<std::string>& arguments, ProcessLaunch launch,
                 const sigset_t& original_mask) {
  int ack[2];
  if (::pipe2(ack, O_CLOEXEC) != 0) throw Error(system_error("cannot create a pipe"));
  launch.launch.ack_fd = ack[1];
  std::vector<std::string> environment;
  for (std::string& entry : process_environment()) {
    if (!is_launch_variable(entry)) environment.push_back(std::move(entry));
  }
  for (std::string& entry : launch_environment(launch.launch)) {
    environment.push_back(std::move(entry));
  }
  for (std::string& entry : launch.environment) environment.push_back(std::move(entry));
  StringArray argv(arguments);
  StringArray envp(std::move(environment));
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const std::string error = system_error("cannot start " + path);
    ::close(ack[0]);
    ::close(ack[1]);
    throw Error(error);
  }
  if (pid == 0) exec_child(path.c_str(), argv.get(), envp.get(), ack[1], original_mask, parent);
  ::setpgid(pid, pid);  // also here, so that the group exists before any forwarding
  ::close(ack[1]);
  children.list.push_back({pid, ack[0], false, {}});
}

}  // namespace

JobOutcomes run_job_processes(const std::string& path, const std::vector<std::string>& arguments,
                              std::vector<ProcessLaunch> launches) {
  // An inherited SIG_IGN for SIGCHLD would reap the children behind weftrun's back.
  ::signal(SIGCHLD, SIG_DFL);
  // The watched signals stay blocked in weftrun until it exits: one arriving after the children
  // ended must not end weftrun with another status than the job's.
  const sigset_t signals = watched_signals();
  sigset_t original_mask;
  ::sigprocmask(SIG_BLOCK, &signals, &original_mask);
  Children children;
  for (ProcessLaunch& launch : launches) {
    start_child(children, path, arguments, std::move(launch), original_mask);
  }

  JobOutcomes outcomes;
  outcomes.failed = watch(children, signals);
  for (Child& child : children.list) {
    int status = 0;
    while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
    child.pid = -1;
    JobOutcome outcome;
    outcome.acknowledged = read_acknowledgement(child.ack_read);
    if (WIFSIGNALED(status)) {
      outcome.signaled = true;
      outcome.code = WTERMSIG(status);
    } else {
      outcome.code = WEXITSTATUS(status);
    }
    outcomes.processes.push_back(outcome);
  }
  return outcomes;
}

}  // namespace weft::tools
