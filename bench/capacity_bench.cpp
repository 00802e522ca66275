// Two capacity checks, run as benchmarks: they print their figures and assert nothing (timing
// assertions have no place on a shared machine; bench/run shows the lines side by side).
//
//   CHECK live_threads <n> ok <seconds> s, peak RSS <MiB> MiB
//     n threads with their default stacks are alive at once (all spawned, none released), then
//     released and joined. Stacks are committed page by page, so the resident set stays far
//     below n times the stack size.
//   CHECK idle_cpu <percent> %
//     process CPU time while one thread sleeps 2 s and the runtime has nothing else to do, as a
//     share of one core: an idle runtime must not spin.
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "weft/config.h"
#include "weft/scheduler.h"
#include "weft/sync.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace {

constexpr int kLiveThreads = 100'000;
constexpr std::chrono::seconds kIdleSleep{2};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// VmHWM: the peak resident set of the process so far.
double peak_rss_mib() {
  std::ifstream status("/proc/self/status");
  std::string field;
  while (status >> field) {
    if (field == "VmHWM:") {
      double kib = 0;
      status >> kib;
      return kib / 1024;
    }
    status.ignore(4096, '\n');
  }
  return -1;
}

double process_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

void check_live_threads(const weft::Scheduler& scheduler) {
  const Clock::time_point start = Clock::now();
  try {
    weft::Event release;
    std::atomic<int> waiting{0};
    std::vector<weft::Thread> threads;
    threads.reserve(kLiveThreads);
    for (int i = 0; i < kLiveThreads; ++i) {
      threads.push_back(weft::spawn([&] {
        waiting.fetch_add(1, std::memory_order_relaxed);
        release.wait();
      }));
    }
    while (waiting.load(std::memory_order_relaxed) < kLiveThreads) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    const std::size_t live = scheduler.live_threads();
    const double spawned_s = seconds_since(start);
    release.set();
    for (weft::Thread& thread : threads) thread.join();
    std::printf("live threads: %zu alive at once after %.2f s, all joined after %.2f s\n", live,
                spawned_s, seconds_since(start));
    std::printf("CHECK live_threads %d ok %.2f s, peak RSS %.0f MiB\n", kLiveThreads,
                seconds_since(start), peak_rss_mib());
  } catch (const std::exception& e) {
    std::printf("CHECK live_threads %d failed after %.2f s, peak RSS %.0f MiB: %s\n", kLiveThreads,
                seconds_since(start), peak_rss_mib(), e.what());
  }
}

void check_idle_cpu() {
  const double cpu_start = process_cpu_seconds();
  const Clock::time_point start = Clock::now();
  weft::spawn([] { weft::this_thread::sleep_for(kIdleSleep); }).join();
  const double percent = 100 * (process_cpu_seconds() - cpu_start) / seconds_since(start);
  std::printf("IDLE cpu_percent %.2f\n", percent);
  std::printf("CHECK idle_cpu %.2f %%\n", percent);
}

}  // namespace

int main() {
  // One virtual processor per core: the whole machine, as an application would run it.
  weft::ConfigOverrides overrides;
  overrides.settings = {{"scheduler.vps", "0"}};
  weft::Scheduler scheduler(weft::Config::load(overrides));
  std::printf("capacity checks on %d virtual processors, default stack %zu KiB\n",
              scheduler.num_vps(), scheduler.config().stack_size(weft::ThreadType::user) / 1024);
  std::fflush(stdout);
  check_live_threads(scheduler);
  std::fflush(stdout);
  // After the burst: a runtime must also go quiet again once the work is gone.
  check_idle_cpu();
  scheduler.shutdown();
  return 0;
}
