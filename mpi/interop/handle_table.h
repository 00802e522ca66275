// The Fortran integers of one kind of handle (MPI-4.1 19.3.4). weft's C handles are pointers, so a
// Fortran handle is an index into a table: 0 is the kind's null handle, the predefined handles
// have fixed small integers (1, 2, ... in the order of the kind's list, which mpif.h names), and
// the program's own objects get theirs on their first conversion to Fortran, until a Fortran call
// frees the object.
//
// Ranks are threads of one process, so the table is shared by all of them and a handle converts
// the same way in every rank. Conversion from Fortran is lock-free (every Fortran call makes one
// per handle argument): slots live in segments that are allocated once and never move. Giving out
// and taking back integers takes a spin lock (a hash look-up, no parking inside).
//
// An object may be shared by ranks (a communicator's object serves all its members in the
// process), and each rank's Fortran code holds the same integer for it. So every conversion to
// Fortran counts a holder and every free by Fortran code releases one: the integer is taken back
// when the last holder frees the object, never while another rank still uses it.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <unordered_map>

#include "mpi.h"
#include "weft/detail/spin_lock.h"

namespace weft::mpi::interop {

// The pointer-free part of a table, shared by every kind.
class HandleSlots {
 public:
  static constexpr int kSegmentBits = 10;
  static constexpr int kSegmentSize = 1 << kSegmentBits;
  static constexpr int kSegments = 1 << 12;  // 4 Mi handles of one kind alive at once

  explicit HandleSlots(std::span<void* const> predefined);

  // The object of integer `handle`, or null for 0, a negative or out-of-range integer, a freed
  // one and one never given out (MPI-4.1 19.3.4 lets f2c of an invalid handle return null).
  void* object(MPI_Fint handle) const noexcept {
    if (handle <= 0) return nullptr;
    auto index = static_cast<std::uint32_t>(handle);
    if ((index >> kSegmentBits) >= kSegments) return nullptr;
    // acquire: pairs with the release store of a new segment and of a slot in give_out().
    const auto* segment = segments_[index >> kSegmentBits].load(std::memory_order_acquire);
    if (segment == nullptr) return nullptr;
    return (*segment)[index & (kSegmentSize - 1)].load(std::memory_order_acquire);
  }

  // The integer of `object` (a non-null handle), given out now if it has none; one more holder.
  MPI_Fint integer(void* object);
  // One holder of the integer `handle` freed its object: with the last, the integer is taken back
  // and a later object may get it. Predefined handles, 0 and unknown integers are left alone.
  // Integers are reused oldest-freed first, so that a stale handle names nothing for long.
  void take_back(MPI_Fint handle);
  // How many integers name an object (predefined ones included); for tests.
  std::size_t live() const;

 private:
  using Segment = std::array<std::atomic<void*>, kSegmentSize>;
  void store(MPI_Fint handle, void* object);

  int predefined_count_;
  std::unique_ptr<std::atomic<Segment*>[]> segments_;
  mutable detail::SpinLock lock_;  // guards what follows and the stores into slots
  struct Entry {
    MPI_Fint handle;
    std::uint64_t holders;
  };
  std::unordered_map<void*, Entry> integers_;
  std::deque<MPI_Fint> free_;
  MPI_Fint next_;
};

// A kind of handle: its C type and table.
template <class Handle>
class HandleTable {
 public:
  explicit HandleTable(std::span<void* const> predefined) : slots_(predefined) {}
  MPI_Fint to_fortran(Handle handle) {
    return handle == nullptr ? 0 : slots_.integer(static_cast<void*>(handle));
  }
  Handle from_fortran(MPI_Fint handle) const noexcept {
    return static_cast<Handle>(slots_.object(handle));
  }
  void take_back(MPI_Fint handle) { slots_.take_back(handle); }
  const HandleSlots& slots() const { return slots_; }

 private:
  HandleSlots slots_;
};

}  // namespace weft::mpi::interop
