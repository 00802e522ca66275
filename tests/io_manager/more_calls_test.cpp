// The vectored, message and signal-mask variants of the interposed calls (readv, writev,
// recvfrom, sendto, recvmsg, sendmsg, recvmmsg, sendmmsg, accept4, splice, ppoll, pselect,
// epoll_pwait) and the checked ones of _FORTIFY_SOURCE (__read_chk, __poll_chk): on one core, a
// user thread blocked in one of them leaves the core to the thread that unblocks it.
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "io_test_util.h"
#include "weft/io.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

// What a program built with _FORTIFY_SOURCE calls when a buffer's size is known but the length
// is not; declared here since this test is not built with _FORTIFY_SOURCE.
extern "C" ssize_t __read_chk(int fd, void* buffer, size_t count, size_t buffer_length);
extern "C" int __poll_chk(pollfd* fds, nfds_t count, int timeout_ms, size_t fds_length);

namespace weft {
namespace {

using testing::Descriptors;
using testing::finishes;
using testing::io_config;
using testing::Listener;
using testing::ReadinessPipes;
using Clock = std::chrono::steady_clock;

class MoreCalls : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(Modes, MoreCalls, ::testing::ValuesIn(testing::io_modes()),
                         [](const auto& info) { return info.param; });

// `waiter` blocks in a call until `unblock` runs in another user thread of the same core, which
// first yields while the waiter is inside its call; `rescue` frees a waiter that held the core.
void on_one_core(const std::function<void()>& waiter, const std::function<void()>& unblock,
                 const std::function<void()>& rescue) {
  std::atomic<bool> inside{false};
  std::atomic<bool> done{false};
  std::atomic<int> yields_while_inside{0};
  Thread first = spawn([&] {
    inside.store(true);
    waiter();
    inside.store(false);
    done.store(true);
  });
  Thread second = spawn([&] {
    // A caller that held the core may be done before this thread first runs.
    while (!inside.load() && !done.load()) this_thread::yield();
    for (int i = 0; i < 50; ++i) {
      if (inside.load()) yields_while_inside.fetch_add(1);
      this_thread::yield();
    }
    unblock();
  });
  const bool finished = finishes([&] { return done.load(); }, rescue);
  first.join();
  second.join();
  EXPECT_TRUE(finished) << "the call held the only core";
  EXPECT_GT(yields_while_inside.load(), 0);
}

TEST_P(MoreCalls, ReadvAndWritevOnAPipe) {
  Descriptors descriptors;
  int fds[2];
  descriptors.pipe(fds);
  Scheduler scheduler(io_config(GetParam(), 1));
  char head[3] = {};
  char tail[4] = {};
  ssize_t got = 0;
  on_one_core(
      [&] {
        iovec pieces[2] = {{head, sizeof head}, {tail, sizeof tail}};
        got = ::readv(fds[0], pieces, 2);
      },
      [&] {
        char first[] = "wef";
        char second[] = "tio!";
        iovec pieces[2] = {{first, 3}, {second, 4}};
        EXPECT_EQ(::writev(fds[1], pieces, 2), 7);
      },
      [&] { [[maybe_unused]] auto n = ::write(fds[1], "rescue!", 7); });
  EXPECT_EQ(got, 7);
  EXPECT_EQ(std::string(head, 3), "wef");
  EXPECT_EQ(std::string(tail, 4), "tio!");
}

TEST_P(MoreCalls, RecvfromAndSendtoOnDatagrams) {
  Descriptors descriptors;
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, fds), 0);
  descriptors.adopt(fds[0]);
  descriptors.adopt(fds[1]);
  Scheduler scheduler(io_config(GetParam(), 1));
  char buffer[16] = {};
  ssize_t got = 0;
  sockaddr_un from{};
  socklen_t from_length = sizeof from;
  on_one_core(
      [&] {
        got = ::recvfrom(fds[0], buffer, sizeof buffer, 0, reinterpret_cast<sockaddr*>(&from),
                         &from_length);
      },
      [&] { EXPECT_EQ(::sendto(fds[1], "datagram", 8, 0, nullptr, 0), 8); },
      [&] { [[maybe_unused]] auto n = ::send(fds[1], "x", 1, 0); });
  EXPECT_EQ(got, 8);
  EXPECT_EQ(std::string(buffer, 8), "datagram");
  EXPECT_LE(from_length, sizeof from);
}

