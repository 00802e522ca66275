#include "coll/ring_call.h"

#include <string>

#include "init/fatal.h"

namespace weft::mpi::collective {

void ring_kind_mismatch(std::uint64_t call, std::string_view function, SlotKind other) {
  const char* names[] = {"?",          "MPI_Bcast", "MPI_Reduce", "MPI_Allreduce", "MPI_Allgather",
                         "MPI_Barrier"};
  end_job("collective call " + std::to_string(call) + ": " + std::string(function) + " here, " +
          names[static_cast<int>(other)] +
          " at another member (MPI-3.1 5.12: every member makes the same collective calls in "
          "the same order)");
}

void note_nonblocking_call(Comm& comm, std::uint64_t call) {
  const int size = comm.size();
  if (size < 2 || size > FanRing::kMaxMembers) return;
  const int me = comm.rank_of(caller_world_rank());
  if (size == 2) {
    comm.meetings.pair_ring().note_nonblocking(me, call);
  } else {
    comm.meetings.fan_ring(size).note_nonblocking(me, call);
  }
}

}  // namespace weft::mpi::collective
