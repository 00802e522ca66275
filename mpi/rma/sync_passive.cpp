// Passive-target synchronization (MPI-4.1 12.5.3-12.5.4): each target's lock word in the control
// block is taken by the origin alone (a compare-and-swap; a waiting origin yields its core), so
// the target takes no part. Operations are complete when their call returns, so the flushes and
// MPI_Win_sync only order memory, and now and then give the core to its other threads: programs
// poll window memory in loops of flushes and syncs, waiting for a rank that may share this core.
#include <atomic>
#include <string>

#include "diagnostics/blocked_call.h"
#include "rma/epoch.h"
#include "rma/window_error.h"
#include "util/profiling.h"
#include "weft/trace.h"

using weft::mpi::rma::Access;
using weft::mpi::rma::check_win;
using weft::mpi::rma::raise;
using weft::mpi::rma::wait_until;
using weft::mpi::rma::Window;

namespace {

// `function` a string literal: the call named in stack dumps and deadlock reports while it waits.
void acquire(Window& win, int target, int lock_type, std::string_view function) {
  const weft::mpi::BlockedCall call = weft::mpi::blocked_named(function, "target", target);
  const weft::mpi::BlockedScope blocked(call);
  std::atomic_ref<std::int64_t> word = win.control.lock(target);
  // acquire: the previous holder's accesses are visible to this epoch.
  if (lock_type == MPI_LOCK_EXCLUSIVE) {
    wait_until([&] {
      std::int64_t free = 0;
      return word.compare_exchange_strong(free, -1, std::memory_order_acquire,
                                          std::memory_order_relaxed);
    });
    return;
  }
  wait_until([&] {
    std::int64_t holders = word.load(std::memory_order_relaxed);
    return holders >= 0 &&
           word.compare_exchange_strong(holders, holders + 1, std::memory_order_acquire,
                                        std::memory_order_relaxed);
  });
}

void release(Window& win, int target, int lock_type) {
  std::atomic_ref<std::int64_t> word = win.control.lock(target);
  // release: this epoch's accesses are visible to the next holder.
  if (lock_type == MPI_LOCK_EXCLUSIVE) {
    word.store(0, std::memory_order_release);
  } else {
    word.fetch_sub(1, std::memory_order_release);
  }
}

int check_target(Window& win, int rank, std::string_view function) {
  if (rank == MPI_PROC_NULL || (rank >= 0 && rank < win.size)) return MPI_SUCCESS;
  return raise(&win, function, MPI_ERR_RANK,
               "rank = " + std::to_string(rank) + ", expected 0.." + std::to_string(win.size - 1) +
                   " or MPI_PROC_NULL");
}

// A passive-target epoch is open toward `rank` (MPI_PROC_NULL: always).
int check_locked(Window& win, int rank, std::string_view function) {
  if (int rc = check_target(win, rank, function); rc != MPI_SUCCESS) return rc;
  if (rank == MPI_PROC_NULL || win.epochs.lock_all ||
      win.epochs.locks[static_cast<std::size_t>(rank)] != 0) {
    return MPI_SUCCESS;
  }
  return raise(&win, function, MPI_ERR_RMA_SYNC,
               "rank " + std::to_string(rank) +
                   " is not locked by this rank, expected "
                   "MPI_Win_lock or MPI_Win_lock_all first");
}

int check_any_lock(Window& win, std::string_view function) {
  if (win.epochs.lock_all || win.epochs.locked_targets > 0) return MPI_SUCCESS;
  return raise(&win, function, MPI_ERR_RMA_SYNC,
               "no passive-target epoch is open on win, expected MPI_Win_lock or "
               "MPI_Win_lock_all first");
}

// What a flush or MPI_Win_sync does, the operations being complete already: a full fence, and on
// every 8th call the core to the rank's other threads and a progress of the transport
// (after_failed_test). Programs poll window memory in loops of flushes and syncs, waiting for a
// rank that may share this core: it runs within 8 turns of the loop. Not on every call: a yield
// runs the scheduler's switch hooks (the I/O manager's poll of the UCX worker among them), which
// cost a put-and-flush between processes twice what the put costs (~300 of ~630 instructions,
// bench/run rma_instructions), and a put-and-flush loop gains nothing from them.
void settle(Window& win) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const std::uint64_t settles = win.epochs.settles.load(std::memory_order_relaxed) + 1;
  win.epochs.settles.store(settles, std::memory_order_relaxed);
  if (settles % 8 == 0) weft::mpi::after_failed_test();
}

// A flush toward `rank` of a live window with a passive-target epoch open toward it: the way of
// every valid flush, checked in a few loads (the checks that name the error come after).
bool flushable(MPI_Win win, int rank) {
  return win != MPI_WIN_NULL && win->magic == Window::kLive &&
         win->owner_phase->load(std::memory_order_acquire) ==
             weft::mpi::RankState::Phase::initialized &&
         rank >= 0 && rank < win->size &&
         (win->epochs.lock_all || win->epochs.locks[static_cast<std::size_t>(rank)] != 0);
}

}  // namespace

