#include "rma/epoch.h"

#include <algorithm>
#include <string>

#include "rma/window_error.h"

namespace weft::mpi::rma {

int check_access(Window& win, int target, std::string_view function) {
  const Epochs& e = win.epochs;
  if (e.fence_open || e.lock_all || e.locks[static_cast<std::size_t>(target)] != 0) {
    return MPI_SUCCESS;
  }
  if (e.access == Access::pscw &&
      std::find(e.start_group.begin(), e.start_group.end(), target) != e.start_group.end()) {
    return MPI_SUCCESS;
  }
  return raise(&win, function, MPI_ERR_RMA_SYNC,
               "no access epoch toward rank " + std::to_string(target) +
                   " is open on win, expected a fence, MPI_Win_start with that rank, or a lock "
                   "on it");
}

}  // namespace weft::mpi::rma
