// Epoch rules shared by the communication and synchronization calls (MPI-4.1 12.5).
//
// Every operation completes at the origin before its call returns (it is a load/store or a
// cross-memory copy), so a synchronization call only orders memory and meets the other ranks:
// a fence is a barrier, MPI_Win_complete counts itself at each target, unlock releases the lock
// word, and the flushes are memory fences.
#pragma once

#include <string_view>

#include "init/world.h"
#include "mpi.h"
#include "rma/window.h"

namespace weft::mpi::rma {

// `target` may be accessed now: a fence epoch is open, or the target is in MPI_Win_start's group,
// or locked. MPI_ERR_RMA_SYNC otherwise.
int check_access(Window& win, int target, std::string_view function);

// Waits, yielding the core (and progressing the transport between processes), until `ready()`.
template <class Ready>
void wait_until(Ready&& ready) {
  while (!ready()) after_failed_test();
}

}  // namespace weft::mpi::rma
