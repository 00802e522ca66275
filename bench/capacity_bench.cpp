// Two capacity checks, run as benchmarks: they print their figures and assert nothing (timing
// assertions have no place on a shared machine; bench/run shows the lines side by side).
//
//   CHECK live_threads <n> ok <seconds> s, peak RSS <MiB> MiB, <KiB> KiB per thread, page tables
//   <MiB> MiB, <m> mappings
//     n threads (100 000, or the program's argument: bench/run scale gives 1 000 000) with their
//     default stacks are alive at once (all spawned, none released), then released and joined.
//     Stacks are committed page by page, so the resident set stays far below n times the stack
//     size; they are carved from slabs, so the mappings (lines of /proc/self/maps while all are
//     alive) stay far below n.
//   CHECK idle_cpu <percent> %
//     process CPU time while one thread sleeps 2 s and the runtime has nothing else to do, as a
//     share of one core: an idle runtime must not spin. Measured on the fresh runtime, and again
//     after the live threads (idle_cpu_after_live_threads): a runtime must also go quiet again
//     once a burst of work is gone, whatever it kept from it.
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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

constexpr int kDefaultLiveThreads = 100'000;
constexpr std::chrono::seconds kIdleSleep{2};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A field of /proc/self/status given in kB: VmHWM (the peak resident set so far), VmRSS.
double status_mib(const std::string& name) {
  std::ifstream status("/proc/self/status");
  std::string field;
  while (status >> field) {
    if (field == name) {
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

std::size_t count_mappings() {
  std::ifstream maps("/proc/self/maps");
  std::size_t lines = 0;
  for (std::string line; std::getline(maps, line);) ++lines;
  return lines;
}

// False when the threads did not fit.
bool check_live_threads(const weft::Scheduler& scheduler, int count) {
  const double rss_before = status_mib("VmRSS:");
  const Clock::time_point start = Clock::now();
  weft::Event release;
  std::atomic<int> waiting{0};
  std::vector<weft::Thread> threads;
  threads.reserve(count);
  // A spawn that fails (out of memory or mappings) ends the spawning, not the check: the threads
  // already there must still be released and joined.
  std::string failure;
  try {
    for (int i = 0; i < count; ++i) {
      threads.push_back(weft::spawn([&] {
        waiting.fetch_add(1, std::memory_order_relaxed);
        release.wait();
      }));
    }
  } catch (const std::exception& e) {
    failure = e.what();
  }
  const int spawned = static_cast<int>(threads.size());
  while (waiting.load(std::memory_order_relaxed) < spawned) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const std::size_t live = scheduler.live_threads();
  const double spawned_s = seconds_since(start);
  const double rss_live = status_mib("VmRSS:");
  const double page_tables = status_mib("VmPTE:");
  const std::size_t mappings = count_mappings();
  release.set();
  for (weft::Thread& thread : threads) thread.join();
  if (!failure.empty()) {
    std::printf("CHECK live_threads %d failed after %d threads, %.2f s, peak RSS %.0f MiB: %s\n",
                count, spawned, seconds_since(start), status_mib("VmHWM:"), failure.c_str());
    std::fflush(stdout);
    return false;
  }
  std::printf(
      "live threads: %zu alive at once after %.2f s, all joined after %.2f s, resident then "
      "%.0f MiB\n",
      live, spawned_s, seconds_since(start), status_mib("VmRSS:"));
  std::printf(
      "CHECK live_threads %d ok %.2f s, peak RSS %.0f MiB, %.1f KiB per thread, page tables %.0f "
      "MiB, %zu mappings\n",
      count, seconds_since(start), status_mib("VmHWM:"), (rss_live - rss_before) * 1024 / count,
      page_tables, mappings);
  std::fflush(stdout);
  return true;
}

// `name` tells the figures of the fresh runtime from those after the burst of live threads.
void check_idle_cpu(const std::string& name) {
  const double cpu_start = process_cpu_seconds();
  const Clock::time_point start = Clock::now();
  weft::spawn([] { weft::this_thread::sleep_for(kIdleSleep); }).join();
  const double percent = 100 * (process_cpu_seconds() - cpu_start) / seconds_since(start);
  std::printf("IDLE cpu_percent%s %.2f\n", name.c_str(), percent);
  std::printf("CHECK idle_cpu%s %.2f %%\n", name.c_str(), percent);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  const int live_threads = argc > 1 ? std::atoi(argv[1]) : kDefaultLiveThreads;
  if (live_threads <= 0) {
    std::fprintf(stderr, "usage: capacity_bench [live threads, default %d]\n", kDefaultLiveThreads);
    return 2;
  }
  // One virtual processor per core: the whole machine, as an application would run it.
  weft::ConfigOverrides overrides;
  overrides.settings = {{"scheduler.vps", "0"}};
  weft::Scheduler scheduler(weft::Config::load(overrides));
  std::printf("capacity checks on %d virtual processors, default stack %zu KiB\n",
              scheduler.num_vps(), scheduler.config().stack_size(weft::ThreadType::user) / 1024);
  std::fflush(stdout);
  check_idle_cpu("");
  const bool fit = check_live_threads(scheduler, live_threads);
  check_idle_cpu("_after_live_threads");
  scheduler.shutdown();
  return fit ? 0 : 1;
}
