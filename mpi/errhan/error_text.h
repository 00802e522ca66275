// What each error class means, for MPI_Error_string.
#pragma once

#include <string_view>

namespace weft::mpi {

// "invalid rank" for MPI_ERR_RANK; empty when `error_class` is none weft knows.
std::string_view error_class_description(int error_class);

}  // namespace weft::mpi
