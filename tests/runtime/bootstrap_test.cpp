// The exchange of weftrun -p, both ends in this process: BootstrapServer and connect_bootstrap,
// and each end facing a peer that misbehaves.
#include "weft/bootstrap.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap_protocol.h"
#include "error_text.h"
#include "weft/bootstrap_server.h"
#include "weft/error.h"

namespace weft {
namespace {

using testing::error_of;
using testing::expect_contains;

namespace fs = std::filesystem;

void set_environment(const std::vector<std::string>& entries) {
  for (const std::string& entry : entries) {
    const std::size_t equals = entry.find('=');
    ::setenv(entry.substr(0, equals).c_str(), entry.substr(equals + 1).c_str(), 1);
  }
}

std::unique_ptr<Bootstrap> join(const BootstrapServer& server, int process, int ranks) {
  set_environment(server.environment(process));
  return connect_bootstrap(ranks);
}

// A raw connection to a socket, for peers that do not follow the protocol.
class RawPeer {
 public:
  explicit RawPeer(const std::string& path) : fd_(::socket(AF_UNIX, SOCK_STREAM, 0)) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~RawPeer() { ::close(fd_); }
  bool connected() const { return connected_; }
  void send(const std::string& bytes) const {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  // Everything received until the peer closes.
  std::string receive_all() const {
    std::string all;
    char chunk[4096];
    ssize_t n = 0;
    while ((n = ::recv(fd_, chunk, sizeof chunk, 0)) > 0) all.append(chunk, n);
    return all;
  }

 private:
  int fd_;
  bool connected_ = false;
};

// The message of the failure frame that ends `bytes`.
std::string failure_message(std::string bytes) {
  std::optional<bootstrap::Frame> last;
  while (auto frame = bootstrap::take_frame(bytes)) last = std::move(frame);
  if (!last || last->kind != bootstrap::FrameKind::failure) return "no failure frame";
  return bootstrap::PayloadReader(last->payload, "failure frame").text();
}

class BootstrapTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name :
         {"PMIX_RANK", "WEFT_INTERNAL_BOOTSTRAP_SOCKET", "WEFT_INTERNAL_BOOTSTRAP_TOKEN",
          "WEFT_INTERNAL_BOOTSTRAP_PROCESS", "WEFT_INTERNAL_BOOTSTRAP_PROCESSES"}) {
      ::unsetenv(name);
    }
  }
};

TEST_F(BootstrapTest, NoJobWithoutLauncherOrPmix) {
  EXPECT_EQ(connect_bootstrap(4), nullptr);
  expect_contains(error_of([] { connect_bootstrap(0); }), "ranks = 0; expected at least 1");
}

TEST_F(BootstrapTest, ThreeProcessesExchange) {
  BootstrapServer server(3);
  std::vector<std::unique_ptr<Bootstrap>> processes;
  for (int process = 0; process < 3; ++process) processes.push_back(join(server, process, 7));
  for (int process = 0; process < 3; ++process) {
    ASSERT_NE(processes[process], nullptr);
    EXPECT_EQ(processes[process]->process(), process);
    EXPECT_EQ(processes[process]->layout().world_size(), 7);
    EXPECT_EQ(processes[process]->layout().ranks_of(process), process == 0 ? 3 : 2);
  }
  for (int round = 1; round <= 2; ++round) {
    std::vector<std::thread> threads;
    for (int process = 0; process < 3; ++process) {
      threads.emplace_back([&, process] {
        Bootstrap& me = *processes[process];
        // Bytes of every value, zeros included.
        me.put("address", std::string("\0", 1) + std::to_string(round * 10 + process));
        me.fence();
      });
    }
    for (std::thread& thread : threads) thread.join();
    for (int reader = 0; reader < 3; ++reader) {
      for (int writer = 0; writer < 3; ++writer) {
        EXPECT_EQ(processes[reader]->get(writer, "address"),
                  std::string("\0", 1) + std::to_string(round * 10 + writer));
      }
    }
  }
  expect_contains(error_of([&] { processes[0]->get(2, "missing"); }),
                  "process 2 put nothing under 'missing' before fence 2");
  // Everyone has joined: neither the socket nor its directory is left.
  EXPECT_FALSE(fs::exists(server.socket_path()));
  EXPECT_FALSE(fs::exists(fs::path(server.socket_path()).parent_path()));
}

