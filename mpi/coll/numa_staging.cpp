#include "coll/numa_staging.h"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <new>
#include <string>

#include "init/world.h"
#include "weft/config.h"
#include "weft/error.h"
#include "weft/scheduler.h"
#include "weft/sync.h"
#include "weft/topology.h"

namespace weft::mpi::collective::numa {

namespace {

enum class Mode { automatic, flat, staged };

// Set by configure() before the job's ranks start (thread creation orders it before their reads).
struct JobState {
  Mode mode = Mode::automatic;
  numa_copy::Constants constants = numa_copy::seed_defaults();
  const weft::Topology* topology = nullptr;
  int first = 0;
  std::vector<int> node_of_local;  // by local rank
  bool one_node = true;            // every local rank on one node: nothing to stage, ever
};
JobState job;

// Below this the model answers flat; not asking it spares small calls the layout's vector.
constexpr std::size_t kMinModelBytes = numa_copy::kMinStagedBytes;

std::array<std::atomic<std::uint64_t>, 4> staged_counts;

// Staging memory kept between calls, by node: mapping and binding pages costs more than a
// large copy.
struct Pool {
  struct Region {
    std::size_t capacity;
    std::byte* data;
  };
  Mutex mutex;
  std::map<int, std::vector<Region>> free;
};
Pool& pool() {
  static Pool* instance = new Pool;  // never destroyed: ranks may return buffers at exit
  return *instance;
}
constexpr std::size_t kKeptPerNode = 4;

void unmap(const Pool::Region& region) {
  ::munmap(region.data, region.capacity);
}

}  // namespace

void configure(const Config& config, const Scheduler& scheduler,
               const std::vector<TaskPlace>& places, int first) {
  const std::string mode = config.get_string("mpi.coll_numa");
  job.mode = mode == "flat" ? Mode::flat : mode == "staged" ? Mode::staged : Mode::automatic;
  job.constants = numa_copy::effective(config.get_string("mpi.coll_numa_constants"));
  job.topology = &scheduler.topology();
  job.first = first;
  job.node_of_local.clear();
  for (const TaskPlace& place : places) {
    job.node_of_local.push_back(scheduler.vp_numa(place.core % scheduler.num_vps()));
  }
  job.one_node = std::all_of(job.node_of_local.begin(), job.node_of_local.end(),
                             [&](int node) { return node == job.node_of_local.front(); });
  // A previous job's buffers were bound by its topology's nodes.
  std::lock_guard lock(pool().mutex);
  for (auto& [node, regions] : pool().free) {
    for (const Pool::Region& region : regions) unmap(region);
  }
  pool().free.clear();
}

numa_copy::Layout layout_of(const Comm& comm) {
  numa_copy::Layout layout;
  const World* w = world();
  const int size = comm.size();
  layout.node_of.resize(static_cast<std::size_t>(size), -1);
  if (w == nullptr || comm.self) return layout;
  const int count = static_cast<int>(job.node_of_local.size());
  for (int r = 0; r < size; ++r) {
    const int local = comm.members[static_cast<std::size_t>(r)] - job.first;
    if (local >= 0 && local < count && w->is_local(comm.members[static_cast<std::size_t>(r)])) {
      layout.node_of[static_cast<std::size_t>(r)] =
          job.node_of_local[static_cast<std::size_t>(local)];
    }
  }
  return layout;
}

bool may_stage(const Comm& comm) {
  return job.mode != Mode::flat && !job.one_node && !comm.self && comm.size() > 1;
}

bool considered(const Comm& comm, std::size_t bytes) {
  if (!may_stage(comm) || bytes == 0) return false;
  return job.mode == Mode::staged || bytes >= kMinModelBytes;
}

Plan plan(const Comm& comm, Collective collective, std::size_t bytes, int root, bool commutative,
          const std::vector<std::size_t>& block_bytes) {
  Plan flat;
  if (job.mode == Mode::flat || comm.size() < 2 || bytes == 0) return flat;
  if (job.mode == Mode::automatic && bytes < kMinModelBytes) return flat;
  const numa_copy::Layout layout = layout_of(comm);
  Plan chosen =
      numa_copy::choose(collective, bytes, layout, root, commutative, job.constants, block_bytes);
  if (job.mode == Mode::staged && layout.nodes() > 1 && (commutative || layout.contiguous())) {
    chosen.algorithm = Algorithm::staged;
    chosen.reason = "mpi.coll_numa = staged";
  }
  return chosen;
}

std::uint64_t staged_calls(Collective collective) {
  // relaxed: a statistic.
  return staged_counts[static_cast<std::size_t>(collective)].load(std::memory_order_relaxed);
}

void count_staged(Collective collective) {
  staged_counts[static_cast<std::size_t>(collective)].fetch_add(1, std::memory_order_relaxed);
}

NodeBuffer::NodeBuffer(int node, std::size_t bytes) : node_(node), capacity_(0), data_(nullptr) {
  {
    std::lock_guard lock(pool().mutex);
    auto& regions = pool().free[node];
    auto fits = std::find_if(regions.begin(), regions.end(),
                             [bytes](const Pool::Region& r) { return r.capacity >= bytes; });
    if (fits != regions.end()) {
      capacity_ = fits->capacity;
      data_ = fits->data;
      regions.erase(fits);
      return;
    }
  }
  capacity_ = std::max<std::size_t>(bytes, 4096);
  void* memory =
      ::mmap(nullptr, capacity_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<std::byte*>(memory);
  // Before the first touch, so that every page comes from the node; on a synthetic topology the
  // nodes are logical and the pages come from wherever the toucher runs.
  if (job.topology != nullptr && node >= 0 && node < job.topology->num_numa_nodes()) {
    try {
      job.topology->bind_memory(data_, capacity_, node);
    } catch (const Error&) {
      // Binding only places the pages; refused (a cgroup's cpuset.mems), the staging still works
      // from wherever the first toucher's policy puts it.
    }
  }
}

NodeBuffer::~NodeBuffer() {
  std::lock_guard lock(pool().mutex);
  auto& regions = pool().free[node_];
  regions.push_back({capacity_, data_});
  if (regions.size() > kKeptPerNode) {
    // Keep the largest: the next call of the same size then needs no mapping.
    auto smallest = std::min_element(
        regions.begin(), regions.end(),
        [](const Pool::Region& a, const Pool::Region& b) { return a.capacity < b.capacity; });
    unmap(*smallest);
    regions.erase(smallest);
  }
}

std::uint64_t wait_at_least(const Counter& counter, std::uint64_t target) {
  // acquire: pairs with the release store that announced the fragment (or freed the slot).
  std::uint64_t seen = counter.value.load(std::memory_order_acquire);
  if (seen >= target) return seen;
  weft::wait_until([&] { return counter.value.load(std::memory_order_acquire) >= target; });
  return counter.value.load(std::memory_order_acquire);
}

namespace {

// The address a contiguous byte stream would start at for its byte `offset` to be at `at`:
// copy_range addresses both streams by the same offset.
void* stream_base(const std::byte* at, std::size_t offset) {
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(at) - offset);
}

}  // namespace

std::size_t pack_range(const Block& from, std::size_t offset, std::size_t bytes, std::byte* out) {
  if (from.count == 0) return 0;
  return copy_range(from.address, from.count, *from.type, stream_base(out, offset), offset + bytes,
                    *MPI_BYTE, offset, bytes);
}

std::size_t unpack_range(const std::byte* in, std::size_t offset, std::size_t bytes,
                         const Block& to) {
  if (to.count == 0) return 0;
  return copy_range(stream_base(in, offset), offset + bytes, *MPI_BYTE, to.address, to.count,
                    *to.type, offset, bytes);
}

Nodes::Nodes(const numa_copy::Layout& layout) {
  std::vector<int> ids;
  node_of.resize(layout.node_of.size());
  for (std::size_t r = 0; r < layout.node_of.size(); ++r) {
    auto it = std::find(ids.begin(), ids.end(), layout.node_of[r]);
    if (it == ids.end()) {
      ids.push_back(layout.node_of[r]);
      id.push_back(layout.node_of[r]);
      members.emplace_back();
      it = ids.end() - 1;
    }
    const auto index = static_cast<int>(it - ids.begin());
    node_of[r] = index;
    members[static_cast<std::size_t>(index)].push_back(static_cast<int>(r));
  }
}

}  // namespace weft::mpi::collective::numa
