// What the NUMA-aware collectives of one process share (notes/seeds.md, 001;
// docs/mpi-collectives.md): where each rank of the process sits, the cost model's constants and
// mode for the job, the plan of one call, node-local staging memory, and the counters fragments are
// announced by.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "coll/collective.h"
#include "comm/communicator.h"
#include "weft/numa_copy.h"
#include "weft/placement.h"

namespace weft {
class Config;
class Scheduler;
}  // namespace weft

namespace weft::mpi::collective::numa {

using numa_copy::Algorithm;
using numa_copy::Collective;
using numa_copy::Plan;

// Records, before the job's ranks start, the NUMA node each rank of this process runs on
// (`places` by local rank, from `first`) and the job's mpi.coll_numa settings. Throws
// weft::Error when mpi.coll_numa_constants is malformed.
void configure(const Config& config, const Scheduler& scheduler,
               const std::vector<TaskPlace>& places, int first);

// The NUMA node of every member of `comm` (-1 where unknown: another process, a spawned rank).
numa_copy::Layout layout_of(const Comm& comm);

// The plan of one call of `comm` moving `bytes` (see numa_copy::choose), by the job's mode:
// flat without asking the model when `bytes` is too small to be worth it or comm sits on one node.
Plan plan(const Comm& comm, Collective collective, std::size_t bytes, int root, bool commutative,
          const std::vector<std::size_t>& block_bytes = {});

// Whether any call of `comm` may be staged (not on one node, not forced flat): a few loads.
bool may_stage(const Comm& comm);
// Whether a call moving `bytes` (the caller's own side) may be staged: cheap, made before
// anything is read from the other members.
bool considered(const Comm& comm, std::size_t bytes);

// How many calls of each collective took the staged path in this process (tests and bench).
std::uint64_t staged_calls(Collective collective);
void count_staged(Collective collective);

// Memory of at least `bytes` on NUMA node `node` (bound there where the topology is this
// machine's), taken from a per-node pool and given back to it on destruction.
class NodeBuffer {
 public:
  NodeBuffer(int node, std::size_t bytes);
  ~NodeBuffer();
  NodeBuffer(const NodeBuffer&) = delete;
  NodeBuffer& operator=(const NodeBuffer&) = delete;
  std::byte* data() const { return data_; }

 private:
  int node_;
  std::size_t capacity_;
  std::byte* data_;
};

// A counter on a cache line of its own: one reader's "fragments ready" or "fragments done".
struct alignas(64) Counter {
  std::atomic<std::uint64_t> value{0};
};

// Waits (spinning, then parked by the scheduler) until counter >= target; returns its value.
std::uint64_t wait_at_least(const Counter& counter, std::uint64_t target);

// Copies bytes [offset, offset + bytes) of the typed stream of `from` into `out`, and back.
// Return the bytes moved (fewer at the end of the block).
std::size_t pack_range(const Block& from, std::size_t offset, std::size_t bytes, std::byte* out);
std::size_t unpack_range(const std::byte* in, std::size_t offset, std::size_t bytes,
                         const Block& to);

// The members of `comm` grouped by node, nodes in order of their first member.
struct Nodes {
  std::vector<std::vector<int>> members;  // by node: comm ranks, ascending
  std::vector<int> node_of;               // comm rank -> index into members
  std::vector<int> id;                    // index -> the topology's NUMA node
  explicit Nodes(const numa_copy::Layout& layout);
};

}  // namespace weft::mpi::collective::numa
