// Who makes an MPI call: found once at the top of a call (from the calling thread's rank) and
// handed down, rather than looked up again at every step of the hot path.
#pragma once

namespace weft::mpi {

struct RankState;

struct Caller {
  int world_rank = -1;
  int comm_rank = -1;  // in the communicator of the call
  RankState* state = nullptr;
};

}  // namespace weft::mpi
