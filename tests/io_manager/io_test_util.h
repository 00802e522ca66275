// Helpers of the I/O manager tests: configurations from explicit settings only (the developer's
// WEFT_* environment cannot change what a test checks) and a watchdog that turns a hang into a
// failure.
#pragma once

#include <gtest/gtest.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "weft/config.h"

namespace weft::testing {

inline Config io_config(const std::string& mode, int vps,
                        std::vector<std::pair<std::string, std::string>> more = {}) {
  ConfigOverrides overrides;
  overrides.settings = {{"topology", "synthetic:pack:1 core:" + std::to_string(vps) + " pu:1"},
                        {"scheduler.vps", std::to_string(vps)},
                        {"io.mode", mode}};
  for (auto& setting : more) overrides.settings.push_back(std::move(setting));
  return Config::load(overrides, {});
}

// Waits, on the calling kernel thread, until `done` holds or a generous limit passes; on
// timeout calls `rescue` (which must let the stuck threads finish) and returns false. The limit
// only bounds a hang: no test asserts on how long anything took.
inline bool finishes(const std::function<bool()>& done, const std::function<void()>& rescue,
                     std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) {
      rescue();
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// Descriptors closed at the end of a test.
class Descriptors {
 public:
  Descriptors() = default;
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  ~Descriptors() {
    for (int fd : fds_) ::close(fd);
  }
  void pipe(int fds[2]) {
    ASSERT_EQ(::pipe(fds), 0);
    fds_.insert(fds_.end(), {fds[0], fds[1]});
  }
  void socketpair(int fds[2]) {
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    fds_.insert(fds_.end(), {fds[0], fds[1]});
  }
  int adopt(int fd) {
    fds_.push_back(fd);
    return fd;
  }

 private:
  std::vector<int> fds_;
};

// A Unix stream socket listening on the abstract name `name` (nothing on the file system to clean
// up), and the address a client connects to.
struct Listener {
  Listener(Descriptors& descriptors, const std::string& name) {
    fd = descriptors.adopt(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    EXPECT_GE(fd, 0);
    address.sun_family = AF_UNIX;
    std::copy(name.begin(), name.end(), address.sun_path + 1);
    length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
    EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), length), 0);
    EXPECT_EQ(::listen(fd, 4), 0);
  }
  int connect(int client) const {
    return ::connect(client, reinterpret_cast<const sockaddr*>(&address), length);
  }
  int fd = -1;
  sockaddr_un address{};
  socklen_t length = 0;
};

// Two pipes for readiness checks, `quiet` that never gets data and `busy` that does, and an epoll
// set watching `busy`.
struct ReadinessPipes {
  explicit ReadinessPipes(Descriptors& descriptors) {
    descriptors.pipe(quiet);
    descriptors.pipe(busy);
    epoll = descriptors.adopt(::epoll_create1(EPOLL_CLOEXEC));
    EXPECT_GE(epoll, 0);
    epoll_event interest{};
    interest.events = EPOLLIN;
    interest.data.fd = busy[0];
    EXPECT_EQ(::epoll_ctl(epoll, EPOLL_CTL_ADD, busy[0], &interest), 0);
  }
  int quiet[2];
  int busy[2];
  int epoll = -1;
};

inline const std::vector<std::string>& io_modes() {
  static const std::vector<std::string> modes = {"auto", "poll", "block"};
  return modes;
}

}  // namespace weft::testing
