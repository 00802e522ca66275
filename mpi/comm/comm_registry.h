// How the members of this process of a new communicator come to share its one object when they
// do not all meet in one Meeting (an intercommunicator's two groups, MPI_Comm_create_group's
// subset): each member learns the new communicator's context, unique in the job, and asks for the
// object registered under it; the first to ask makes it.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "mpi.h"

namespace weft::mpi {

// The communicator registered under `key` (a context number from allocate_context()), made by
// make() for the first of its `joining` members of this process to ask; the entry is forgotten
// once all of them have asked.
MPI_Comm adopt(std::uint32_t key, int joining, const std::function<MPI_Comm()>& make);

// How many of these world ranks this process holds.
int local_count(const std::vector<int>& world_ranks);

}  // namespace weft::mpi