TEST_F(BootstrapTest, DirectoryIsPrivateAndRemoved) {
  std::string directory;
  {
    BootstrapServer server(2);
    directory = fs::path(server.socket_path()).parent_path();
    struct stat status {};
    ASSERT_EQ(::stat(directory.c_str(), &status), 0);
    EXPECT_EQ(status.st_mode & 0777, 0700u);
    EXPECT_TRUE(fs::exists(server.socket_path()));
  }
  EXPECT_FALSE(fs::exists(directory));
}

TEST_F(BootstrapTest, EnvironmentNamesTheJob) {
  BootstrapServer server(2);
  const std::vector<std::string> environment = server.environment(1);
  ASSERT_EQ(environment.size(), 4u);
  EXPECT_EQ(environment[0], "WEFT_INTERNAL_BOOTSTRAP_SOCKET=" + server.socket_path());
  EXPECT_TRUE(environment[1].starts_with("WEFT_INTERNAL_BOOTSTRAP_TOKEN="));
  EXPECT_EQ(environment[1].size(), std::string("WEFT_INTERNAL_BOOTSTRAP_TOKEN=").size() + 32);
  EXPECT_EQ(environment[2], "WEFT_INTERNAL_BOOTSTRAP_PROCESS=1");
  EXPECT_EQ(environment[3], "WEFT_INTERNAL_BOOTSTRAP_PROCESSES=2");
  // A token per job.
  EXPECT_NE(BootstrapServer(2).environment(0)[1], environment[1]);
}

TEST_F(BootstrapTest, WrongTokenIsRefused) {
  BootstrapServer server(2);
  set_environment(server.environment(0));
  ::setenv("WEFT_INTERNAL_BOOTSTRAP_TOKEN", "not-the-token", 1);
  const std::string error = error_of([] { connect_bootstrap(2); });
  expect_contains(error, "bootstrap of process 0");
  expect_contains(error, "weftrun refused hello: wrong token");
}

TEST_F(BootstrapTest, SameProcessTwiceIsRefused) {
  BootstrapServer server(2);
  auto first = join(server, 1, 2);
  expect_contains(error_of([&] { join(server, 1, 2); }), "process 1 has already joined");
}

TEST_F(BootstrapTest, ProcessCountMustMatch) {
  BootstrapServer server(3);
  set_environment(server.environment(0));
  ::setenv("WEFT_INTERNAL_BOOTSTRAP_PROCESSES", "2", 1);
  expect_contains(error_of([] { connect_bootstrap(4); }),
                  "weftrun runs 3 processes but WEFT_INTERNAL_BOOTSTRAP_PROCESSES says 2");
}

TEST_F(BootstrapTest, BadVariablesAreNamed) {
  BootstrapServer server(2);
  set_environment(server.environment(0));
  ::setenv("WEFT_INTERNAL_BOOTSTRAP_PROCESS", "x", 1);
  expect_contains(error_of([] { connect_bootstrap(2); }),
                  "WEFT_INTERNAL_BOOTSTRAP_PROCESS is 'x'; expected an integer from 0 to 1");
  set_environment(server.environment(0));
  expect_contains(error_of([] { connect_bootstrap(1); }),
                  "WEFT_INTERNAL_BOOTSTRAP_PROCESSES is '2'; expected an integer from 1 to 1");
  set_environment(server.environment(0));
  ::unsetenv("WEFT_INTERNAL_BOOTSTRAP_TOKEN");
  expect_contains(error_of([] { connect_bootstrap(2); }),
                  "WEFT_INTERNAL_BOOTSTRAP_TOKEN is not set");
  ::unsetenv("WEFT_INTERNAL_BOOTSTRAP_SOCKET");
}

TEST_F(BootstrapTest, UnreachableSocket) {
  BootstrapServer server(2);
  set_environment(server.environment(0));
  ::setenv("WEFT_INTERNAL_BOOTSTRAP_SOCKET", "/nonexistent/weft/bootstrap.sock", 1);
  const std::string error = error_of([] { connect_bootstrap(2); });
  expect_contains(error, "cannot reach weftrun's socket '/nonexistent/weft/bootstrap.sock'");
  expect_contains(error, "No such file or directory");
}

TEST_F(BootstrapTest, PeerLeavingDuringAFenceFailsIt) {
  BootstrapServer server(2);
  auto staying = join(server, 0, 2);
  auto leaving = join(server, 1, 2);
  std::string error;
  std::thread fence([&] { error = error_of([&] { staying->fence(); }); });
  leaving.reset();
  fence.join();
  expect_contains(error,
                  "weftrun refused fence 1: process 1 left the exchange (its connection closed): "
                  "the fence cannot complete");
  // A later fence fails at once.
  expect_contains(error_of([&] { staying->fence(); }), "weftrun refused fence 2: process 1 left");
}

