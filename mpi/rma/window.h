// A window (MPI_Win): each rank of the window's communicator holds its own handle, which says
// where every target's memory is and how this rank may reach it, plus what MPI keeps per process
// (name, error handler, attributes, the epochs this rank has opened).
//
// Reaching a target: a rank of this process, or any rank whose window memory lies in a segment
// every process of the window maps (MPI_Win_allocate and MPI_Win_allocate_shared when the
// communicator spans processes), is reached by loads and stores through `direct`; the memory a
// rank of another process gave to MPI_Win_create or MPI_Win_attach is reached by that process's
// address through cross-memory attach (process_vm_readv/writev), one copy without the target,
// except on the pages the owner moved onto a segment the other processes map (exposed_memory.h),
// which are reached by loads and stores too.
//
// The synchronization words (passive-target locks, accumulate locks, post/complete counters) live
// in a control block every rank of the window maps: see control.h.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "attr/attribute_set.h"
#include "init/world.h"
#include "mpi.h"
#include "rma/control.h"
#include "rma/exposed_memory.h"
#include "rma/shared_memory.h"

namespace weft::mpi::rma {

// How an origin reaches one target.
struct Target {
  // The target's window memory in this rank's address space; null when it is only reachable
  // through cross-memory attach (and for dynamic windows, whose addresses are absolute).
  std::byte* direct = nullptr;
  // The bytes of the window `direct` reaches: all of them, or those on the pages an owner in
  // another process exposed (exposed_memory.h); the others by cross-memory attach.
  MPI_Aint direct_begin = 0;
  MPI_Aint direct_end = 0;
  std::uintptr_t address = 0;  // the base in the target's own address space
  MPI_Aint size = 0;
  int disp_unit = 1;
  pid_t pid = 0;  // the target's process
  bool same_process = false;
};

enum class Access : std::uint8_t { none, fence, pscw, passive };

// This rank's epochs on the window (MPI-4.1 12.5).
struct Epochs {
  Access access = Access::none;
  // fence: a fence opened an epoch (it was not asserted MPI_MODE_NOSUCCEED).
  bool fence_open = false;
  // pscw: the ranks of MPI_Win_start's group (comm ranks) and, for the target side, those of
  // MPI_Win_post's group and the completes seen so far.
  std::vector<int> start_group;
  std::vector<std::uint64_t> posts_seen;  // by target: its posts this rank's starts consumed
  bool exposed = false;
  std::vector<int> post_group;
  std::uint64_t completes_seen = 0;
  // passive: the lock this rank holds on each target (0, MPI_LOCK_SHARED, MPI_LOCK_EXCLUSIVE) and
  // whether MPI_Win_lock_all holds them all.
  std::vector<int> locks;
  int locked_targets = 0;
  bool lock_all = false;
  bool lock_all_nocheck = false;
  std::vector<std::uint8_t> nocheck;  // the lock was taken with MPI_MODE_NOCHECK
  // Flushes and syncs so far (sync_passive.cpp). Atomic because threads of a rank may flush at
  // once; a relaxed load and store, not a locked increment, since a lost count is harmless.
  std::atomic<std::uint64_t> settles{0};
};

}  // namespace weft::mpi::rma

struct weft_mpi_win {
  // A freed window stays as a tombstone so that a later use is caught (MPI_ERR_WIN), not undefined.
  static constexpr std::uint32_t kLive = 0x57494e21, kFreed = 0x46524545;
  std::uint32_t magic = kLive;

  MPI_Comm comm = MPI_COMM_NULL;  // a duplicate of the user's: the window's own collectives
  // The phase of the rank that made this handle: MPI calls on the window check it, rather than
  // find the calling rank.
  const std::atomic<weft::mpi::RankState::Phase>* owner_phase = nullptr;
  int rank = 0;
  int size = 0;
  int flavor = MPI_WIN_FLAVOR_CREATE;
  int model = MPI_WIN_UNIFIED;
  void* base = nullptr;
  MPI_Aint bytes = 0;
  int disp_unit = 1;
  // Accumulates to every target use atomic instructions on `direct` memory; false when some
  // origin reaches some target only through cross-memory attach: all then take the target's
  // accumulate locks, so that both kinds of origin stay atomic with respect to each other.
  bool atomic_accumulates = true;
  std::vector<weft::mpi::rma::Target> targets;  // by comm rank

  weft::mpi::rma::SharedMemory control_memory;
  weft::mpi::rma::Control control;
  weft::mpi::rma::SharedMemory window_memory;  // allocated flavors
  struct FreeMemory {
    void operator()(std::byte* memory) const { std::free(memory); }
  };
  std::unique_ptr<std::byte, FreeMemory> private_memory;  // MPI_Win_allocate in one process
  // MPI_Win_create across processes: this rank's pages on a segment, and its mappings of the
  // other processes' ranks' (by comm rank; unmapped for ranks of this process).
  weft::mpi::rma::ExposedMemory exposed;
  std::unique_ptr<weft::mpi::rma::PeerPages[]> peer_pages;

  weft::mpi::rma::Epochs epochs;

  // MPI_Win_create_dynamic: the regions attached by this rank (base -> size).
  std::mutex attached_lock;
  std::map<std::uintptr_t, MPI_Aint> attached;

  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  std::string name;
  std::vector<std::pair<std::string, std::string>> info;  // the hints in effect
  weft::mpi::AttributeSet attributes;                     // those of the program's keyvals

  // Attribute values of the predefined attributes (MPI_Win_get_attr returns their addresses).
  MPI_Aint size_attribute = 0;
  int disp_unit_attribute = 1;
  int flavor_attribute = MPI_WIN_FLAVOR_CREATE;
  int model_attribute = MPI_WIN_UNIFIED;
};

namespace weft::mpi::rma {
using Window = weft_mpi_win;
}  // namespace weft::mpi::rma
