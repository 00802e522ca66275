#include "job_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <utility>

#include "weft/error.h"
#include "weft/io.h"
#include "weft/mpi_job.h"

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

struct Child {
  pid_t pid = -1;
  int ack_read = -1;  // read end of its acknowledgement pipe
  bool ended = false;
  siginfo_t end{};  // how it ended, once it has
  // What it wrote on the pipe so far (read when it ended, or when a peer failed): kAcknowledgement,
  // then kDeliberateEnd and its status if it ends the job on purpose, or kLostProcess and a peer's
  // number if it ends because that peer went.
  std::string reports;
  bool acknowledged = false;
  bool deliberate = false;
  std::optional<int> lost;
  // Since when a signal (stop_signal) has kept it stopped, kNever while it runs.
  std::chrono::steady_clock::time_point stopped_since =
      std::chrono::steady_clock::time_point::max();
  int stop_signal = 0;
  bool ended_stopped = false;  // weftrun ended the job because it stayed stopped
};

// Reads what the child wrote on its pipe so far, without waiting (a process it started may hold
// the write end after it ended).
void read_reports(Child& child) {
  ::fcntl(child.ack_read, F_SETFL, O_NONBLOCK);
  char bytes[8];
  for (ssize_t got; (got = ::read(child.ack_read, bytes, sizeof bytes)) > 0;) {
    child.reports.append(bytes, static_cast<std::size_t>(got));
  }
  child.acknowledged = !child.reports.empty() && child.reports[0] == kAcknowledgement;
  child.deliberate =
      child.acknowledged && child.reports.size() >= 2 && child.reports[1] == mpi::kDeliberateEnd;
  std::int32_t lost = -1;
  if (child.acknowledged && child.reports.size() >= 2 + sizeof lost &&
      child.reports[1] == mpi::kLostProcess) {
    std::memcpy(&lost, child.reports.data() + 2, sizeof lost);
    child.lost = lost;
  }
}

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
        io::remove_stats_of_ended_process(child.pid);
        mpi::remove_job_files_of_ended_process(child.pid);
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

using Clock = std::chrono::steady_clock;

// When the running children get SIGKILL; kNever while no deadline is set.
constexpr Clock::time_point kNever = Clock::time_point::max();

// Notes whether a running child was stopped or continued since the last look. One stopped by
// SIGTTIN or SIGTTOU read or wrote the terminal from its background group: it would wait forever,
// and is ended at once.
void note_stops(Child& child) {
  siginfo_t info{};
  if (::waitid(P_PID, static_cast<id_t>(child.pid), &info, WSTOPPED | WCONTINUED | WNOHANG) != 0 ||
      info.si_pid != child.pid) {
    return;
  }
  if (info.si_code == CLD_CONTINUED) {
    child.stopped_since = kNever;
  } else if (info.si_code == CLD_STOPPED) {
    if (info.si_status == SIGTTIN || info.si_status == SIGTTOU) {
      std::fprintf(stderr,
                   "weftrun: the program stopped on terminal input or output; it runs in its own "
                   "process group, so redirect its standard input. Ending it.\n");
      ::kill(-child.pid, SIGKILL);
    } else if (child.stopped_since == kNever) {
      child.stopped_since = Clock::now();
      child.stop_signal = info.si_status;
    }
  }
}

// A signal that a process raises against itself when something went wrong, which may be a peer's
// departure: UCX aborts when a copy to a process that is gone fails, and a read of a peer's memory
// that vanished faults. A kill from outside (SIGKILL, SIGTERM, SIGINT...) is never such a reaction.
bool crash_signal(int signal) {
  switch (signal) {
    case SIGABRT:
    case SIGSEGV:
    case SIGBUS:
    case SIGFPE:
    case SIGILL:
    case SIGTRAP:
    case SIGSYS:
      return true;
    default:
      return false;
  }
}

