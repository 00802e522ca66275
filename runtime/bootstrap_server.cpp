#include "weft/bootstrap_server.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>
#include <utility>

#include "bootstrap_protocol.h"
#include "unique_fd.h"
#include "weft/error.h"

namespace weft {
namespace {

using bootstrap::Entry;
using bootstrap::Frame;
using bootstrap::FrameKind;
using bootstrap::PayloadReader;

std::string system_error(const std::string& what) {
  return "weftrun's bootstrap: " + what + ": " + std::strerror(errno);
}

std::string random_token() {
  unsigned char bytes[16];
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::getrandom(bytes + got, sizeof bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(system_error("getrandom"));
    got += static_cast<std::size_t>(n);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char byte : bytes) {
    token.push_back(kHex[byte >> 4]);
    token.push_back(kHex[byte & 15]);
  }
  return token;
}

// Compares in a time that does not depend on where the strings differ.
bool same_token(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (std::size_t i = 0; i < a.size(); ++i) difference |= a[i] ^ b[i];
  return difference == 0;
}

// The private directory and the socket file in it; removed by remove() or the destructor.
class SocketDirectory {
 public:
  SocketDirectory() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/weftrun-XXXXXX";
    // mkdtemp creates it with mode 0700: only this user can reach the socket.
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw Error(system_error("mkdtemp('" + pattern + "')"));
    }
    directory_ = pattern;
    socket_ = directory_ + "/bootstrap.sock";
  }
  ~SocketDirectory() { remove(); }
  SocketDirectory(const SocketDirectory&) = delete;
  SocketDirectory& operator=(const SocketDirectory&) = delete;

  const std::string& socket() const { return socket_; }
  void remove() {
    if (directory_.empty()) return;
    ::unlink(socket_.c_str());
    ::rmdir(directory_.c_str());
    directory_.clear();
  }

 private:
  std::string directory_;
  std::string socket_;
};

UniqueFd listen_on(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.size() >= sizeof address.sun_path) {
    throw Error("weftrun's bootstrap: the socket path '" + path + "' is " +
                std::to_string(path.size()) + " bytes long; expected at most " +
                std::to_string(sizeof address.sun_path - 1) +
                " (set TMPDIR to a shorter directory)");
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  UniqueFd socket(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!socket) throw Error(system_error("socket(AF_UNIX)"));
  if (::bind(socket.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    throw Error(system_error("bind('" + path + "')"));
  }
  if (::listen(socket.get(), SOMAXCONN) != 0) throw Error(system_error("listen"));
  return socket;
}

// One accepted connection: before its hello it belongs to no process.
struct Connection {
  UniqueFd fd;
  std::string buffer;  // received bytes not yet taken as a frame
  int process = -1;
};

}  // namespace

struct BootstrapServer::Impl {
  int processes;
  std::string token;
  SocketDirectory directory;
  UniqueFd listener;
  UniqueFd wake_read, wake_write;  // a byte here stops the thread
  std::thread thread;

  // Touched by the serving thread only.
  std::vector<Connection> connections;
  std::vector<bool> joined;    // the process said hello once
  std::vector<bool> at_fence;  // the process waits at the current fence
  std::vector<Entry> entries;  // every put so far, in order
  std::string departure;       // why a process left, once one has