extern "C" int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_win(win, "MPI_Win_lock"); rc != MPI_SUCCESS) return rc;
  if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED) {
    return raise(win, "MPI_Win_lock", MPI_ERR_LOCKTYPE,
                 "lock_type = " + std::to_string(lock_type) +
                     ", expected MPI_LOCK_EXCLUSIVE or MPI_LOCK_SHARED");
  }
  if (int rc = check_target(*win, rank, "MPI_Win_lock"); rc != MPI_SUCCESS) return rc;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  weft::mpi::rma::Epochs& e = win->epochs;
  const auto r = static_cast<std::size_t>(rank);
  if (e.locks[r] != 0 || e.lock_all) {
    return raise(win, "MPI_Win_lock", MPI_ERR_RMA_SYNC,
                 "rank " + std::to_string(rank) + " is already locked by this rank");
  }
  if (e.access == Access::pscw) {
    return raise(win, "MPI_Win_lock", MPI_ERR_RMA_SYNC,
                 "an access epoch of MPI_Win_start is open on win, expected MPI_Win_complete "
                 "first");
  }
  const bool nocheck = (assert& MPI_MODE_NOCHECK) != 0;
  if (!nocheck) acquire(*win, rank, lock_type, "MPI_Win_lock");
  e.locks[r] = lock_type;
  e.nocheck[r] = nocheck ? 1 : 0;
  ++e.locked_targets;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_lock);

extern "C" int PMPI_Win_unlock(int rank, MPI_Win win) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_win(win, "MPI_Win_unlock"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_target(*win, rank, "MPI_Win_unlock"); rc != MPI_SUCCESS) return rc;
  if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
  weft::mpi::rma::Epochs& e = win->epochs;
  const auto r = static_cast<std::size_t>(rank);
  if (e.locks[r] == 0) {
    return raise(win, "MPI_Win_unlock", MPI_ERR_RMA_SYNC,
                 "rank " + std::to_string(rank) + " is not locked by MPI_Win_lock of this rank");
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (e.nocheck[r] == 0) release(*win, rank, e.locks[r]);
  e.locks[r] = 0;
  --e.locked_targets;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_unlock);

extern "C" int PMPI_Win_lock_all(int assert, MPI_Win win) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_win(win, "MPI_Win_lock_all"); rc != MPI_SUCCESS) return rc;
  weft::mpi::rma::Epochs& e = win->epochs;
  if (e.lock_all || e.locked_targets > 0 || e.access == Access::pscw) {
    return raise(win, "MPI_Win_lock_all", MPI_ERR_RMA_SYNC,
                 "an access epoch (a lock or MPI_Win_start) is already open on win");
  }
  e.lock_all_nocheck = (assert& MPI_MODE_NOCHECK) != 0;
  // Shared locks in rank order: an exclusive locker waits for each in turn.
  if (!e.lock_all_nocheck) {
    for (int t = 0; t < win->size; ++t) acquire(*win, t, MPI_LOCK_SHARED, "MPI_Win_lock_all");
  }
  e.lock_all = true;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_lock_all);

extern "C" int PMPI_Win_unlock_all(MPI_Win win) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_win(win, "MPI_Win_unlock_all"); rc != MPI_SUCCESS) return rc;
  weft::mpi::rma::Epochs& e = win->epochs;
  if (!e.lock_all) {
    return raise(win, "MPI_Win_unlock_all", MPI_ERR_RMA_SYNC,
                 "no MPI_Win_lock_all epoch is open on win");
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (!e.lock_all_nocheck) {
    for (int t = 0; t < win->size; ++t) release(*win, t, MPI_LOCK_SHARED);
  }
  e.lock_all = false;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_unlock_all);

extern "C" int PMPI_Win_flush(int rank, MPI_Win win) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (flushable(win, rank)) {
    settle(*win);
    return MPI_SUCCESS;
  }
  if (int rc = check_win(win, "MPI_Win_flush"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_locked(*win, rank, "MPI_Win_flush"); rc != MPI_SUCCESS) return rc;
  settle(*win);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_flush);

extern "C" int PMPI_Win_flush_local(int rank, MPI_Win win) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (flushable(win, rank)) {
    settle(*win);
    return MPI_SUCCESS;
  }
  if (int rc = check_win(win, "MPI_Win_flush_local"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_locked(*win, rank, "MPI_Win_flush_local"); rc != MPI_SUCCESS) return rc;
  settle(*win);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_flush_local);

extern "C" int PMPI_Win_flush_all(MPI_Win win) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_win(win, "MPI_Win_flush_all"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_any_lock(*win, "MPI_Win_flush_all"); rc != MPI_SUCCESS) return rc;
  settle(*win);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_flush_all);

extern "C" int PMPI_Win_flush_local_all(MPI_Win win) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_win(win, "MPI_Win_flush_local_all"); rc != MPI_SUCCESS) return rc;
  if (int rc = check_any_lock(*win, "MPI_Win_flush_local_all"); rc != MPI_SUCCESS) return rc;
  settle(*win);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_flush_local_all);

// The unified model: public and private copies are one memory; the call orders this rank's
// loads and stores on its window with those of the other ranks' accesses.
extern "C" int PMPI_Win_sync(MPI_Win win) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_win(win, "MPI_Win_sync"); rc != MPI_SUCCESS) return rc;
  settle(*win);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Win_sync);
