// How a member lets go of a communicator: the object is shared by its members, each of which
// frees it once (MPI_Comm_free); the last one deletes it.
#pragma once

#include "mpi.h"

namespace weft::mpi {

// Marks the caller's slot of `comm` freed and drops its reference, deleting the communicator when
// it was the last. The predefined communicators are never deleted.
void leave(MPI_Comm comm);

}  // namespace weft::mpi