// recvmmsg waits until every slot is filled (one with MSG_WAITFORONE) and sendmmsg until every
// message is queued, leaving the core to the thread that sends or drains meanwhile.
TEST_P(MoreCalls, RecvmmsgAndSendmmsgOnDatagrams) {
  Descriptors descriptors;
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, fds), 0);
  descriptors.adopt(fds[0]);
  descriptors.adopt(fds[1]);
  Scheduler scheduler(io_config(GetParam(), 1));
  char buffers[3][8] = {};
  iovec vectors[3];
  mmsghdr messages[3] = {};
  for (int i = 0; i < 3; ++i) {
    vectors[i] = {buffers[i], sizeof buffers[i]};
    messages[i].msg_hdr.msg_iov = &vectors[i];
    messages[i].msg_hdr.msg_iovlen = 1;
  }
  const auto rescue = [&] {
    for (int i = 0; i < 3; ++i) [[maybe_unused]] auto n = ::send(fds[1], "!", 1, 0);
  };
  int got = 0;
  on_one_core([&] { got = ::recvmmsg(fds[0], messages, 3, 0, nullptr); },
              [&] {
                EXPECT_EQ(::send(fds[1], "one", 3, 0), 3);
                for (int i = 0; i < 20; ++i) this_thread::yield();
                EXPECT_EQ(::send(fds[1], "two", 3, 0), 3);
                EXPECT_EQ(::send(fds[1], "three", 5, 0), 5);
              },
              rescue);
  EXPECT_EQ(got, 3);
  EXPECT_EQ(std::string(buffers[0], messages[0].msg_len), "one");
  EXPECT_EQ(std::string(buffers[2], messages[2].msg_len), "three");

  on_one_core([&] { got = ::recvmmsg(fds[0], messages, 3, MSG_WAITFORONE, nullptr); },
              [&] { EXPECT_EQ(::send(fds[1], "four", 4, 0), 4); }, rescue);
  EXPECT_EQ(got, 1);
  EXPECT_EQ(std::string(buffers[0], messages[0].msg_len), "four");

  Thread timed = spawn([&] {
    timespec five_ms{0, 5'000'000};
    errno = 0;
    EXPECT_EQ(::recvmmsg(fds[0], messages, 3, 0, &five_ms), -1);
    EXPECT_EQ(errno, EAGAIN);
  });
  timed.join();

  // The receiver's queue full: sendmmsg waits for room, which the other thread makes.
  while (::send(fds[1], "fill", 4, MSG_DONTWAIT) == 4) {
  }
  char payload[2][4] = {{'a', 'b', 'c', 'd'}, {'e', 'f', 'g', 'h'}};
  iovec out[2] = {{payload[0], 4}, {payload[1], 4}};
  mmsghdr outgoing[2] = {};
  for (int i = 0; i < 2; ++i) {
    outgoing[i].msg_hdr.msg_iov = &out[i];
    outgoing[i].msg_hdr.msg_iovlen = 1;
  }
  on_one_core([&] { got = ::sendmmsg(fds[1], outgoing, 2, 0); },
              [&] {
                char drain[8];
                while (::recv(fds[0], drain, sizeof drain, MSG_DONTWAIT) > 0) {
                }
              },
              [&] {
                char drain[8];
                while (::recv(fds[0], drain, sizeof drain, MSG_DONTWAIT) > 0) {
                }
              });
  EXPECT_EQ(got, 2);
  EXPECT_EQ(outgoing[0].msg_len, 4u);
  EXPECT_EQ(outgoing[1].msg_len, 4u);
}

// splice waits for data at its input, then for room at its output, leaving the core meanwhile.
TEST_P(MoreCalls, SpliceWaitsForItsInputAndItsOutput) {
  Descriptors descriptors;
  int from[2];
  int to[2];
  descriptors.pipe(from);
  descriptors.socketpair(to);
  Scheduler scheduler(io_config(GetParam(), 1));
  ssize_t moved = 0;
  on_one_core([&] { moved = ::splice(from[0], nullptr, to[0], nullptr, 64, 0); },
              [&] { EXPECT_EQ(::write(from[1], "spliced", 7), 7); },
              [&] { [[maybe_unused]] auto n = ::write(from[1], "!", 1); });
  EXPECT_EQ(moved, 7);
  char buffer[8] = {};
  EXPECT_EQ(::read(to[1], buffer, sizeof buffer), 7);
  EXPECT_EQ(std::string(buffer, 7), "spliced");

  // The output full: the splice waits until the other thread drains it.
  const int fill = ::fcntl(to[0], F_GETFL);
  ASSERT_EQ(::fcntl(to[0], F_SETFL, fill | O_NONBLOCK), 0);
  const std::vector<char> block(4096, 'f');
  while (::write(to[0], block.data(), block.size()) > 0) {
  }
  ASSERT_EQ(::fcntl(to[0], F_SETFL, fill), 0);
  EXPECT_EQ(::write(from[1], "more", 4), 4);
  const auto drain = [&] {
    std::vector<char> sink(1 << 16);
    while (::recv(to[1], sink.data(), sink.size(), MSG_DONTWAIT) > 0) {
    }
  };
  on_one_core([&] { moved = ::splice(from[0], nullptr, to[0], nullptr, 64, 0); }, drain, drain);
  EXPECT_EQ(moved, 4);
}