// True while the process is in the kernel's exit path (PF_EXITING in the flags of
// /proc/<pid>/stat): it is going on its own, whatever weftrun does next.
bool exiting(pid_t pid) {
  char path[32];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  std::FILE* file = std::fopen(path, "re");
  if (file == nullptr) return false;
  char line[1024];
  const bool read = std::fgets(line, sizeof line, file) != nullptr;
  std::fclose(file);
  if (!read) return false;
  // The fields after the command name, which may itself hold spaces and parentheses: state ppid
  // pgrp session tty_nr tpgid flags.
  const char* rest = std::strrchr(line, ')');
  if (rest == nullptr) return false;
  char state = 0;
  long skipped = 0;
  unsigned long flags = 0;
  if (std::sscanf(rest + 1, " %c %ld %ld %ld %ld %ld %lu", &state, &skipped, &skipped, &skipped,
                  &skipped, &skipped, &flags) != 7) {
    return false;
  }
  constexpr unsigned long kPfExiting = 0x4;  // include/linux/sched.h
  return (flags & kPfExiting) != 0;
}

// Waits, a bounded while, for a child that is exiting to become a zombie.
bool await_exit(Child& child) {
  for (int i = 0; i < 2000; ++i) {
    if (child_ended(child.pid, child.end)) return true;
    ::usleep(1000);
  }
  return false;
}

// Notes the children that ended since the last look. The first that failed is `failed`; the
// others still running are then sent SIGTERM at `term_at` (and SIGKILL later, by watch). Among
// failures seen at the same look, one that said it ends the job on purpose (a rank's exit status,
// MPI_Abort) is named first, then one killed by a signal from outside, then one that crashed, then
// one that exited non-zero: a process killed did not end because of a peer, whereas one that
// crashed or exited non-zero may have reacted to a peer's departure. A peer already on its way out
// when a failure is seen is waited for and judged at the same look, since weftrun did not end it: a
// process whose copy to a killed peer failed has crashed only once that peer was exiting.
// A process that ended because it lost a peer (kLostProcess) names that peer as the cause once
// the peer is seen to have failed: it is waited for a bounded while, since it was gone or going
// when the report was made, and weftrun may see the survivor end first.
// The others still running are given kPeerNoticeGrace (from `term_at`) to end by themselves
// first: a weft process sees a peer go at once and ends naming it, which says more than SIGTERM.
// A process of several that stays stopped longer than `stopped_limit` (zero: no limit) is a peer
// that no longer answers: the others would wait for it forever, so it fails the job.
void collect_ended(Children& children, std::optional<int>& failed_process,
                   Clock::time_point& term_at, std::chrono::milliseconds stopped_limit) {
  std::optional<int> deliberate;
  std::optional<int> exited_non_zero;
  std::optional<int> killed;
  std::optional<int> crashed;
  const auto judge = [&](std::size_t i) {
    Child& child = children.list[i];
    child.ended = true;
    ::kill(-child.pid, SIGKILL);  // what the process left behind in its group
    read_reports(child);
    std::optional<int>& kind = child.end.si_code == CLD_EXITED
                                   ? (child.deliberate ? deliberate : exited_non_zero)
                               : crash_signal(child.end.si_status) ? crashed
                                                                   : killed;
    if (failed(child.end) && !kind) kind = static_cast<int>(i);
  };
  for (std::size_t i = 0; i < children.list.size(); ++i) {
    Child& child = children.list[i];
    if (child.ended) continue;
    if (!child_ended(child.pid, child.end)) {
      note_stops(child);
      if (stopped_limit.count() > 0 && children.list.size() > 1 && !failed_process && !killed &&
          child.stopped_since != kNever && Clock::now() - child.stopped_since >= stopped_limit) {
        child.ended_stopped = true;
        killed = static_cast<int>(i);
        ::kill(-child.pid, SIGKILL);
      }
      continue;
    }
    judge(i);
  }
  if (failed_process || (!deliberate && !killed && !crashed && !exited_non_zero)) return;
  for (std::size_t i = 0; i < children.list.size(); ++i) {
    Child& child = children.list[i];
    if (!child.ended && exiting(child.pid) && await_exit(child)) judge(i);
  }
  const auto lost_peer = [&](std::size_t i) -> std::optional<std::size_t> {
    const Child& child = children.list[i];
    if (!child.ended || !child.lost || *child.lost < 0 ||
        static_cast<std::size_t>(*child.lost) >= children.list.size() ||
        static_cast<std::size_t>(*child.lost) == i) {
      return std::nullopt;
    }
    return static_cast<std::size_t>(*child.lost);
  };
  for (std::size_t i = 0; i < children.list.size(); ++i) {
    const std::optional<std::size_t> peer = lost_peer(i);
    if (peer && !children.list[*peer].ended && await_exit(children.list[*peer])) judge(*peer);
  }
  // A process ends the job on purpose by telling weftrun, then exiting: its peers may fail
  // because it went before it is seen ended, but never before it told.
  for (std::size_t i = 0; i < children.list.size() && !deliberate; ++i) {
    Child& child = children.list[i];
    if (child.ended) continue;
    read_reports(child);
    if (child.deliberate) deliberate = static_cast<int>(i);
  }
  failed_process = deliberate ? deliberate : killed ? killed : crashed ? crashed : exited_non_zero;
  // The peer a process lost, when it failed, failed first (a chain at most as long as the job).
  for (std::size_t hops = 0; hops < children.list.size(); ++hops) {
    const std::optional<std::size_t> peer = lost_peer(static_cast<std::size_t>(*failed_process));
    if (!peer || !children.list[*peer].ended || !failed(children.list[*peer].end)) break;
    failed_process = static_cast<int>(*peer);
  }
  if (!children.all_ended()) term_at = std::min(term_at, Clock::now() + kPeerNoticeGrace);
}

