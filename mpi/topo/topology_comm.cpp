// Making the communicator of a new topology: a split of the old one in which every member
// that takes part gets the key of its new rank, then its topology attached.
#include "topo/topology_comm.h"

#include <utility>

#include "comm/communicator.h"
#include "init/world.h"
#include "weft/scheduler.h"
#include "weft/this_thread.h"

namespace weft::mpi {

int make_topology_comm(MPI_Comm old_comm, int new_rank, std::shared_ptr<const Topology> topology,
                       MPI_Comm* new_comm) {
  const int color = new_rank == MPI_UNDEFINED ? MPI_UNDEFINED : 0;
  if (int rc = PMPI_Comm_split(old_comm, color, new_rank, new_comm); rc != MPI_SUCCESS) {
    return rc;
  }
  if (*new_comm != MPI_COMM_NULL) attach(*new_comm, std::move(topology));
  return MPI_SUCCESS;
}

RankLocation my_location() {
  RankLocation here;
  here.process = world()->process();
  // A rank is pinned to its virtual processor for its whole life.
  const int vp = this_thread::vp();
  const Scheduler* scheduler = Scheduler::current();
  if (vp >= 0 && scheduler != nullptr) {
    here.core = scheduler->vp_core(vp);
    here.numa = scheduler->vp_numa(vp);
  }
  return here;
}

}  // namespace weft::mpi