// A message larger than the socket's buffer, with a descriptor passed along: sendmsg must queue
// it piece by piece while the receiver, on the same core, drains it.
TEST_P(MoreCalls, SendmsgLargerThanTheBufferAndRecvmsgWithADescriptor) {
  Descriptors descriptors;
  int fds[2];
  descriptors.socketpair(fds);
  int passed[2];
  descriptors.pipe(passed);
  const int small = 4096;
  ASSERT_EQ(::setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
  constexpr std::size_t kPiece = 96 * 1024;
  std::vector<char> pieces[3] = {std::vector<char>(kPiece, 'a'), std::vector<char>(kPiece, 'b'),
                                 std::vector<char>(kPiece, 'c')};
  Scheduler scheduler(io_config(GetParam(), 1));
  ssize_t sent = 0;
  std::vector<char> received;
  int fd_received = -1;
  on_one_core(
      [&] {
        iovec vector[3] = {
            {pieces[0].data(), kPiece}, {pieces[1].data(), kPiece}, {pieces[2].data(), kPiece}};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
        msghdr message{};
        message.msg_iov = vector;
        message.msg_iovlen = 3;
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        cmsghdr* header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(header), &passed[1], sizeof(int));
        sent = ::sendmsg(fds[0], &message, 0);
      },
      [&] {
        std::vector<char> buffer(8192);
        while (received.size() < 3 * kPiece) {
          alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
          iovec vector{buffer.data(), buffer.size()};
          msghdr message{};
          message.msg_iov = &vector;
          message.msg_iovlen = 1;
          message.msg_control = control;
          message.msg_controllen = sizeof control;
          const ssize_t got = ::recvmsg(fds[1], &message, 0);
          if (got <= 0) break;
          for (cmsghdr* h = CMSG_FIRSTHDR(&message); h != nullptr; h = CMSG_NXTHDR(&message, h)) {
            if (h->cmsg_level == SOL_SOCKET && h->cmsg_type == SCM_RIGHTS) {
              std::memcpy(&fd_received, CMSG_DATA(h), sizeof(int));
            }
          }
          received.insert(received.end(), buffer.begin(), buffer.begin() + got);
        }
      },
      [&] { ::shutdown(fds[1], SHUT_RDWR); });
  EXPECT_EQ(sent, static_cast<ssize_t>(3 * kPiece));
  ASSERT_EQ(received.size(), 3 * kPiece);
  for (std::size_t i = 0; i < received.size(); ++i) {
    if (received[i] != "abc"[i / kPiece]) {
      ADD_FAILURE() << "byte " << i << " is " << received[i];
      break;
    }
  }
  ASSERT_GE(fd_received, 0);
  descriptors.adopt(fd_received);
  EXPECT_EQ(::write(fd_received, "p", 1), 1);
  char byte = 0;
  EXPECT_EQ(::read(passed[0], &byte, 1), 1);
  EXPECT_EQ(byte, 'p');
}

