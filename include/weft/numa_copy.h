// The cost model of copying one buffer to many readers spread over NUMA nodes (notes/seeds.md,
// 001): flat, every reader copying from wherever the data is, against staged, one copy per NUMA
// node into node-local memory that the node's readers then copy from, in pipelined fragments,
// told through a notification tree. Pure functions of the machine's constants, so that weft-info
// and tests show the choice a job makes; the constants are measured on this machine by
// `weft-info numa --measure` into a cache, with the seed's figures where nothing was measured.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft {

class Topology;

namespace numa_copy {

// Times in nanoseconds, per byte for copies.
struct Constants {
  double local_ns_per_byte;   // t: one core copying within its own node
  double remote_ns_per_byte;  // one core copying from another node's memory
  double link_ns_per_byte;    // the path between nodes, shared by every core crossing it
  double notify_ns;           // t_W: a store seen by a reader waiting on it (a fragment is ready)
  double atomic_ns;           // t_A: one atomic update of a line another core reads
  std::string source;         // where the figures come from, for weft-info and the docs

  // "local=1,remote=2,link=0.5,notify=50,atomic=10" (ns), the form of the cache and of the
  // mpi.coll_numa_constants key; missing fields keep `base`'s. nullopt when malformed.
  static std::optional<Constants> parse(std::string_view text, const Constants& base);
  std::string format() const;
};

// The seed's model figures (Fig. 4: t = 1 ns/byte, t_W = 50 t, t_A = 10 t); the paper gives no
// remote or link figure, so remote copies cost t times the nodes' distance over 10 (SLIT: 20 on
// a two-socket machine) and the link carries what two local copies do.
Constants seed_defaults();
// $XDG_CACHE_HOME/weft/numa-constants, else ~/.cache/weft/numa-constants.
std::string cache_path();
// The cached constants, or nullopt when there is no readable cache.
std::optional<Constants> read_cache(const std::string& path);
// Throws weft::Error when the file cannot be written.
void write_cache(const std::string& path, const Constants& constants);
// Measures this machine: copy bandwidth within a node, from another node and over the link with
// every core of a node pulling (the last two only where the machine has several nodes, else
// `fallback`'s), and the notification and atomic latencies between two threads. About 0.3 s.
Constants measure(const Topology& topology, const Constants& fallback);
// What a job uses: `setting` (mpi.coll_numa_constants) when not empty, over the cache, over the
// seed's defaults. Throws weft::Error naming the key when `setting` is malformed.
Constants effective(std::string_view setting);

enum class Collective { bcast, reduce, allreduce, allgather };
std::string_view to_string(Collective collective);
enum class Algorithm { flat, staged };
std::string_view to_string(Algorithm algorithm);

// Where the members of a communicator sit: the NUMA node of each (any numbering, -1 unknown).
struct Layout {
  std::vector<int> node_of;
  // The distinct nodes, in order of first member; -1 when a member's node is unknown.
  int nodes() const;
  // Whether every node's members are consecutive ranks (node partials then fold in rank order).
  bool contiguous() const;
};

struct Plan {
  Algorithm algorithm = Algorithm::flat;
  std::size_t fragment = 0;  // bytes per pipelined fragment (staged Bcast)
  int slots = 0;             // fragments in flight per node (the ring of s slots)
  int arity = 0;             // children per parent in each node's notification tree (1: chain)
  double flat_ns = 0;        // the model's times for the two algorithms
  double staged_ns = 0;
  std::string reason;  // why, in words
};

// Below this many bytes a collective stays flat whatever the constants: its flat form has the
// last member to arrive copy for everyone inside one phase (docs/mpi-collectives.md), which no
// notification tree beats.
constexpr std::size_t kMinStagedBytes = 16 * 1024;

// The fragment size f* = sqrt(m t_W / t), rounded up to a page, within [4 KiB, 1 MiB].
std::size_t fragment_size(std::size_t bytes, const Constants& constants);
// The children per parent that minimise the depth times (t_W + k t_A) to reach `readers`.
int tree_arity(int readers, const Constants& constants);
// The algorithm for one call: `bytes` is the message (Bcast), the vector (Reduce, Allreduce) or
// the whole receive buffer (Allgather); `block_bytes` the members' blocks for Allgather (empty:
// even). `root` for Bcast and Reduce; `commutative` for reductions. Flat whenever one node, an
// unknown node, or the model says flat costs less.
Plan choose(Collective collective, std::size_t bytes, const Layout& layout, int root,
            bool commutative, const Constants& constants,
            const std::vector<std::size_t>& block_bytes = {});

}  // namespace numa_copy
}  // namespace weft
