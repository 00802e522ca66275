#include "weft/thread_dump.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "test_config.h"
#include "weft/scheduler.h"
#include "weft/sync.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft {
namespace {

struct Note : WaitNoteName {
  int value = 0;
};

// Where every thread of the test parks: its backtrace must name this function.
[[gnu::noinline]] void park_in_dump_test(Event& release, const Note& note) {
  const void* previous = this_thread::set_wait_note(&note);
  release.wait();
  this_thread::set_wait_note(previous);
  asm volatile("" ::: "memory");  // not a tail call: the frame stays while the thread waits
}

// Polls the snapshot until `count` threads are parked (they park in whatever order and at
// whatever speed the scheduler runs them; no time is assumed), then takes one with backtraces.
std::vector<ThreadSnapshot> when_parked(std::size_t count) {
  for (;;) {
    const std::vector<ThreadSnapshot> threads = snapshot_threads(false);
    const auto parked = std::count_if(threads.begin(), threads.end(), [](const ThreadSnapshot& t) {
      return t.state == ThreadSnapshot::State::parked;
    });
    if (static_cast<std::size_t>(parked) >= count) return snapshot_threads(true);
    this_thread::yield();
  }
}

TEST(ThreadDump, ThousandParkedThreadsEachWithItsBacktrace) {
  constexpr int kThreads = 1000;
  Scheduler scheduler(testing::two_vps());
  Event release;
  Note note;
  note.name = "park_in_dump_test";
  note.size = sizeof("park_in_dump_test") - 1;
  std::vector<Thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    ThreadAttr attr;
    attr.rank = i;
    threads.push_back(spawn(attr, [&] { park_in_dump_test(release, note); }));
  }
  const std::vector<ThreadSnapshot> snapshot = when_parked(kThreads);
  const std::string text = format_threads(snapshot, [](const ThreadSnapshot& t) {
    return std::string(static_cast<const WaitNoteName*>(t.wait_note)->name);
  });
  release.set();
  for (Thread& thread : threads) thread.join();

  ASSERT_EQ(snapshot.size(), static_cast<std::size_t>(kThreads));
  std::vector<bool> seen(kThreads, false);
  for (const ThreadSnapshot& t : snapshot) {
    ASSERT_GE(t.rank, 0);
    ASSERT_LT(t.rank, kThreads);
    seen[static_cast<std::size_t>(t.rank)] = true;
    EXPECT_EQ(t.state, ThreadSnapshot::State::parked);
    EXPECT_EQ(t.wait_note, &note);
    EXPECT_GE(t.core, 0);
    const bool named = std::any_of(
        t.backtrace.begin(), t.backtrace.end(),
        [](const std::string& f) { return f.find("park_in_dump_test") != std::string::npos; });
    EXPECT_TRUE(named) << "thread " << t.id << "'s backtrace lacks park_in_dump_test";
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](bool s) { return s; }));
  // Every thread in the text, each with where it waits and its frames.
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_NE(text.find("(user, rank " + std::to_string(i) + ") parked"), std::string::npos) << i;
  }
  std::size_t waits = 0;
  for (std::size_t at = text.find("waits in park_in_dump_test"); at != std::string::npos;
       at = text.find("waits in park_in_dump_test", at + 1)) {
    ++waits;
  }
  EXPECT_EQ(waits, static_cast<std::size_t>(kThreads));
}

TEST(ThreadDump, RunningThreadIsListedWithoutFrames) {
  Scheduler scheduler(testing::two_vps());
  std::vector<ThreadSnapshot> seen;
  spawn(ThreadAttr{}, [&] { seen = snapshot_threads(true); }).join();
  ASSERT_EQ(seen.size(), 1U);
  EXPECT_EQ(seen[0].state, ThreadSnapshot::State::running);
  EXPECT_TRUE(seen[0].backtrace.empty());
}

}  // namespace
}  // namespace weft