TEST_P(MoreCalls, Accept4AppliesItsFlags) {
  Descriptors descriptors;
  const Listener listening(descriptors,
                           "weft-io-accept4-" + std::to_string(::getpid()) + "-" + GetParam());
  ASSERT_GE(listening.fd, 0);
  ASSERT_FALSE(HasFailure()) << "the listening socket could not be bound";
  const int listener = listening.fd;
  Scheduler scheduler(io_config(GetParam(), 1));
  int accepted = -1;
  int client = -1;
  on_one_core(
      [&] { accepted = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK); },
      [&] {
        client = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        EXPECT_EQ(listening.connect(client), 0);
      },
      [] {});
  ASSERT_GE(accepted, 0);
  descriptors.adopt(accepted);
  descriptors.adopt(client);
  EXPECT_NE(::fcntl(accepted, F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_NE(::fcntl(accepted, F_GETFL) & O_NONBLOCK, 0);
}

TEST_P(MoreCalls, PpollPselectAndEpollPwaitTimeOutNeverEarlyAndSeeReadiness) {
  Descriptors descriptors;
  const ReadinessPipes pipes(descriptors);
  const int(&quiet)[2] = pipes.quiet;
  const int(&busy)[2] = pipes.busy;
  const int epoll = pipes.epoll;
  Scheduler scheduler(io_config(GetParam(), 1));
  std::atomic<int> early{0};
  Thread timeouts = spawn([&] {
    const timespec five_ms{0, 5'000'000};
    auto start = Clock::now();
    pollfd entry{quiet[0], POLLIN, 0};
    EXPECT_EQ(::ppoll(&entry, 1, &five_ms, nullptr), 0);
    if (Clock::now() - start < std::chrono::milliseconds(5)) early.fetch_add(1);

    start = Clock::now();
    fd_set read;
    FD_ZERO(&read);
    FD_SET(quiet[0], &read);
    EXPECT_EQ(::pselect(quiet[0] + 1, &read, nullptr, nullptr, &five_ms, nullptr), 0);
    EXPECT_FALSE(FD_ISSET(quiet[0], &read));
    if (Clock::now() - start < std::chrono::milliseconds(5)) early.fetch_add(1);

    start = Clock::now();
    epoll_event event{};
    EXPECT_EQ(::epoll_pwait(epoll, &event, 1, 5, nullptr), 0);
    if (Clock::now() - start < std::chrono::milliseconds(5)) early.fetch_add(1);

    const timespec bad{0, 1'000'000'000};
    errno = 0;
    EXPECT_EQ(::ppoll(&entry, 1, &bad, nullptr), -1);
    EXPECT_EQ(errno, EINVAL);
  });
  timeouts.join();
  EXPECT_EQ(early.load(), 0);

  char byte = 0;
  on_one_core(
      [&] {
        pollfd entry{busy[0], POLLIN, 0};
        EXPECT_EQ(::ppoll(&entry, 1, nullptr, nullptr), 1);
        EXPECT_TRUE(entry.revents & POLLIN);
        EXPECT_EQ(::read(busy[0], &byte, 1), 1);
      },
      [&] { EXPECT_EQ(::write(busy[1], "1", 1), 1); },
      [&] { [[maybe_unused]] auto n = ::write(busy[1], "!", 1); });
  on_one_core(
      [&] {
        fd_set read;
        FD_ZERO(&read);
        FD_SET(busy[0], &read);
        EXPECT_EQ(::pselect(busy[0] + 1, &read, nullptr, nullptr, nullptr, nullptr), 1);
        EXPECT_TRUE(FD_ISSET(busy[0], &read));
        EXPECT_EQ(::read(busy[0], &byte, 1), 1);
      },
      [&] { EXPECT_EQ(::write(busy[1], "2", 1), 1); },
      [&] { [[maybe_unused]] auto n = ::write(busy[1], "!", 1); });
  on_one_core(
      [&] {
        epoll_event event{};
        EXPECT_EQ(::epoll_pwait(epoll, &event, 1, -1, nullptr), 1);
        EXPECT_EQ(event.data.fd, busy[0]);
        EXPECT_EQ(::read(busy[0], &byte, 1), 1);
      },
      [&] { EXPECT_EQ(::write(busy[1], "3", 1), 1); },
      [&] { [[maybe_unused]] auto n = ::write(busy[1], "!", 1); });
  EXPECT_EQ(byte, '3');
}

// With _FORTIFY_SOURCE, read and poll may become __read_chk and __poll_chk, whose C library
// versions would block the core.
TEST_P(MoreCalls, FortifiedReadAndPollLeaveTheCore) {
  Descriptors descriptors;
  int fds[2];
  descriptors.pipe(fds);
  Scheduler scheduler(io_config(GetParam(), 1));
  char buffer[4] = {};
  ssize_t got = 0;
  int ready = 0;
  on_one_core(
      [&] {
        pollfd entry{fds[0], POLLIN, 0};
        ready = __poll_chk(&entry, 1, -1, sizeof entry);
        got = __read_chk(fds[0], buffer, 2, sizeof buffer);
      },
      [&] { EXPECT_EQ(::write(fds[1], "ok", 2), 2); },
      [&] { [[maybe_unused]] auto n = ::write(fds[1], "!!", 2); });
  EXPECT_EQ(ready, 1);
  EXPECT_EQ(got, 2);
  EXPECT_EQ(std::string(buffer, 2), "ok");
}

}  // namespace
}  // namespace weft
