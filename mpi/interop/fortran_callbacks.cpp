// The objects Fortran code creates with procedures of its own, whose arguments differ from the C
// callbacks' (handles are integers): libweft keeps the Fortran procedure and calls it with
// converted arguments. For the Fortran-callable layer (mpi/fortran/custom_bindings.c).
#include "errhan/errhandler.h"
#include "mpi.h"
#include "op/op_object.h"

extern "C" int weft_mpi_op_create_fortran(weft::mpi::FortranUserFunction* user_fn, int commute,
                                          MPI_Op* op) {
  // The C call checks the arguments and makes the object; the procedure then replaces its
  // function (a Fortran procedure is never called as a C one).
  static_assert(sizeof(user_fn) == sizeof(MPI_User_function*));
  int rc = MPI_Op_create(reinterpret_cast<MPI_User_function*>(user_fn), commute, op);
  if (rc != MPI_SUCCESS) return rc;
  (*op)->fortran_function = user_fn;
  (*op)->function = nullptr;
  return MPI_SUCCESS;
}

using FortranErrhandlerFunction = void(MPI_Fint* handle, MPI_Fint* error_code);

// Fortran error handlers of communicators and windows (errhan/error.cpp, rma/window_error.cpp
// call them with the handle as an integer). The C call checks and makes the object.
extern "C" int weft_mpi_comm_create_errhandler_fortran(FortranErrhandlerFunction* function,
                                                       MPI_Errhandler* errhandler) {
  int rc = MPI_Comm_create_errhandler(reinterpret_cast<MPI_Comm_errhandler_function*>(function),
                                      errhandler);
  if (rc == MPI_SUCCESS) (*errhandler)->fortran_function = function;
  return rc;
}

extern "C" int weft_mpi_win_create_errhandler_fortran(FortranErrhandlerFunction* function,
                                                      MPI_Errhandler* errhandler) {
  int rc = MPI_Win_create_errhandler(reinterpret_cast<MPI_Win_errhandler_function*>(function),
                                     errhandler);
  if (rc == MPI_SUCCESS) (*errhandler)->fortran_function = function;
  return rc;
}
