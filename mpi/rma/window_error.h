// Errors on windows: raised on the window's error handler (MPI-4.1 9.3; MPI_ERRORS_ARE_FATAL
// unless the program set another), with the same message form as errhan/error.h.
#pragma once

#include <string_view>

#include "mpi.h"

namespace weft::mpi::rma {

// Invokes the calling rank's handler of `win` (of MPI_COMM_WORLD when `win` is not a live
// window). Returns error_class.
int raise(MPI_Win win, std::string_view function, int error_class, std::string_view detail);

// MPI_Init has run, and `win` is a window that has not been freed.
int check_win(MPI_Win win, std::string_view function);

}  // namespace weft::mpi::rma
