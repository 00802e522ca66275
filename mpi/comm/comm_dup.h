// Duplicating a communicator, shared by MPI_Comm_dup, MPI_Comm_dup_with_info, MPI_Comm_idup and
// MPI_Comm_idup_with_info, and the info hints a communicator carries.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/communicator.h"
#include "mpi.h"

namespace weft::mpi {

using Hints = std::vector<std::pair<std::string, std::string>>;

// The numbers of the caller's next duplication of `comm`: that of an intracommunicator meets in
// comm's ring (coll/meeting.h), that of an intercommunicator between the two groups' leaders.
CallNumber next_duplication(MPI_Comm comm);

// The caller's duplicate of `comm` (intra- or intercommunicator), made as its collective call
// `number` on comm: taken when the call was made, so that a nonblocking duplication keeps its
// place among the caller's collectives and in comm's ring. The new communicator has comm's
// attributes (through their copy callbacks), its error handler, and `hints` (comm's own when
// null). Writes *newcomm and returns MPI_SUCCESS, or raises the error on comm.
int duplicate(MPI_Comm comm, std::string_view function, CallNumber number, const Hints* hints,
              MPI_Comm* newcomm);

}  // namespace weft::mpi
