// Yield round trip between two threads sharing one core: one iteration is A -> B -> A, two
// switches. weft beside Boost.Fiber, bare Boost.Context (jump_fcontext is the floor of any
// user-level switch; boost::context::fiber adds its own bookkeeping) and kernel threads calling
// sched_yield (the kernel's figure). Everything runs on the same CPU.
//
// The timed loops run on threads other than the benchmark's, so the benchmarks use real time.
#include <sched.h>

#include <atomic>
#include <boost/context/detail/fcontext.hpp>
#include <boost/context/fiber.hpp>
#include <boost/fiber/all.hpp>
#include <vector>

#include "bench_main.h"
#include "pinning.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace {

using weft::bench::first_cpu;
using weft::bench::run_pinned;

void yield_weft(benchmark::State& state) {
  std::atomic<bool> done{false};
  weft::Thread partner = weft::spawn(weft::bench::pinned_to(0), [&] {
    while (!done.load(std::memory_order_relaxed)) weft::this_thread::yield();
  });
  weft::Thread timed = weft::spawn(weft::bench::pinned_to(0), [&] {
    for (auto _ : state) weft::this_thread::yield();
    done.store(true, std::memory_order_relaxed);
  });
  timed.join();
  partner.join();
}

void yield_boost_fiber(benchmark::State& state) {
  run_pinned(first_cpu(), [&] {
    bool done = false;
    boost::fibers::fiber partner([&] {
      while (!done) boost::this_fiber::yield();
    });
    boost::fibers::fiber timed([&] {
      for (auto _ : state) boost::this_fiber::yield();
      done = true;
    });
    timed.join();
    partner.join();
  });
}

void yield_boost_context(benchmark::State& state) {
  run_pinned(first_cpu(), [&] {
    namespace context = boost::context::detail;
    std::vector<char> stack(64 * 1024);
    // The partner is left suspended and its stack freed: it holds nothing that needs unwinding.
    context::fcontext_t partner = context::make_fcontext(
        stack.data() + stack.size(), stack.size(), [](context::transfer_t from) {
          for (;;) from = context::jump_fcontext(from.fctx, nullptr);
        });
    for (auto _ : state) partner = context::jump_fcontext(partner, nullptr).fctx;
  });
}

void yield_boost_context_fiber(benchmark::State& state) {
  run_pinned(first_cpu(), [&] {
    bool done = false;
    boost::context::fiber partner([&done](boost::context::fiber&& caller) {
      while (!done) caller = std::move(caller).resume();
      return std::move(caller);
    });
    for (auto _ : state) partner = std::move(partner).resume();
    done = true;
    std::move(partner).resume();
  });
}

void yield_std_thread(benchmark::State& state) {
  std::atomic<bool> done{false};
  std::thread partner = weft::bench::pinned_thread(first_cpu(), [&] {
    while (!done.load(std::memory_order_relaxed)) sched_yield();
  });
  run_pinned(first_cpu(), [&] {
    for (auto _ : state) sched_yield();
    done.store(true, std::memory_order_relaxed);
  });
  partner.join();
}

BENCHMARK(yield_weft)->Name("yield/weft")->UseRealTime();
BENCHMARK(yield_boost_fiber)->Name("yield/boost_fiber")->UseRealTime();
BENCHMARK(yield_boost_context)->Name("yield/boost_context")->UseRealTime();
BENCHMARK(yield_boost_context_fiber)->Name("yield/boost_context_fiber")->UseRealTime();
BENCHMARK(yield_std_thread)->Name("yield/std_thread")->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return weft::bench::run_benchmarks(argc, argv);
}
