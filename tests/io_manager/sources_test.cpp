// Event sources of the I/O manager: callbacks, removal, groups, and no lost wake-up under a
// storm of events from several kernel threads, in every mode.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "io_test_util.h"
#include "weft/error.h"
#include "weft/io.h"
#include "weft/scheduler.h"
#include "weft/sync.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

using testing::finishes;
using testing::io_config;

// An eventfd that closes itself.
class EventFd {
 public:
  explicit EventFd(int flags = EFD_CLOEXEC) : fd_(::eventfd(0, flags)) {}
  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;
  ~EventFd() { ::close(fd_); }
  int fd() const { return fd_; }
  void add(std::uint64_t value) const {
    [[maybe_unused]] const ssize_t n = ::write(fd_, &value, sizeof value);
  }
  // Non-blocking take of the count (the descriptor must be EFD_NONBLOCK).
  std::uint64_t take() const {
    std::uint64_t value = 0;
    return ::read(fd_, &value, sizeof value) == sizeof value ? value : 0;
  }

 private:
  int fd_;
};

class Sources : public ::testing::TestWithParam<std::string> {};

INSTANTIATE_TEST_SUITE_P(Modes, Sources, ::testing::ValuesIn(testing::io_modes()),
                         [](const auto& info) { return info.param; });

