// The synchronization words of a window, in memory every rank of the window maps
// (shared_memory.h), so that an origin synchronizes with a target in another process the same
// way as with one of its own: by atomic instructions on the target's words, without the target.
//
// Per target rank: its passive-target lock word, the stripes of its accumulate lock and the count
// of MPI_Win_complete calls made toward it. Per pair: the count of MPI_Win_post calls a target
// made toward an origin.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace weft::mpi::rma {

class Control {
 public:
  // Accumulates to elements in different stripes proceed in parallel: the standard makes an
  // accumulate atomic per element only (MPI-4.1 12.7.1), so a lock per stripe of the target's
  // window is enough. A stripe is a run of 64 bytes (elements never straddle two when aligned).
  static constexpr int kStripes = 32;
  static constexpr std::size_t kStripeBytes = 64;

  struct alignas(64) Slot {
    // >= 0: the number of shared holders; -1: held exclusively.
    std::int64_t lock;
    std::uint64_t completes;
    std::uint32_t stripes[kStripes];
  };

  static std::size_t bytes(int ranks);
  // Lays the block over `memory` (zeroed, bytes(ranks) long).
  void bind(std::byte* memory, int ranks);

  std::atomic_ref<std::int64_t> lock(int target) { return std::atomic_ref(slots_[target].lock); }
  std::atomic_ref<std::uint64_t> completes(int target) {
    return std::atomic_ref(slots_[target].completes);
  }
  std::atomic_ref<std::uint32_t> stripe(int target, int stripe) {
    return std::atomic_ref(slots_[target].stripes[stripe]);
  }
  // Posts made by `target` toward `origin`.
  std::atomic_ref<std::uint64_t> posts(int origin, int target) {
    return std::atomic_ref(posts_[static_cast<std::size_t>(origin) * ranks_ + target]);
  }

 private:
  Slot* slots_ = nullptr;
  std::uint64_t* posts_ = nullptr;
  int ranks_ = 0;
};

}  // namespace weft::mpi::rma
