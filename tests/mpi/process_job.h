// Running a test body as a job of several processes without a launcher: the test forks one child
// per process and serves their key-value exchange itself over socket pairs (each child's puts go
// up at a fence; the union of all of them comes back). Every child runs its block of ranks with
// run_job and exits with 0 only when the job succeeded and no check failed in it.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
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
    const ssize_t n = ::write(fd, p, bytes);
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

// The parent: answers fences until a child closes its end (it ended), then closes all ends, so
// that a child still waiting in a fence learns that a peer is gone.
inline void serve(const std::vector<int>& fds) {
  try {
    for (;;) {
      Table all;
      for (int fd : fds) {
        std::uint64_t entries = 0;
        if (::read(fd, &entries, sizeof entries) != static_cast<ssize_t>(sizeof entries)) {
          throw Error("a child ended");
        }
        for (std::uint64_t i = 0; i < entries; ++i) {
          std::string key = read_string(fd);
          all[key] = read_string(fd);
        }
      }
      for (int fd : fds) write_table(fd, all);
    }
  } catch (const Error&) {
    for (int fd : fds) ::close(fd);
  }
}

}  // namespace process_job_detail

// Runs body(world rank) in `ranks` ranks spread over `processes` processes; returns 0 when every
// process succeeded, else the first failing one's status (a check that failed in a child makes
// it fail; its message is in the output).
inline int run_processes(int processes, int ranks, int vps,
                         const std::function<void(int rank)>& body,
                         std::vector<std::pair<std::string, std::string>> extra = {}) {
  namespace d = process_job_detail;
  const RankLayout layout(ranks, processes);
  std::vector<int> parent_ends;
  std::vector<pid_t> children;
  for (int p = 0; p < processes; ++p) {
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return 127;
    const pid_t child = ::fork();
    if (child == 0) {
      for (int fd : parent_ends) ::close(fd);
      ::close(pair[0]);
      int status = 1;
      try {
        d::ChildBootstrap bootstrap(pair[1], p, layout);
        status = weft::mpi::run_job(
            job_config(ranks, vps, extra),
            [&](int rank) {
              MPI_Init(nullptr, nullptr);
              body(rank);
              MPI_Finalize();
              return 0;
            },
            &bootstrap);
      } catch (const std::exception& error) {
        std::fprintf(stderr, "process %d: %s\n", p, error.what());
      }
      std::fflush(stdout);
      std::fflush(stderr);
      ::_exit(::testing::Test::HasFailure() ? 1 : status);
    }
    ::close(pair[1]);
    parent_ends.push_back(pair[0]);
    children.push_back(child);
  }
  d::serve(parent_ends);
  int result = 0;
  for (int p = 0; p < processes; ++p) {
    int status = 0;
    ::waitpid(children[static_cast<std::size_t>(p)], &status, 0);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code != 0 && result == 0) result = code;
  }
  return result;
}

}  // namespace weft::testing
