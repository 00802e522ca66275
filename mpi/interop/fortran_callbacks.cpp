// The objects Fortran code creates with procedures of its own, whose arguments differ from the C
// callbacks' (handles are integers): libweft keeps the Fortran procedure and calls it with
// converted arguments. For the Fortran-callable layer (mpi/fortran/custom_bindings.c).
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
