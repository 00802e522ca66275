// Errors on windows: raised on the window's error handler (MPI-4.1 9.3; MPI_ERRORS_ARE_FATAL
// unless the program set another), with the same message form as errhan/error.h.
#pragma once

#include <string_view>

#include "init/world.h"
#include "mpi.h"
#include "rma/window.h"

namespace weft::mpi::rma {

// Invokes the calling rank's handler of `win` (of MPI_COMM_WORLD when `win` is not a live
// window). Returns error_class.
int raise(MPI_Win win, std::string_view function, int error_class, std::string_view detail);

// MPI_Init has run, and `win` is a window that has not been freed. Inline for the calls of every
// put and flush: a live window whose rank is initialized passes on a few loads.
int check_win_slowly(MPI_Win win, std::string_view function);
inline int check_win(MPI_Win win, std::string_view function) {
  if (win != MPI_WIN_NULL && win->magic == Window::kLive &&
      win->owner_phase->load(std::memory_order_acquire) == RankState::Phase::initialized) {
    return MPI_SUCCESS;
  }
  return check_win_slowly(win, function);
}

}  // namespace weft::mpi::rma
