// Threads bound to one core. The std::thread peers are pinned like weft's threads: their figures
// compare only when neither side can spread the threads over cores.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "weft/thread.h"

namespace weft::bench {

// The CPUs this process may run on, in increasing order.
inline std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) throw std::runtime_error("sched_getaffinity");
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
  }
  return cpus;
}

// A std::thread that binds itself to `cpu` before it runs `body`.
template <class Body>
std::thread pinned_thread(int cpu, Body body) {
  return std::thread([cpu, body = std::move(body)]() mutable {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    body();
  });
}

// The CPU of the one-core benchmarks, for weft (its virtual processor 0) and for every peer, so
// that load from other processes on a shared machine falls on all of them alike.
inline int first_cpu() {
  return allowed_cpus().front();
}

// Runs `body` on a kernel thread bound to `cpu` and waits for it to end.
template <class Body>
void run_pinned(int cpu, Body body) {
  pinned_thread(cpu, std::move(body)).join();
}

// Attributes of a weft thread that runs on virtual processor `vp` only.
inline ThreadAttr pinned_to(int vp) {
  ThreadAttr attr;
  attr.placement = Placement::pinned(vp);
  return attr;
}

}  // namespace weft::bench