TEST_F(BootstrapTest, ServerRefusesGarbledFrames) {
  BootstrapServer server(2);
  {
    RawPeer peer(server.socket_path());
    ASSERT_TRUE(peer.connected());
    peer.send(std::string("\x05\0\0\0\x63hello", 10));
    expect_contains(failure_message(peer.receive_all()), "garbled frame: kind 99 is unknown");
  }
  {
    RawPeer peer(server.socket_path());
    peer.send(bootstrap::PayloadWriter().frame(bootstrap::FrameKind::fence));
    expect_contains(failure_message(peer.receive_all()), "a fence frame before hello");
  }
  {
    RawPeer peer(server.socket_path());
    peer.send(std::string("\xff\xff\xff\xff\x01", 5));
    expect_contains(failure_message(peer.receive_all()), "a hello frame of 4294967295 bytes");
  }
  {
    // A hello whose token length runs past the frame.
    RawPeer peer(server.socket_path());
    peer.send(bootstrap::PayloadWriter().number(1000).frame(bootstrap::FrameKind::hello));
    expect_contains(failure_message(peer.receive_all()),
                    "garbled hello frame: a string of 1000 bytes with only 0 left");
  }
  // Refused connections are no process of the job: both can still join and fence.
  auto first = join(server, 0, 2);
  auto second = join(server, 1, 2);
  std::thread fence([&] { first->fence(); });
  second->fence();
  fence.join();
}

// A fake weftrun answering hello with `reply`.
class FakeLauncher {
 public:
  explicit FakeLauncher(std::string reply) {
    char pattern[] = "/tmp/weft-fake-XXXXXX";
    directory_ = ::mkdtemp(pattern);
    path_ = directory_ + "/socket";
    listener_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path_.c_str(), sizeof address.sun_path - 1);
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(::listen(listener_, 1), 0);
    thread_ = std::thread([this, reply] {
      const int peer = ::accept(listener_, nullptr, nullptr);
      char chunk[4096];
      [[maybe_unused]] ssize_t n = ::recv(peer, chunk, sizeof chunk, 0);
      n = ::send(peer, reply.data(), reply.size(), MSG_NOSIGNAL);
      ::close(peer);
    });
  }
  ~FakeLauncher() {
    thread_.join();
    ::close(listener_);
    fs::remove_all(directory_);
  }
  void point_environment() const {
    ::setenv("WEFT_INTERNAL_BOOTSTRAP_SOCKET", path_.c_str(), 1);
    ::setenv("WEFT_INTERNAL_BOOTSTRAP_TOKEN", "00", 1);
    ::setenv("WEFT_INTERNAL_BOOTSTRAP_PROCESS", "0", 1);
    ::setenv("WEFT_INTERNAL_BOOTSTRAP_PROCESSES", "2", 1);
  }

 private:
  std::string directory_, path_;
  int listener_ = -1;
  std::thread thread_;
};

TEST_F(BootstrapTest, ClientRefusesGarbledReplies) {
  {
    FakeLauncher launcher(std::string("\0\0\0\0\xc8", 5));
    launcher.point_environment();
    expect_contains(error_of([] { connect_bootstrap(2); }), "garbled frame: kind 200 is unknown");
  }
  {
    FakeLauncher launcher(bootstrap::fence_done_frame({}));
    launcher.point_environment();
    expect_contains(error_of([] { connect_bootstrap(2); }),
                    "garbled exchange: a fence_done frame answered hello; expected welcome");
  }
  {
    // Half a frame, then the connection closes.
    FakeLauncher launcher(std::string("\x08\0\0\0\x02", 5));
    launcher.point_environment();
    expect_contains(error_of([] { connect_bootstrap(2); }),
                    "weftrun closed the exchange during hello, in the middle of a frame");
  }
  {
    FakeLauncher launcher(
        bootstrap::PayloadWriter().number(2).number(9).frame(bootstrap::FrameKind::welcome));
    launcher.point_environment();
    expect_contains(error_of([] { connect_bootstrap(2); }),
                    "garbled welcome frame: 4 unexpected bytes at its end");
  }
}

}  // namespace
}  // namespace weft
