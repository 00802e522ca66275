// Measuring the NUMA copy model's constants on this machine (weft/numa_copy.h). Copies are timed
// on buffers larger than the last-level cache share of a core, from memory bound to a node with
// libnuma; latencies by two threads on two cores handing a cache line back and forth.
#include <numa.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>
#include <thread>
#include <vector>

#include "weft/numa_copy.h"
#include "weft/topology.h"

namespace weft::numa_copy {

namespace {

constexpr std::size_t kCopyBytes = std::size_t{16} << 20;
constexpr int kCopyRounds = 4;
constexpr int kPingPongs = 20000;

using Clock = std::chrono::steady_clock;

double ns_since(Clock::time_point start) {
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

// Memory of `bytes` on NUMA node `os_node` (libnuma), or anywhere when the node is -1.
class NodeMemory {
 public:
  NodeMemory(std::size_t bytes, int os_node) : bytes_(bytes) {
    memory_ = os_node >= 0 && numa_available() >= 0 ? numa_alloc_onnode(bytes, os_node)
                                                    : numa_alloc_local(bytes);
    if (memory_ != nullptr) std::memset(memory_, 1, bytes);  // fault every page in on its node
  }
  ~NodeMemory() {
    if (memory_ != nullptr) numa_free(memory_, bytes_);
  }
  NodeMemory(const NodeMemory&) = delete;
  NodeMemory& operator=(const NodeMemory&) = delete;
  char* data() const { return static_cast<char*>(memory_); }

 private:
  std::size_t bytes_;
  void* memory_;
};

// Runs body(i) on `cores.size()` threads, thread i bound to cores[i] where the topology is this
// machine's, and returns the wall time of the slowest in nanoseconds.
template <class Body>
double on_cores(const Topology& topology, const std::vector<int>& cores, Body&& body) {
  std::atomic<int> ready{0};
  std::vector<double> times(cores.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < cores.size(); ++i) {
    threads.emplace_back([&, i] {
      topology.bind_current_thread(cores[i]);
      // relaxed: only a start line; the timed work touches nothing the others write.
      ready.fetch_add(1, std::memory_order_relaxed);
      while (ready.load(std::memory_order_relaxed) < static_cast<int>(cores.size())) {
        std::this_thread::yield();
      }
      const Clock::time_point start = Clock::now();
      body(i);
      times[i] = ns_since(start);
    });
  }
  for (std::thread& thread : threads) thread.join();
  return *std::max_element(times.begin(), times.end());
}

// Nanoseconds per byte of `threads` cores of node `reader` each copying kCopyBytes from memory
// on node `source` into memory of their own node, the best of kCopyRounds.
double copy_ns_per_byte(const Topology& topology, int reader, int source, int threads) {
  std::vector<int> cores = topology.cores_of_numa(reader);
  cores.resize(std::min<std::size_t>(cores.size(), static_cast<std::size_t>(threads)));
  std::vector<std::unique_ptr<NodeMemory>> from, to;
  for (std::size_t i = 0; i < cores.size(); ++i) {
    from.push_back(std::make_unique<NodeMemory>(kCopyBytes, topology.numa_os_index(source)));
    to.push_back(std::make_unique<NodeMemory>(kCopyBytes, topology.numa_os_index(reader)));
    if (from.back()->data() == nullptr || to.back()->data() == nullptr) return 0;
  }
  double best = 0;
  for (int round = 0; round < kCopyRounds; ++round) {
    const double ns = on_cores(topology, cores, [&](std::size_t i) {
      std::memcpy(to[i]->data(), from[i]->data(), kCopyBytes);
    });
    const double per_byte = ns / static_cast<double>(kCopyBytes * cores.size());
    best = round == 0 ? per_byte : std::min(best, per_byte);
  }
  // With one thread its own copy's time per byte; with several, the link's for all together.
  return best;
}

// Half a round trip of a cache line handed between two cores (t_W), and the time of one atomic
// increment of a line the other core increments too (t_A).
std::pair<double, double> latencies(const Topology& topology) {
  std::vector<int> cores = topology.cores_of_numa(0);
  if (cores.size() < 2) cores = {0, topology.num_cores() > 1 ? 1 : 0};
  cores.resize(2);
  alignas(64) std::atomic<int> turn{0};
  const double ping = on_cores(topology, cores, [&](std::size_t i) {
    const int me = static_cast<int>(i);
    for (int k = 0; k < kPingPongs; ++k) {
      // acquire/release: a real notification publishes the fragment written before it.
      while (turn.load(std::memory_order_acquire) != me) std::this_thread::yield();
      turn.store(1 - me, std::memory_order_release);
    }
  });
  alignas(64) std::atomic<long> counter{0};
  const double add = on_cores(topology, cores, [&](std::size_t) {
    for (int k = 0; k < kPingPongs; ++k) counter.fetch_add(1, std::memory_order_acq_rel);
  });
  return {ping / (2.0 * kPingPongs), add / (2.0 * kPingPongs)};
}

std::string today() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d", std::gmtime(&now));
  return text;
}

}  // namespace

Constants measure(const Topology& topology, const Constants& fallback) {
  Constants c = fallback;
  const double local = copy_ns_per_byte(topology, 0, 0, 1);
  if (local > 0) c.local_ns_per_byte = local;
  std::string what = "local copy";
  if (topology.num_numa_nodes() > 1 && topology.is_this_machine()) {
    const double remote = copy_ns_per_byte(topology, 0, 1, 1);
    const int cores = static_cast<int>(topology.cores_of_numa(0).size());
    const double link = copy_ns_per_byte(topology, 0, 1, cores);
    if (remote > 0) c.remote_ns_per_byte = remote;
    if (link > 0) c.link_ns_per_byte = link;
    what += ", remote copy, link";
  } else {
    // One node: nothing remote to measure; keep the fallback's ratios to the local copy.
    const Constants seed = seed_defaults();
    c.remote_ns_per_byte = c.local_ns_per_byte * seed.remote_ns_per_byte / seed.local_ns_per_byte;
    c.link_ns_per_byte = c.local_ns_per_byte * seed.link_ns_per_byte / seed.local_ns_per_byte;
    what += " (one NUMA node: remote and link are the seed's ratios to it)";
  }
  const auto [notify, atomic] = latencies(topology);
  c.notify_ns = notify;
  c.atomic_ns = atomic;
  c.source = "measured " + today() + ": " + what + ", notification, atomic";
  return c;
}

}  // namespace weft::numa_copy
