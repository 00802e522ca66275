// The thread that completes a request on behalf of its rank (a nonblocking collective between
// processes, MPI_Comm_idup, MPI_Isendrecv): an mpi_task of the request's rank on the caller's
// core, so it shares the rank's core as the rank's own work does. A kernel thread the rank
// started (docs/privatization.md) runs on no core of weft's: then the helper may run anywhere.
#pragma once

#include "weft/this_thread.h"
#include "weft/thread.h"

namespace weft::mpi {

inline ThreadAttr helper_thread(int world_rank, bool run_at_once) {
  ThreadAttr attr;
  attr.type = ThreadType::mpi_task;
  attr.rank = world_rank;
  const int vp = this_thread::vp();
  attr.placement = vp >= 0 ? Placement::pinned(vp) : Placement::free();
  attr.run_at_once = run_at_once;
  return attr;
}

}  // namespace weft::mpi
