#include "rma/window_error.h"

#include <string>

#include "errhan/errhandler.h"
#include "errhan/error.h"
#include "init/fatal.h"
#include "init/world.h"
#include "rma/window.h"

namespace weft::mpi::rma {

int raise(MPI_Win win, std::string_view function, int error_class, std::string_view detail) {
  if (win == MPI_WIN_NULL || win->magic != Window::kLive) {
    return weft::mpi::raise(MPI_COMM_WORLD, function, error_class, detail);
  }
  std::string message(function);
  message += " (rank " + std::to_string(caller_world_rank()) + "): ";
  message += error_class_name(error_class);
  message += ": ";
  message += detail;
  const MPI_Errhandler handler = win->errhandler;
  if (handler == MPI_ERRORS_RETURN) return error_class;
  if (handler == MPI_ERRORS_ARE_FATAL || handler == MPI_ERRHANDLER_NULL) end_job(message);
  // MPI_Win_create_errhandler stored a window handler under the communicator handler's type.
  auto* function_of_win = reinterpret_cast<MPI_Win_errhandler_function*>(handler->function);
  int code = error_class;
  MPI_Win target = win;
  if (handler->fortran_function != nullptr) {
    MPI_Fint fortran_win = MPI_Win_c2f(target);
    handler->fortran_function(&fortran_win, &code);
    return error_class;
  }
  function_of_win(&target, &code);
  return error_class;
}

int check_win_slowly(MPI_Win win, std::string_view function) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (win == MPI_WIN_NULL) {
    return weft::mpi::raise(MPI_COMM_WORLD, function, MPI_ERR_WIN,
                            "win = MPI_WIN_NULL, expected a window");
  }
  if (win->magic != Window::kLive) {
    return weft::mpi::raise(MPI_COMM_WORLD, function, MPI_ERR_WIN,
                            "win has been freed (MPI_Win_free), expected a live window");
  }
  return MPI_SUCCESS;
}

}  // namespace weft::mpi::rma