// Several kernel threads write to eventfds on which user threads block in read(): every event
// must wake its reader (a lost wake-up leaves a reader parked forever, caught by the watchdog).
TEST_P(Sources, NoLostWakeUpUnderAStormFromKernelThreads) {
  constexpr int kReaders = 6;
  constexpr int kWriters = 3;
  constexpr std::uint64_t kEventsPerReader = 600;
  std::vector<std::unique_ptr<EventFd>> fds;
  for (int i = 0; i < kReaders; ++i) fds.push_back(std::make_unique<EventFd>());
  Scheduler scheduler(io_config(GetParam(), 2));
  std::atomic<std::uint64_t> received{0};
  std::vector<Thread> readers;
  for (int r = 0; r < kReaders; ++r) {
    readers.push_back(spawn([&, r] {
      std::uint64_t mine = 0;
      while (mine < kEventsPerReader) {
        std::uint64_t count = 0;
        // A blocking eventfd: read() parks this user thread until a writer adds.
        if (::read(fds[r]->fd(), &count, sizeof count) != sizeof count) break;
        mine += count;
      }
      received.fetch_add(mine);
    }));
  }
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      // Each writer covers every reader; together they send kEventsPerReader to each.
      for (std::uint64_t e = 0; e < kEventsPerReader; ++e) {
        const int r = static_cast<int>((e * kWriters + w) % kReaders);
        if (e % kWriters == static_cast<std::uint64_t>(w)) {
          for (int x = 0; x < kReaders; ++x) fds[(r + x) % kReaders]->add(1);
        }
        if (e % 64 == 0) std::this_thread::yield();
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  // A reader whose wake-up was lost may not see new events either: nothing can unstick it, so
  // the test ends the process (a failure for ctest) rather than hang.
  const bool finished = finishes([&] { return received.load() >= kReaders * kEventsPerReader; },
                                 [&] {
                                   std::fprintf(stderr, "lost wake-up: %llu events received\n",
                                                static_cast<unsigned long long>(received.load()));
                                   std::abort();
                                 });
  for (Thread& reader : readers) reader.join();
  EXPECT_TRUE(finished) << "a reader was never woken: received " << received.load();
  EXPECT_EQ(received.load(), kReaders * kEventsPerReader);
}

// Sources fed by kernel threads keep firing while a user thread registers and removes others;
// a removed source's callback never runs after remove() returned, and no event of the
// permanent sources is lost.
TEST_P(Sources, RegisteredAndRemovedWhileOthersFire) {
  constexpr int kPermanent = 3;
  constexpr std::uint64_t kEvents = 2000;
  std::vector<std::unique_ptr<EventFd>> fds;
  for (int i = 0; i < kPermanent; ++i) fds.push_back(std::make_unique<EventFd>(EFD_NONBLOCK));
  EventFd churn_fd(EFD_NONBLOCK);
  Scheduler scheduler(io_config(GetParam(), 2));
  std::atomic<std::uint64_t> seen{0};
  std::vector<io::Source> permanent;
  for (int i = 0; i < kPermanent; ++i) {
    io::SourceSpec spec;
    spec.name = "permanent " + std::to_string(i);
    spec.fd = fds[i]->fd();
    spec.poll = [&, i] {
      const std::uint64_t got = fds[i]->take();
      seen.fetch_add(got);
      return got > 0;
    };
    permanent.emplace_back(std::move(spec));
  }
  std::atomic<bool> writers_done{false};
  std::atomic<int> calls_after_removal{0};
  std::atomic<int> churns{0};
  Thread churner = spawn([&] {
    while (!writers_done.load()) {
      auto removed = std::make_shared<std::atomic<bool>>(false);
      io::SourceSpec spec;
      spec.name = "churning";
      spec.fd = churn_fd.fd();
      spec.poll = [&, removed] {
        if (removed->load()) calls_after_removal.fetch_add(1);
        return churn_fd.take() > 0;
      };
      {
        io::Source source(std::move(spec));
        churn_fd.add(1);
        this_thread::yield();
        source.remove();
        removed->store(true);
      }
      churns.fetch_add(1);
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < kPermanent; ++w) {
    writers.emplace_back([&, w] {
      for (std::uint64_t e = 0; e < kEvents; ++e) {
        fds[w]->add(1);
        if (e % 32 == 0) std::this_thread::yield();
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  const bool finished = finishes([&] { return seen.load() == kPermanent * kEvents; }, [] {});
  writers_done.store(true);
  churner.join();
  permanent.clear();
  EXPECT_TRUE(finished) << "events seen: " << seen.load();
  EXPECT_EQ(seen.load(), kPermanent * kEvents);
  EXPECT_EQ(calls_after_removal.load(), 0);
  EXPECT_GT(churns.load(), 0);
}

// A user thread waits on an Event set by a source's callback: the completion wakes the waiter.
TEST_P(Sources, CallbackWakesAWaitingThread) {
  EventFd fd(EFD_NONBLOCK);
  Scheduler scheduler(io_config(GetParam(), 2));
  Event arrived(Event::Mode::automatic);
  io::SourceSpec spec;
  spec.name = "doorbell";
  spec.fd = fd.fd();
  spec.poll = [&] {
    if (fd.take() == 0) return false;
    arrived.set();
    return true;
  };
  io::Source source(std::move(spec));
  std::atomic<int> rounds{0};
  Thread waiter = spawn([&] {
    for (int i = 0; i < 100; ++i) {
      arrived.wait();
      rounds.fetch_add(1);
    }
  });
  std::thread ringer([&] {
    for (int i = 0; i < 100; ++i) {
      while (rounds.load() < i) std::this_thread::yield();
      fd.add(1);
    }
  });
  const bool finished = finishes([&] { return rounds.load() == 100; },
                                 [&] {
                                   for (int i = 0; i < 100; ++i) arrived.set();
                                 });
  ringer.join();
  waiter.join();
  EXPECT_TRUE(finished);
}

TEST(SourcesGroup, AGroupIsPolledOnceForItsMembers) {
  Scheduler scheduler(io_config("poll", 1));
  std::atomic<int> group_calls{0};
  std::atomic<int> member_calls{0};
  auto group = std::make_shared<io::Group>();
  group->poll_all = [&] {
    group_calls.fetch_add(1);
    return false;
  };
  std::vector<io::Source> members;
  for (int i = 0; i < 3; ++i) {
    io::SourceSpec spec;
    spec.name = "member";
    spec.group = group;
    spec.poll = [&] {
      member_calls.fetch_add(1);
      return false;
    };
    members.emplace_back(std::move(spec));
  }
  // Polling sources without a descriptor: the idle core and the timer run the group.
  const bool polled = finishes([&] { return group_calls.load() >= 10; }, [] {});
  members.clear();
  EXPECT_TRUE(polled);
  EXPECT_EQ(member_calls.load(), 0);
}

TEST(SourcesErrors, BadSpecificationsAreRefusedByName) {
  try {
    io::Source source(io::SourceSpec{});
    FAIL() << "a source without a scheduler was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no weft::Scheduler"), std::string::npos) << e.what();
  }
  Scheduler scheduler(io_config("auto", 1));
  io::SourceSpec empty;
  empty.name = "nothing";
  try {
    io::Source source(std::move(empty));
    FAIL() << "a source without poll was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'nothing' has an empty poll"), std::string::npos)
        << e.what();
  }
  io::SourceSpec lazy;
  lazy.name = "lazy";
  lazy.poll = [] { return false; };
  lazy.low_reactivity = true;
  try {
    io::Source source(std::move(lazy));
    FAIL() << "low reactivity without a descriptor was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("low_reactivity with fd = -1"), std::string::npos)
        << e.what();
  }
  try {
    io::wait_fd(-3, POLLIN);
    FAIL() << "a negative descriptor was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("weft::io::wait_fd: fd = -3"), std::string::npos)
        << e.what();
  }
}

TEST(SourcesLowReactivity, IsDetectedWhileCoresAreIdle) {
  EventFd fd(EFD_NONBLOCK);
  Scheduler scheduler(io_config("auto", 2));
  std::atomic<std::uint64_t> seen{0};
  io::SourceSpec spec;
  spec.name = "lazy";
  spec.fd = fd.fd();
  spec.low_reactivity = true;
  spec.poll = [&] {
    const std::uint64_t got = fd.take();
    seen.fetch_add(got);
    return got > 0;
  };
  io::Source source(std::move(spec));
  // Long after the idle cores stopped polling: the spare thread blocked on it.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  fd.add(5);
  const bool finished = finishes([&] { return seen.load() == 5; }, [] {});
  EXPECT_TRUE(finished);
  EXPECT_GT(io::stats().block_detections, 0u);
}

TEST(IoThreads, PollAndStopWithTheScheduler) {
  EventFd fd(EFD_NONBLOCK);
  Scheduler scheduler(io_config("poll", 2, {{"io.threads", "2"}}));
  std::atomic<std::uint64_t> seen{0};
  io::SourceSpec spec;
  spec.name = "polled";
  spec.fd = fd.fd();
  spec.poll = [&] {
    const std::uint64_t got = fd.take();
    seen.fetch_add(got);
    return got > 0;
  };
  io::Source source(std::move(spec));
  fd.add(3);
  const bool finished = finishes([&] { return seen.load() == 3; }, [] {});
  EXPECT_TRUE(finished);
  EXPECT_GE(scheduler.live_threads(), 2u);
}

}  // namespace
}  // namespace weft
