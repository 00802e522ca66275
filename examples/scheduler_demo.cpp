// A tour of the scheduler: ranks pinned by the placement policy, OpenMP-like workers that may be
// stolen, progress threads bound to a NUMA node that boost themselves while they hold work, I/O
// threads that sleep, and plain user threads; then a table of what ran where.
//
//   scheduler_demo [--config FILE] [--set key=value ...]
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "weft/config.h"
#include "weft/error.h"
#include "weft/placement.h"
#include "weft/scheduler.h"
#include "weft/sync.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace {

struct Seen {
  int threads = 0;
  std::set<int> vps;
  long migrations = 0;
  long switches = 0;
};

std::mutex seen_mutex;
std::map<weft::ThreadType, Seen> seen;

// Yields `rounds` times and records which virtual processors the caller ran on.
void work(int rounds) {
  std::set<int> vps;
  long migrations = 0;
  int vp = weft::this_thread::vp();
  for (int i = 0; i < rounds; ++i) {
    vps.insert(vp);
    weft::this_thread::yield();
    const int now = weft::this_thread::vp();
    migrations += now != vp;
    vp = now;
  }
  std::lock_guard lock(seen_mutex);
  Seen& s = seen[weft::this_thread::type()];
  ++s.threads;
  s.vps.insert(vps.begin(), vps.end());
  s.migrations += migrations;
  s.switches += rounds;
}

weft::ConfigOverrides parse_arguments(int argc, char** argv) {
  weft::ConfigOverrides overrides;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--config") == 0 && has_value) {
      overrides.file = argv[++i];
    } else if (std::strcmp(argv[i], "--set") == 0 && has_value) {
      overrides.settings.push_back(weft::Config::parse_setting(argv[++i]));
    } else {
      throw weft::Error(std::string("scheduler_demo: unknown argument '") + argv[i] +
                        "'; expected --config FILE or --set key=value");
    }
  }
  return overrides;
}

}  // namespace

int main(int argc, char** argv) try {
  weft::Scheduler scheduler(weft::Config::load(parse_arguments(argc, argv)));
  const int vps = scheduler.num_vps();
  const int ranks = 2 * vps;
  const auto places =
      weft::place_tasks(weft::CoreLayout::of(scheduler.topology()), ranks, 1,
                        *weft::parse_task_policy(scheduler.config().get_string("placement.tasks")),
                        weft::ProgressPolicy::none);
  std::printf(
      "weft scheduler demo: %d virtual processors on %s\n", vps,
      scheduler.topology().spec().empty() ? "this machine" : scheduler.topology().spec().c_str());

  std::vector<weft::Thread> threads;
  weft::Barrier ranks_ready(ranks);
  for (int r = 0; r < ranks; ++r) {
    weft::ThreadAttr rank;
    rank.type = weft::ThreadType::mpi_task;
    rank.rank = r;
    rank.placement = weft::Placement::pinned(places[r].core % vps);
    threads.push_back(weft::spawn(rank, [&ranks_ready] {
      ranks_ready.arrive_and_wait();
      // Each rank forks a team of workers and joins it, like an OpenMP parallel region.
      std::vector<weft::Thread> team;
      for (int w = 0; w < 4; ++w) {
        weft::ThreadAttr worker;
        worker.type = weft::ThreadType::omp_worker;
        team.push_back(weft::spawn(worker, [] { work(200); }));
      }
      work(100);
      for (weft::Thread& t : team) t.join();
    }));
  }
  for (int node = 0; node < scheduler.topology().num_numa_nodes(); ++node) {
    weft::ThreadAttr progress;
    progress.type = weft::ThreadType::progress;
    progress.placement = weft::Placement::numa(node);
    threads.push_back(weft::spawn(progress, [] {
      // Boosted while it holds work, back to its base priority when idle.
      weft::this_thread::set_boosted(true);
      work(300);
      weft::this_thread::set_boosted(false);
    }));
  }
  for (int i = 0; i < 8; ++i) {
    weft::ThreadAttr io;
    io.type = weft::ThreadType::io;
    threads.push_back(weft::spawn(io, [i] {
      weft::this_thread::sleep_for(std::chrono::milliseconds(1 + i));
      work(10);
    }));
  }
  for (int i = 0; i < 100; ++i) threads.push_back(weft::spawn([] { work(20); }));
  for (weft::Thread& t : threads) t.join();

  std::printf("\n%-11s %8s %10s %11s  %s\n", "type", "threads", "yields", "migrations",
              "virtual processors used");
  for (const auto& [type, s] : seen) {
    std::string used;
    for (int vp : s.vps) {
      if (!used.empty()) used += ',';  // not "," + to_string: GCC 12 -O3's false -Wrestrict
      used += std::to_string(vp);
    }
    std::printf("%-11s %8d %10ld %11ld  %s\n", std::string(weft::to_string(type)).c_str(),
                s.threads, s.switches, s.migrations, used.c_str());
  }
  std::printf("\n%-4s %6s %10s %8s %8s %13s\n", "vp", "core", "switches", "steals", "sleeps",
              "remote wakes");
  const auto stats = scheduler.stats();
  for (int vp = 0; vp < vps; ++vp) {
    std::printf("%-4d %6d %10lu %8lu %8lu %13lu\n", vp, scheduler.vp_core(vp),
                static_cast<unsigned long>(stats[vp].switches),
                static_cast<unsigned long>(stats[vp].steals),
                static_cast<unsigned long>(stats[vp].sleeps),
                static_cast<unsigned long>(stats[vp].remote_wakes));
  }
  std::printf("\nmpi_task threads never migrate (pinned); omp_worker and user threads may.\n");
  return seen[weft::ThreadType::mpi_task].migrations == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "weft: %s\n", e.what());
  return 2;
}
