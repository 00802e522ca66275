// Error handlers (MPI_Errhandler): the two predefined ones and those made by
// MPI_Comm_create_errhandler.
#pragma once

#include "mpi.h"

struct weft_mpi_errhandler {
  // Called with the communicator and the error class; null for the predefined handlers.
  MPI_Comm_errhandler_function* function = nullptr;
  // Made from Fortran (mpi/interop/fortran_callbacks.cpp): called instead, with the communicator
  // or window as its Fortran integer.
  void (*fortran_function)(MPI_Fint* handle, MPI_Fint* error_code) = nullptr;
};
