// Running a test body as a job of several processes without a launcher: the test forks one child
// per process and serves their key-value exchange itself over socket pairs (each child's puts go
// up at a fence; the union of all of them comes back). Every child runs its block of ranks with
// run_job and exits with 0 only when the job succeeded and no check failed in it; a child that
// fails ends the job, as weftrun ends one. run_ranks (mpi_test_util.h) spreads the jobs of the
// whole MPI test set this way when WEFT_TEST_PROCESSES says so.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "job_config.h"
#include "mpi.h"
#include "weft/bootstrap.h"
#include "weft/error.h"
#include "weft/mpi_job.h"

namespace weft::testing {

namespace process_job_detail {

inline void write_all(int fd, const void* data, std::size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    // send, not write: a peer that is gone gives an error here instead of SIGPIPE.
    const ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n <= 0) throw Error("test bootstrap: write failed");
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

inline void read_all(int fd, void* data, std::size_t bytes) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::read(fd, p, bytes);
    if (n <= 0) throw Error("test bootstrap: a peer process is gone");
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
}

inline void write_string(int fd, const std::string& text) {
  const std::uint64_t size = text.size();
  write_all(fd, &size, sizeof size);
  write_all(fd, text.data(), text.size());
}

inline std::string read_string(int fd) {
  std::uint64_t size = 0;
  read_all(fd, &size, sizeof size);
  std::string text(size, '\0');
  read_all(fd, text.data(), size);
  return text;
}

// Keys are "<process>/<key>".
using Table = std::map<std::string, std::string>;

inline void write_table(int fd, const Table& table) {
  const std::uint64_t entries = table.size();
  write_all(fd, &entries, sizeof entries);
  for (const auto& [key, value] : table) {
    write_string(fd, key);
    write_string(fd, value);
  }
}

inline Table read_table(int fd) {
  std::uint64_t entries = 0;
  read_all(fd, &entries, sizeof entries);
  Table table;
  for (std::uint64_t i = 0; i < entries; ++i) {
    std::string key = read_string(fd);
    table[key] = read_string(fd);
  }
  return table;
}

class ChildBootstrap : public Bootstrap {
 public:
  ChildBootstrap(int fd, int process, RankLayout layout)
      : fd_(fd), process_(process), layout_(layout) {}
  int process() const override { return process_; }
  const RankLayout& layout() const override { return layout_; }
  void put(std::string_view key, std::string_view value) override {
    pending_[std::to_string(process_) + "/" + std::string(key)] = std::string(value);
  }
  void fence() override {
    write_table(fd_, pending_);
    pending_.clear();
    for (auto& [key, value] : read_table(fd_)) known_[key] = std::move(value);
  }
  std::string get(int process, std::string_view key) override {
    auto found = known_.find(std::to_string(process) + "/" + std::string(key));
    if (found == known_.end()) {
      throw Error("test bootstrap: process " + std::to_string(process) + " put no '" +
                  std::string(key) + "'");
    }
    return found->second;
  }

 private:
  int fd_;
  int process_;
  RankLayout layout_;
  Table pending_;
  Table known_;
};

// How a child ended, as weftrun says it: "exited with status 3", "was killed by signal 9 (Killed)".
inline std::string describe_end(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    const int signal = WTERMSIG(wait_status);
    return "was killed by signal " + std::to_string(signal) + " (" + ::strsignal(signal) + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(wait_status));
}

