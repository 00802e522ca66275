// The operation object behind an MPI_Op handle, private to op*.cpp.
#pragma once

#include <atomic>
#include <cstdint>

#include "mpi.h"

namespace weft::mpi {

enum class OpKind : std::uint8_t {
  max,
  min,
  sum,
  prod,
  land,
  band,
  lor,
  bor,
  lxor,
  bxor,
  maxloc,
  minloc,
  replace,
  no_op,
  user,
};

// A user function from Fortran's MPI_OP_CREATE: its datatype is a Fortran integer (mpi/interop/).
using FortranUserFunction = void(void* invec, void* inoutvec, MPI_Fint* len, MPI_Fint* datatype);

}  // namespace weft::mpi

struct weft_mpi_op {
  weft::mpi::OpKind kind;
  MPI_User_function* function;  // user operations only
  bool commutative;
  const char* name;
  // User operations: one for the handle, one per pending operation that uses it.
  std::atomic<int> references{1};
  weft::mpi::FortranUserFunction* fortran_function = nullptr;  // instead of `function`
  MPI_User_function_c* large_function = nullptr;  // MPI_Op_create_c's, instead of `function`
};
