// The info hints of a window (MPI-4.1 12.2.1): the keys weft knows, their defaults, and what
// MPI_Win_get_info reports. weft's synchronization does not depend on them (every lock word and
// accumulate lock exists whatever the hints say), so they are recorded and reported, and their
// values checked.
#pragma once

#include <string_view>

#include "mpi.h"

namespace weft::mpi::rma {

// A value weft does not understand for a key it knows is MPI_ERR_INFO_VALUE.
int check_hints(MPI_Comm comm, std::string_view function, MPI_Info info);
// The defaults, then what `info` sets.
void set_hints(weft_mpi_win& win, MPI_Info info);

}  // namespace weft::mpi::rma
