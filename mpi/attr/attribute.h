// Attribute caching (MPI-4.1 7.7) as the communicator calls use it. Attribute values are per
// rank: each member keeps its own in its slot of the communicator
// (weft_mpi_comm::Local::attributes), as each MPI process would. The machinery for every kind of
// object is in attr/attribute_set.h and attr/keyval.h.
#pragma once

#include <string_view>

#include "attr/attribute_set.h"
#include "attr/keyval.h"
#include "mpi.h"

namespace weft::mpi {

// MPI_Comm_dup's part: copies the caller's attributes of `parent` onto its slot of `child`
// through the keyvals' copy callbacks. A failing callback fails the call: the attributes copied so
// far are deleted again and the callback's code is raised on `parent` and returned.
int copy_attributes(MPI_Comm parent, MPI_Comm child, std::string_view function);

// Runs the delete callbacks of all the caller's attributes on `comm` (MPI_Comm_free, and
// MPI_Finalize for MPI_COMM_SELF), last set first, removing each. A failing callback stops
// there: its code is raised on `comm` and returned, and the remaining attributes stay.
int delete_attributes(MPI_Comm comm, std::string_view function);

}  // namespace weft::mpi