std::optional<int> watch(Children& children, const sigset_t& signals,
                         std::chrono::milliseconds stopped_limit) {
  std::optional<int> failed_process;
  Clock::time_point term_at = kNever;  // when the running children get SIGTERM
  Clock::time_point kill_at = kNever;
  while (true) {
    collect_ended(children, failed_process, term_at, stopped_limit);
    if (children.all_ended()) return failed_process;
    if (term_at != kNever && term_at <= Clock::now()) {
      children.signal_running(SIGTERM);
      term_at = kNever;
      kill_at = std::min(kill_at, Clock::now() + kFailureGrace);
    }
    timespec wait = {3600, 0};
    Clock::time_point look_at = term_at;  // a stopped child's limit, or the SIGTERM
    for (const Child& child : children.list) {
      if (!child.ended && child.stopped_since != kNever && stopped_limit.count() > 0) {
        look_at = std::min(look_at, child.stopped_since + stopped_limit);
      }
    }
    if (look_at != kNever && look_at < kill_at) {
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::max(look_at - Clock::now(), Clock::duration::zero()))
                          .count();
      wait = {static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    } else if (kill_at != kNever) {
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
      // Stopped with weftrun, by its user: no peer failed.
      for (Child& child : children.list) child.stopped_since = kNever;
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
  Child child;
  child.pid = pid;
  child.ack_read = ack[0];
  children.list.push_back(std::move(child));
}

}  // namespace

JobOutcomes run_job_processes(const std::string& path, const std::vector<std::string>& arguments,
                              std::vector<ProcessLaunch> launches,
                              std::chrono::milliseconds stopped_limit) {
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
  outcomes.failed = watch(children, signals, stopped_limit);
  for (Child& child : children.list) {
    // While it is a zombie: its pid, which names the file, is not reused yet.
    io::remove_stats_of_ended_process(child.pid);
    mpi::remove_job_files_of_ended_process(child.pid);
    int status = 0;
    while (::waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
    }
    child.pid = -1;
    read_reports(child);
    JobOutcome outcome;
    outcome.acknowledged = child.acknowledged;
    if (child.ended_stopped) outcome.stopped_by = child.stop_signal;
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
