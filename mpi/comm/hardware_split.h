// The hardware levels of MPI_Comm_split_type (MPI-4.1 7.4.2): MPI_COMM_TYPE_HW_GUIDED with the
// "mpi_hw_resource_type" info key, and MPI_COMM_TYPE_HW_UNGUIDED.
#pragma once

#include <string>
#include <string_view>

#include "mpi.h"

namespace weft::mpi {

// The caller's color for a split of `comm` by hardware (MPI_UNDEFINED: no communicator), or an
// error class with *problem saying why. MPI_COMM_TYPE_HW_UNGUIDED exchanges the members' places
// over comm (a collective call on it) and writes the level it chose into `info` as
// "mpi_hw_resource_type", as MPI-4.1 has it.
int hardware_color(MPI_Comm comm, int split_type, MPI_Info info, int* color, std::string* problem);

}  // namespace weft::mpi
