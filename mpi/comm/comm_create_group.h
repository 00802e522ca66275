// A communicator made by the members of a group alone (MPI_Comm_create_group, and
// MPI_Comm_create_from_group over the world): the rest of comm takes no part.
#pragma once

#include <string_view>

#include "mpi.h"

namespace weft::mpi {

// The members of `group` (a subset of comm's) meet in comm's collective context under
// `wire_tag`; each gets the new communicator in *newcomm with comm's error handler, a caller
// outside the group MPI_COMM_NULL. Raises on comm under `function` and returns the error class.
int create_from_members(MPI_Comm comm, MPI_Group group, int wire_tag, std::string_view function,
                        MPI_Comm* newcomm);

}  // namespace weft::mpi