  explicit Impl(int count) : processes(count), token(random_token()) {
    if (processes < 1) {
      throw Error("BootstrapServer: " + std::to_string(processes) +
                  " processes; expected at least 1");
    }
    listener = listen_on(directory.socket());
    int wake[2];
    if (::pipe2(wake, O_CLOEXEC) != 0) throw Error(system_error("pipe2"));
    wake_read = UniqueFd(wake[0]);
    wake_write = UniqueFd(wake[1]);
    joined.assign(processes, false);
    at_fence.assign(processes, false);
    // The thread starts with every signal blocked: signals sent to weftrun are for its main
    // thread, which forwards them to the job.
    sigset_t all, previous;
    sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, &previous);
    thread = std::thread([this] { serve(); });
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }

  ~Impl() {
    const char byte = 0;
    [[maybe_unused]] const ssize_t wrote = ::write(wake_write.get(), &byte, 1);
    thread.join();
  }

  void serve() {
    while (true) {
      std::vector<pollfd> fds = {{wake_read.get(), POLLIN, 0}, {listener.get(), POLLIN, 0}};
      for (const Connection& connection : connections)
        fds.push_back({connection.fd.get(), POLLIN, 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        return;
      }
      if (fds[0].revents != 0) return;
      if (fds[1].revents != 0) accept_all();
      for (std::size_t i = 2; i < fds.size(); ++i) {
        if (fds[i].revents != 0) receive(connections[i - 2]);
      }
      std::erase_if(connections, [](const Connection& connection) { return !connection.fd; });
      settle_fence();
    }
  }

  void accept_all() {
    while (true) {
      const int fd = ::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;  // EAGAIN: none left
      connections.push_back({UniqueFd(fd), {}, -1});
    }
  }

  static void send(Connection& connection, const std::string& frame) {
    std::size_t sent = 0;
    while (sent < frame.size() && connection.fd) {
      const ssize_t n =
          ::send(connection.fd.get(), frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return;  // the process is gone; its end of file comes next
      sent += static_cast<std::size_t>(n);
    }
  }

  std::string name(const Connection& connection) const {
    return connection.process < 0 ? std::string("a connection that has not said hello")
                                  : "process " + std::to_string(connection.process);
  }

  // Refuses `connection` with `message` and closes it; a process that had joined has left.
  void refuse(Connection& connection, const std::string& message) {
    send(connection, bootstrap::failure_frame(message));
    leave(connection, message);
  }

  void leave(Connection& connection, const std::string& why) {
    if (connection.process >= 0 && departure.empty()) {
      departure =
          "process " + std::to_string(connection.process) + " left the exchange (" + why + ")";
    }
    connection.fd.reset();
  }

  void receive(Connection& connection) {
    char chunk[4096];
    const ssize_t n = ::recv(connection.fd.get(), chunk, sizeof chunk, MSG_DONTWAIT);
    if (n < 0) {
      if (errno != EAGAIN && errno != EINTR) leave(connection, std::strerror(errno));
      return;
    }
    if (n == 0) {
      leave(connection, connection.buffer.empty() ? "its connection closed"
                                                  : "its connection closed inside a frame");
      return;
    }
    connection.buffer.append(chunk, static_cast<std::size_t>(n));
    try {
      while (connection.fd) {
        std::optional<Frame> frame = bootstrap::take_frame(connection.buffer);
        if (!frame) break;
        handle(connection, *frame);
      }
    } catch (const Error& error) {
      refuse(connection, name(connection) + " sent a " + error.what());
    }
  }

  void handle(Connection& connection, const Frame& frame) {
    if (connection.process < 0) {
      if (frame.kind != FrameKind::hello) {
        throw Error("garbled exchange: a " + std::string(bootstrap::to_string(frame.kind)) +
                    " frame before hello");
      }
      hello(connection, frame);
      return;
    }
    switch (frame.kind) {
      case FrameKind::put: {
        PayloadReader reader(frame.payload, "put frame");
        Entry entry{connection.process, reader.text(), reader.text()};
        reader.finish();
        entries.push_back(std::move(entry));
        return;
      }
      case FrameKind::fence:
        PayloadReader(frame.payload, "fence frame").finish();
        at_fence[connection.process] = true;
        return;
      default:
        throw Error("garbled exchange: a " + std::string(bootstrap::to_string(frame.kind)) +
                    " frame; expected put or fence");
    }
  }

  void hello(Connection& connection, const Frame& frame) {
    PayloadReader reader(frame.payload, "hello frame");
    const std::string offered = reader.text();
    const std::uint32_t process = reader.number();
    reader.finish();
    if (!same_token(offered, token)) {
      refuse(connection, "wrong token: this is not the job that started the process");
      return;
    }
    if (process >= static_cast<std::uint32_t>(processes)) {
      refuse(connection, "process " + std::to_string(process) + " does not exist; expected 0.." +
                             std::to_string(processes - 1));
      return;
    }
    if (joined[process]) {
      refuse(connection, "process " + std::to_string(process) + " has already joined");
      return;
    }
    joined[process] = true;
    connection.process = static_cast<int>(process);
    send(connection, bootstrap::PayloadWriter()
                         .number(static_cast<std::uint32_t>(processes))
                         .frame(FrameKind::welcome));
    // Every process is connected: nobody needs the socket file any more.
    if (std::find(joined.begin(), joined.end(), false) == joined.end()) directory.remove();
  }

  // Completes the fence once every process is there, or fails it once one has left.
  void settle_fence() {
    int waiting = 0;
    for (bool at : at_fence) waiting += at ? 1 : 0;
    if (waiting == 0) return;
    if (waiting == processes && departure.empty()) {
      const std::string done = bootstrap::fence_done_frame(entries);
      for (Connection& connection : connections) {
        if (connection.process >= 0) send(connection, done);
      }
      at_fence.assign(processes, false);
      return;
    }
    if (departure.empty()) return;
    const std::string failure = bootstrap::failure_frame(departure + ": the fence cannot complete");
    for (Connection& connection : connections) {
      if (connection.process >= 0 && at_fence[connection.process]) {
        send(connection, failure);
        at_fence[connection.process] = false;
      }
    }
  }
};

BootstrapServer::BootstrapServer(int processes) : impl_(std::make_unique<Impl>(processes)) {}

BootstrapServer::~BootstrapServer() = default;

std::vector<std::string> BootstrapServer::environment(int process) const {
  auto entry = [](std::string_view name, const std::string& value) {
    return std::string(name) + "=" + value;
  };
  return {entry(bootstrap::kSocketVariable, impl_->directory.socket()),
          entry(bootstrap::kTokenVariable, impl_->token),
          entry(bootstrap::kProcessVariable, std::to_string(process)),
          entry(bootstrap::kProcessesVariable, std::to_string(impl_->processes))};
}

const std::string& BootstrapServer::socket_path() const {
  return impl_->directory.socket();
}

}  // namespace weft
