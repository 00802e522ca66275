// What the calls that make a topology share: the new communicator and where its members run.
#pragma once

#include <memory>

#include "mpi.h"
#include "topo/grid_placement.h"
#include "topo/topology.h"

namespace weft::mpi {

// Collective over `old_comm`: the caller gets a new communicator in which it has rank
// `new_rank` (MPI_UNDEFINED: none, *new_comm = MPI_COMM_NULL), carrying `topology`. Errors are
// raised on old_comm.
int make_topology_comm(MPI_Comm old_comm, int new_rank, std::shared_ptr<const Topology> topology,
                       MPI_Comm* new_comm);

// Where the calling rank runs: its process, and the core and NUMA node of its virtual processor.
RankLocation my_location();

}  // namespace weft::mpi
