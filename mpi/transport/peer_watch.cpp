#include "transport/peer_watch.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>

#include "weft/error.h"
#include "weft/io.h"

namespace weft::mpi {

namespace {

constexpr std::string_view kIdentityKey = "weft.peer";

// Where this process runs and who it is there: "<pid> <boot id> <pid namespace inode>". Two
// processes of one boot share the kernel, and with it shared memory; a pid means the same process
// to both only in the same pid namespace.
std::string identity() {
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  struct stat pid_namespace {};
  if (::stat("/proc/self/ns/pid", &pid_namespace) != 0) pid_namespace.st_ino = 0;
  return std::to_string(::getpid()) + " " + (boot.empty() ? "?" : boot) + " " +
         std::to_string(pid_namespace.st_ino);
}

std::string system_error(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

}  // namespace

std::string process_label(const RankLayout& layout, int process) {
  const int first = layout.first_rank(process);
  const int count = layout.ranks_of(process);
  return "process " + std::to_string(process) + " (" +
         (count == 1 ? "rank " + std::to_string(first)
                     : "ranks " + std::to_string(first) + "-" + std::to_string(first + count - 1)) +
         ")";
}

PeerWatch::PeerWatch(Bootstrap& bootstrap) : self_(bootstrap.process()) {
  bootstrap.put(kIdentityKey, identity());
}

PeerWatch::~PeerWatch() {
  stop();
  for (Peer& peer : peers_) {
    if (peer.pidfd >= 0) ::close(peer.pidfd);
  }
}

void PeerWatch::start(Bootstrap& bootstrap, std::function<void(int process)> lost) {
  const std::string mine = identity();
  const std::string my_place = mine.substr(mine.find(' '));
  const int processes = bootstrap.layout().processes();
  peers_.resize(static_cast<std::size_t>(processes));
  std::vector<pollfd> watched;
  std::vector<int> watched_process;
  for (int p = 0; p < processes; ++p) {
    if (p == self_) continue;
    const std::string theirs = bootstrap.get(p, kIdentityKey);
    const std::size_t space = theirs.find(' ');
    if (space == std::string::npos) continue;
    Peer& peer = peers_[static_cast<std::size_t>(p)];
    peer.pid = static_cast<pid_t>(std::stol(theirs.substr(0, space)));
    peer.same_machine = theirs.substr(space) == my_place;
    if (!peer.same_machine) continue;
    // The peers are the launcher's children, which it does not reap before the job ends: the pid
    // is not reused meanwhile, and a peer already gone gives a pidfd that is readable at once.
    peer.pidfd = static_cast<int>(::syscall(SYS_pidfd_open, peer.pid, 0));
    if (peer.pidfd < 0) {
      // A kernel before 5.3: the launcher alone sees the peer go.
      if (errno == ENOSYS) continue;
      throw Error(system_error("pidfd_open of process " + std::to_string(p) + " (pid " +
                               std::to_string(peer.pid) + ")"));
    }
    watched.push_back(pollfd{peer.pidfd, POLLIN, 0});
    watched_process.push_back(p);
  }
  if (watched.empty()) return;
  stop_fd_ = ::eventfd(0, EFD_CLOEXEC);
  if (stop_fd_ < 0) throw Error(system_error("eventfd for the peer watch"));
  watched.push_back(pollfd{stop_fd_, POLLIN, 0});
  watcher_ = std::thread([watched, watched_process, lost = std::move(lost)]() mutable {
    io::DirectCalls direct;
    while (true) {
      if (::poll(watched.data(), watched.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (watched.back().revents != 0) return;  // stopped
      for (std::size_t i = 0; i + 1 < watched.size(); ++i) {
        if (watched[i].revents != 0) lost(watched_process[i]);
      }
    }
  });
}

void PeerWatch::stop() {
  if (!watcher_.joinable()) return;
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t wrote = ::write(stop_fd_, &one, sizeof one);
  watcher_.join();
  ::close(stop_fd_);
  stop_fd_ = -1;
}

bool PeerWatch::same_machine(int process) const {
  return process == self_ || peers_.at(static_cast<std::size_t>(process)).same_machine;
}

int PeerWatch::process_of_pid(pid_t pid) const {
  for (std::size_t p = 0; p < peers_.size(); ++p) {
    if (static_cast<int>(p) != self_ && peers_[p].same_machine && peers_[p].pid == pid) {
      return static_cast<int>(p);
    }
  }
  return -1;
}

}  // namespace weft::mpi
