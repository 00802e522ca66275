// Generalized requests (MPI-4.1 13.2): operations the program carries out itself and completes
// with MPI_Grequest_complete, waited for and tested like any request. The waiting calls reach
// them through these hooks.
#pragma once

#include "mpi.h"
#include "request/request.h"

namespace weft::mpi {

// At collection by a wait or test: query_fn fills the status, then free_fn runs. Returns the
// first error either returned (MPI_SUCCESS when none), also stored in the status's MPI_ERROR.
int collect_generalized(Request& request);

// MPI_Request_get_status's part: query_fn fills request.status (the request stays).
int query_generalized(Request& request);

}  // namespace weft::mpi
