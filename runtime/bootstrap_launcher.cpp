// The process's end of weftrun's exchange (weftrun -p): a Unix socket that weftrun serves.
#include <sys/socket.h>
#include <sys/un.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <thread>
#include <utility>

#include "bootstrap_connect.h"
#include "bootstrap_protocol.h"
#include "unique_fd.h"
#include "weft/error.h"

namespace weft::bootstrap {
namespace {

std::string take_variable(std::string_view name) {
  const std::string key(name);
  const char* value = std::getenv(key.c_str());
  if (value == nullptr) {
    throw Error(key + " is not set; weftrun -p sets it together with " +
                std::string(kSocketVariable));
  }
  std::string text = value;
  ::unsetenv(key.c_str());
  return text;
}

int take_number(std::string_view name, int min, int max) {
  const std::string text = take_variable(name);
  int value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    throw Error(std::string(name) + " is '" + text + "'; expected an integer from " +
                std::to_string(min) + " to " + std::to_string(max));
  }
  return value;
}

class LauncherBootstrap final : public Bootstrap {
 public:
  LauncherBootstrap(UniqueFd socket, std::string path, int process, RankLayout layout)
      : socket_(std::move(socket)), path_(std::move(path)), process_(process), layout_(layout) {}

  int process() const override { return process_; }
  const RankLayout& layout() const override { return layout_; }

  void hello(std::string_view token) {
    send(hello_frame(token, process_), "hello");
    const Frame reply = receive("hello");
    if (reply.kind != FrameKind::welcome) unexpected(reply, "welcome", "hello");
    PayloadReader reader(reply.payload, "welcome frame");
    const std::uint32_t processes = reader.number();
    reader.finish();
    if (processes != static_cast<std::uint32_t>(layout_.processes())) {
      throw Error(where() + ": weftrun runs " + std::to_string(processes) + " processes but " +
                  std::string(kProcessesVariable) + " says " + std::to_string(layout_.processes()));
    }
  }

  void put(std::string_view key, std::string_view value) override {
    send(PayloadWriter().text(key).text(value).frame(FrameKind::put), "put");
  }

  void fence() override {
    ++fences_;
    const std::string what = "fence " + std::to_string(fences_);
    send(PayloadWriter().frame(FrameKind::fence), what);
    const Frame reply = receive(what);
    if (reply.kind != FrameKind::fence_done) unexpected(reply, "fence_done", what);
    for (Entry& entry : read_fence_done(reply)) {
      if (entry.process < 0 || entry.process >= layout_.processes()) {
        throw Error(where() + ": garbled fence_done frame: an entry of process " +
                    std::to_string(entry.process) + "; expected 0.." +
                    std::to_string(layout_.processes() - 1));
      }
      values_[{entry.process, std::move(entry.key)}] = std::move(entry.value);
    }
  }

  std::string get(int process, std::string_view key) override {
    auto found = values_.find({process, std::string(key)});
    if (found == values_.end()) {
      throw Error("Bootstrap::get: process " + std::to_string(process) + " put nothing under '" +
                  std::string(key) + "' before fence " + std::to_string(fences_) +
                  " (processes 0.." + std::to_string(layout_.processes() - 1) + ")");
    }
    return found->second;
  }

 private:
  std::string where() const {
    return "bootstrap of process " + std::to_string(process_) + " (weftrun's socket '" + path_ +
           "')";
  }

  void send(const std::string& frame, std::string_view step) {
    std::size_t sent = 0;
    while (sent < frame.size()) {
      // MSG_NOSIGNAL: a weftrun that has gone is an error to report, not a SIGPIPE.
      const ssize_t n =
          ::send(socket_.get(), frame.data() + sent, frame.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        throw Error(where() + ": cannot send the " + std::string(step) +
                    " frame: " + std::strerror(errno) + " (weftrun has ended the job?)");
      }
      sent += static_cast<std::size_t>(n);
    }
  }

  Frame receive(std::string_view step) {
    while (true) {
      std::optional<Frame> frame;
      try {
        frame = take_frame(buffer_);
      } catch (const Error& error) {
        throw Error(where() + ", answer to " + std::string(step) + ": " + error.what());
      }
      if (frame) {
        if (frame->kind == FrameKind::failure) {
          PayloadReader reader(frame->payload, "failure frame");
          // Most likely another process has ended, perhaps the job on purpose (exit(7) from a
          // thread, MPI_Abort): weftrun gives the job the status of the first process it finds
          // ended, so this consequence waits a moment before it ends its own, as a failed send
          // does (mpi/pt2pt/p2p.cpp; Exit.* of process_life_test with -p 2 ended with 2, not 7).
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          throw Error(where() + ": weftrun refused " + std::string(step) + ": " + reader.text());
        }
        return std::move(*frame);
      }
      char chunk[4096];
      const ssize_t n = ::recv(socket_.get(), chunk, sizeof chunk, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        throw Error(where() + ": cannot receive the answer to " + std::string(step) + ": " +
                    std::strerror(errno));
      }
      if (n == 0) {
        throw Error(where() + ": weftrun closed the exchange during " + std::string(step) +
                    (buffer_.empty() ? "" : ", in the middle of a frame") +
                    " (the job is ending: another process failed?)");
      }
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  [[noreturn]] void unexpected(const Frame& frame, std::string_view wanted,
                               std::string_view step) const {
    throw Error(where() + ": garbled exchange: a " + std::string(to_string(frame.kind)) +
                " frame answered " + std::string(step) + "; expected " + std::string(wanted));
  }

  UniqueFd socket_;
  std::string path_;
  int process_;
  RankLayout layout_;
  int fences_ = 0;
  std::string buffer_;  // received bytes not yet taken as a frame
  std::map<std::pair<int, std::string>, std::string> values_;
};

UniqueFd connect_socket(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof address.sun_path) {
    throw Error(std::string(kSocketVariable) + " is '" + path +
                "'; expected a socket path of 1 to " + std::to_string(sizeof address.sun_path - 1) +
                " bytes");
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  UniqueFd socket(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!socket)
    throw Error(std::string("bootstrap: socket(AF_UNIX) failed: ") + std::strerror(errno));
  int result = 0;
  do {
    result = ::connect(socket.get(), reinterpret_cast<const sockaddr*>(&address), sizeof address);
  } while (result != 0 && errno == EINTR);
  if (result != 0) {
    throw Error("bootstrap: cannot reach weftrun's socket '" + path + "' (" +
                std::string(kSocketVariable) + "): " + std::strerror(errno) +
                "; expected the socket of a running weftrun -p that started this process");
  }
  return socket;
}

}  // namespace

std::unique_ptr<Bootstrap> connect_launcher(int ranks) {
  const std::string path = take_variable(kSocketVariable);
  const std::string token = take_variable(kTokenVariable);
  const int processes = take_number(kProcessesVariable, 1, ranks);
  const int process = take_number(kProcessVariable, 0, processes - 1);
  auto bootstrap = std::make_unique<LauncherBootstrap>(connect_socket(path), path, process,
                                                       RankLayout(ranks, processes));
  bootstrap->hello(token);
  return bootstrap;
}

}  // namespace weft::bootstrap
