// Cross-core wake-up: two threads on two different cores hand a flag back and forth, so one
// iteration is a round trip of two wake-ups. weft threads pinned to virtual processors 0 and 1
// with automatic events, beside kernel threads pinned to two CPUs with std::binary_semaphore
// (a futex after a short spin, like weft's adaptive spin before a park) and with the classic
// std::mutex + std::condition_variable. Boost.Fiber has no portable way to place two fibers on
// two given kernel threads, so it sits this one out.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <semaphore>
#include <thread>

#include "bench_main.h"
#include "pinning.h"
#include "weft/sync.h"
#include "weft/thread.h"

namespace {

struct WeftFlag {
  weft::Event event{weft::Event::Mode::automatic};
  void set() { event.set(); }
  void wait() { event.wait(); }
};

struct SemaphoreFlag {
  std::binary_semaphore semaphore{0};
  void set() { semaphore.release(); }
  void wait() { semaphore.acquire(); }
};

struct CondvarFlag {
  std::mutex mutex;
  std::condition_variable changed;
  bool raised = false;
  void set() {
    {
      std::lock_guard lock(mutex);
      raised = true;
    }
    changed.notify_one();
  }
  void wait() {
    std::unique_lock lock(mutex);
    changed.wait(lock, [this] { return raised; });
    raised = false;
  }
};

// The timed thread pings and waits for the pong; the responder answers until told to stop.
template <class Flag>
struct PingPong {
  Flag ping;
  Flag pong;
  std::atomic<bool> stop{false};

  void respond() {
    for (;;) {
      ping.wait();
      if (stop.load(std::memory_order_relaxed)) return;
      pong.set();
    }
  }

  void drive(benchmark::State& state) {
    for (auto _ : state) {
      ping.set();
      pong.wait();
    }
    stop.store(true, std::memory_order_relaxed);
    ping.set();
  }
};

void wakeup_weft(benchmark::State& state) {
  PingPong<WeftFlag> game;
  weft::Thread responder = weft::spawn(weft::bench::pinned_to(1), [&] { game.respond(); });
  weft::Thread timed = weft::spawn(weft::bench::pinned_to(0), [&] { game.drive(state); });
  timed.join();
  responder.join();
}

template <class Flag>
void wakeup_kernel_threads(benchmark::State& state) {
  const std::vector<int> cpus = weft::bench::allowed_cpus();
  if (cpus.size() < 2) {
    state.SkipWithError("needs two CPUs");
    return;
  }
  PingPong<Flag> game;
  std::thread responder = weft::bench::pinned_thread(cpus[1], [&] { game.respond(); });
  std::thread timed = weft::bench::pinned_thread(cpus[0], [&] { game.drive(state); });
  timed.join();
  responder.join();
}

BENCHMARK(wakeup_weft)->Name("wakeup/weft")->UseRealTime();
BENCHMARK(wakeup_kernel_threads<SemaphoreFlag>)->Name("wakeup/std_thread")->UseRealTime();
BENCHMARK(wakeup_kernel_threads<CondvarFlag>)->Name("wakeup/std_thread_condvar")->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  return weft::bench::run_benchmarks(argc, argv);
}
