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

}  // namespace weft::mpi::collective
