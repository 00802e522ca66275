// A fixed number of one scheduling operation, for counting what it costs where a wall clock is
// meaningless (a loaded machine, callgrind): bench/sched_instructions runs it at two counts and
// divides the difference. The operations are those of yield_bench, spawn_join_bench and
// wakeup_bench, with free-thread variants of the wake-ups (the threads the wake rule concerns).
//
//   sched_ops <operation> <count>
//
// operations (one unit of <count> each):
//   yield_weft            a yield round trip between two weft threads pinned to VP 0 (2 switches)
//   yield_boost_context   a round trip of bare jump_fcontext (the floor of any user-level switch)
//   spawn_join_weft       spawn and join of an empty free thread, from a weft thread on VP 0
//   pingpong_free_weft    a round trip of automatic events between two free threads started on
//                         VP 0 (a ping-pong on one core)
//   wakeup_weft           a round trip of automatic events between threads pinned to VP 0 and 1
//   wakeup_free_weft      the same between free threads started on VP 0 and 1
// The scheduler has two VPs, as the benchmarks' has, but for the yields: one, so that no idle VP's
// search is counted with them.
#include <atomic>
#include <boost/context/detail/fcontext.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "pinning.h"
#include "weft/config.h"
#include "weft/scheduler.h"
#include "weft/sync.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace {

// Both threads are spawned from a thread of VP 0, which queues them at once: spawned from
// outside, the partner would yield alone (a yield that finds nothing to run) until the second
// spawn reached the VP's inbox, a number of yields that callgrind's thread scheduling changes
// from run to run.
void yield_weft(long count) {
  weft::spawn(weft::bench::pinned_to(0), [count] {
    std::atomic<bool> done{false};
    weft::Thread partner = weft::spawn(weft::bench::pinned_to(0), [&] {
      while (!done.load(std::memory_order_relaxed)) weft::this_thread::yield();
    });
    weft::Thread timed = weft::spawn(weft::bench::pinned_to(0), [&] {
      for (long i = 0; i < count; ++i) weft::this_thread::yield();
      done.store(true, std::memory_order_relaxed);
    });
    timed.join();
    partner.join();
  }).join();
}

void yield_boost_context(long count) {
  weft::bench::run_pinned(weft::bench::first_cpu(), [&] {
    namespace context = boost::context::detail;
    std::vector<char> stack(64 * 1024);
    context::fcontext_t partner = context::make_fcontext(
        stack.data() + stack.size(), stack.size(), [](context::transfer_t from) {
          for (;;) from = context::jump_fcontext(from.fctx, nullptr);
        });
    for (long i = 0; i < count; ++i) partner = context::jump_fcontext(partner, nullptr).fctx;
  });
}

void spawn_join_weft(long count) {
  weft::spawn(weft::bench::pinned_to(0), [&] {
    for (long i = 0; i < count; ++i) weft::spawn([] {}).join();
  }).join();
}

weft::ThreadAttr free_from(int vp) {
  weft::ThreadAttr attr;
  attr.placement = weft::Placement::free(vp);
  return attr;
}

// `count` round trips of automatic events between a driver and a responder.
void ping_pong(long count, const weft::ThreadAttr& driver, const weft::ThreadAttr& responder) {
  weft::Event ping{weft::Event::Mode::automatic};
  weft::Event pong{weft::Event::Mode::automatic};
  std::atomic<bool> stop{false};
  weft::Thread answering = weft::spawn(responder, [&] {
    for (;;) {
      ping.wait();
      if (stop.load(std::memory_order_relaxed)) return;
      pong.set();
    }
  });
  weft::Thread driving = weft::spawn(driver, [&] {
    for (long i = 0; i < count; ++i) {
      ping.set();
      pong.wait();
    }
    stop.store(true, std::memory_order_relaxed);
    ping.set();
  });
  driving.join();
  answering.join();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string operation = argc == 3 ? argv[1] : "";
  const long count = argc == 3 ? std::strtol(argv[2], nullptr, 10) : 0;
  weft::ConfigOverrides overrides;
  overrides.settings = {{"scheduler.vps", operation.starts_with("yield_") ? "1" : "2"}};
  weft::Scheduler scheduler(weft::Config::load(overrides));
  if (count <= 0) {
    std::fprintf(stderr, "usage: sched_ops <operation> <count > 0> (operations: see the source)\n");
    return 2;
  }
  if (operation == "yield_weft") {
    yield_weft(count);
  } else if (operation == "yield_boost_context") {
    yield_boost_context(count);
  } else if (operation == "spawn_join_weft") {
    spawn_join_weft(count);
  } else if (operation == "pingpong_free_weft") {
    ping_pong(count, free_from(0), free_from(0));
  } else if (operation == "wakeup_weft") {
    ping_pong(count, weft::bench::pinned_to(0), weft::bench::pinned_to(1));
  } else if (operation == "wakeup_free_weft") {
    ping_pong(count, free_from(0), free_from(1));
  } else {
    std::fprintf(stderr, "sched_ops: unknown operation '%s'\n", operation.c_str());
    return 2;
  }
  return 0;
}