inline int exit_code(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

// The parent's side of a job's processes, as weftrun watches its own: answers the fences (once
// every child sent its puts, every child gets the union) and reaps the children. A child that
// fails (a non-zero status or a signal) ends the job: the others get a short grace to end by
// themselves (they may all be failing at once, as when every rank returns its status after the
// last fence), then are killed; the job's status is that of the failed child of lowest index,
// leaving out one that ended because it lost a peer (weft/mpi_job.h, kLostProcess) which failed.
class Supervisor {
 public:
  // `reports`: the read end of each child's report pipe (report_deliberate_end_to).
  Supervisor(std::vector<int> fds, std::vector<int> reports, std::vector<pid_t> children,
             const RankLayout& layout)
      : fds_(std::move(fds)),
        reports_(std::move(reports)),
        children_(std::move(children)),
        layout_(layout),
        ended_(children_.size(), false),
        status_(children_.size(), 0),
        at_fence_(children_.size(), false) {}

  int run() {
    for (;;) {
      serve_fences();
      reap(false);
      for (std::size_t p = 0; p < children_.size(); ++p) {
        if (ended_[p] && exit_code(status_[p]) != 0) return fail();
      }
      if (std::find(ended_.begin(), ended_.end(), false) == ended_.end()) {
        close_all();
        return 0;
      }
    }
  }

 private:
  // Waits up to 20 ms for a child to write; reads the puts of each child that reached a fence
  // and answers the fence once all have.
  void serve_fences() {
    std::vector<pollfd> polled;
    std::vector<std::size_t> owner;
    for (std::size_t p = 0; p < fds_.size(); ++p) {
      if (fds_[p] >= 0 && !at_fence_[p]) {
        polled.push_back({fds_[p], POLLIN, 0});
        owner.push_back(p);
      }
    }
    if (polled.empty()) {
      ::usleep(20'000);
      return;
    }
    if (::poll(polled.data(), polled.size(), 20) <= 0) return;
    for (std::size_t i = 0; i < polled.size(); ++i) {
      if (polled[i].revents == 0) continue;
      const std::size_t p = owner[i];
      std::uint64_t entries = 0;
      if (::read(fds_[p], &entries, sizeof entries) != static_cast<ssize_t>(sizeof entries)) {
        // The child ended (or is ending): its fences are over.
        ::close(fds_[p]);
        fds_[p] = -1;
        continue;
      }
      try {
        for (std::uint64_t e = 0; e < entries; ++e) {
          std::string key = read_string(fds_[p]);
          fence_[key] = read_string(fds_[p]);
        }
      } catch (const Error&) {
        ::close(fds_[p]);
        fds_[p] = -1;
        continue;
      }
      at_fence_[p] = true;
    }
    bool everyone = true;
    bool stranded = false;
    for (std::size_t p = 0; p < fds_.size(); ++p) {
      everyone = everyone && at_fence_[p];
      stranded = stranded || (fds_[p] < 0 && !at_fence_[p]);
    }
    if (everyone) {
      for (int& fd : fds_) {
        try {
          write_table(fd, fence_);
        } catch (const Error&) {
          ::close(fd);  // that child is gone; reap() sees how it ended
          fd = -1;
        }
      }
      fence_.clear();
      std::fill(at_fence_.begin(), at_fence_.end(), false);
    } else if (stranded) {
      // A child left without reaching this fence: the fence cannot complete. Closing every end
      // lets a child waiting in it report that a peer is gone (a child that ended with 0 passed
      // the job's last fence, so this only happens when a job fails).
      close_all();
    }
  }

  // Collects the children that ended; with `block`, waits for all of them.
  void reap(bool block) {
    for (std::size_t p = 0; p < children_.size(); ++p) {
      if (ended_[p]) continue;
      int status = 0;
      const pid_t got = ::waitpid(children_[p], &status, block ? 0 : WNOHANG);
      if (got == children_[p]) {
        ended_[p] = true;
        status_[p] = status;
      }
    }
  }

  int fail() {
    for (int waited = 0; waited < 250; waited += 5) {
      reap(false);
      if (std::find(ended_.begin(), ended_.end(), false) == ended_.end()) break;
      ::usleep(5'000);
    }
    const std::vector<bool> by_itself = ended_;
    for (std::size_t p = 0; p < children_.size(); ++p) {
      if (!ended_[p]) ::kill(children_[p], SIGKILL);
    }
    reap(true);
    close_all();
    const auto failed_by_itself = [&](std::size_t p) {
      return by_itself[p] && exit_code(status_[p]) != 0;
    };
    for (std::size_t p = 0; p < children_.size(); ++p) {
      if (!failed_by_itself(p)) continue;
      const int lost = lost_peer(p);
      if (lost >= 0 && static_cast<std::size_t>(lost) < children_.size() &&
          static_cast<std::size_t>(lost) != p && failed_by_itself(static_cast<std::size_t>(lost))) {
        continue;
      }
      const int process = static_cast<int>(p);
      const int first = layout_.first_rank(process);
      const int last = first + layout_.ranks_of(process) - 1;
      std::fprintf(stderr,
                   "run_processes: process %d (ranks %d-%d) %s; the other processes were stopped\n",
                   process, first, last, describe_end(status_[p]).c_str());
      return exit_code(status_[p]);
    }
    return 1;  // not reached: fail() follows a failed child
  }

  void close_all() {
    for (int& fd : fds_) {
      if (fd >= 0) ::close(fd);
      fd = -1;
    }
  }

  // The peer child `p` said it lost before it ended, or -1. Read once every child has ended,
  // without waiting (a process it forked may hold the write end).
  int lost_peer(std::size_t p) const {
    char record[1 + sizeof(std::int32_t)] = {};
    if (::read(reports_[p], record, 1) != 1 || record[0] != weft::mpi::kLostProcess ||
        ::read(reports_[p], record + 1, sizeof(std::int32_t)) !=
            static_cast<ssize_t>(sizeof(std::int32_t))) {
      return -1;
    }
    std::int32_t lost = -1;
    std::memcpy(&lost, record + 1, sizeof lost);
    return lost;
  }

  std::vector<int> fds_;
  std::vector<int> reports_;
  std::vector<pid_t> children_;
  RankLayout layout_;
  std::vector<bool> ended_;
  std::vector<int> status_;  // waitpid's status of each ended child
  std::vector<bool> at_fence_;
  Table fence_;  // the puts of the children at the current fence
};

}  // namespace process_job_detail

// Runs rank_main(world rank) in every rank of `config`'s job (mpi.ranks ranks) spread over
// `processes` processes, one forked child each; the child holds its block of the RankLayout and
// runs it with run_job. A child exits with its job's status, or 1 when a check failed in it (its
// message is in the output) or its job threw. Returns 0 when every child exited with 0, else the
// status of the failed child (the lowest index among children that failed at once); the other
// children are then killed, so a rank's fatal error ends the whole job as under weftrun, and
// stderr says which process failed. Needs 1 <= processes <= mpi.ranks.
inline int run_processes_job(int processes, const Config& config,
                             const std::function<int(int rank)>& rank_main) {
  namespace d = process_job_detail;
  const RankLayout layout(static_cast<int>(config.get_int("mpi.ranks")), processes);
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  std::vector<int> parent_ends;
  std::vector<int> report_ends;
  std::vector<pid_t> children;
  for (int p = 0; p < processes; ++p) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return 127;
    int report[2];
    if (::pipe2(report, O_CLOEXEC | O_NONBLOCK) != 0) return 127;
    const pid_t child = ::fork();
    if (child == 0) {
      // A test killed at its timeout leaves no process behind.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);
      for (int fd : parent_ends) ::close(fd);
      for (int fd : report_ends) ::close(fd);
      ::close(pair[0]);
      ::close(report[0]);
      weft::mpi::report_deliberate_end_to(report[1]);
      int status = 1;
      try {
        d::ChildBootstrap bootstrap(pair[1], p, layout);
        status = weft::mpi::run_job(config, rank_main, &bootstrap);
      } catch (const std::exception& error) {
        std::fprintf(stderr, "process %d: %s\n", p, error.what());
      }
      std::fflush(stdout);
      std::fflush(stderr);
      ::_exit(::testing::Test::HasFailure() ? 1 : status);
    }
    ::close(pair[1]);
    ::close(report[1]);
    parent_ends.push_back(pair[0]);
    report_ends.push_back(report[0]);
    children.push_back(child);
  }
  const int status =
      d::Supervisor(std::move(parent_ends), report_ends, std::move(children), layout).run();
  for (int fd : report_ends) ::close(fd);
  return status;
}

// Runs body(world rank) between MPI_Init and MPI_Finalize in `ranks` ranks on `vps` virtual
// processors per process (job_config), spread over `processes` processes (run_processes_job).
inline int run_processes(int processes, int ranks, int vps,
                         const std::function<void(int rank)>& body,
                         std::vector<std::pair<std::string, std::string>> extra = {}) {
  return run_processes_job(processes, job_config(ranks, vps, std::move(extra)), [&](int rank) {
    MPI_Init(nullptr, nullptr);
    body(rank);
    MPI_Finalize();
    return 0;
  });
}

}  // namespace weft::testing
