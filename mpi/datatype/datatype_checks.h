// Argument checks shared by the datatype functions. Datatype errors belong to no communicator:
// they go to MPI_COMM_WORLD's handler (MPI-3.1 8.3).
#pragma once

#include <string>
#include <string_view>

#include "errhan/error.h"
#include "mpi.h"

namespace weft::mpi::datatype_checks {

inline int fail(std::string_view function, int error_class, const std::string& detail) {
  return raise(MPI_COMM_WORLD, function, error_class, detail);
}

// Any datatype handle, committed or not (constructors and queries accept both).
inline int type(std::string_view function, std::string_view argument, MPI_Datatype datatype) {
  if (datatype != MPI_DATATYPE_NULL) return MPI_SUCCESS;
  return fail(function, MPI_ERR_TYPE,
              std::string(argument) + " = MPI_DATATYPE_NULL, expected a datatype");
}

inline int count(std::string_view function, std::string_view argument, long long value) {
  if (value >= 0) return MPI_SUCCESS;
  return fail(function, MPI_ERR_COUNT,
              std::string(argument) + " = " + std::to_string(value) + ", expected >= 0");
}

inline int block_length(std::string_view function, std::string_view argument, long long value) {
  if (value >= 0) return MPI_SUCCESS;
  return fail(function, MPI_ERR_ARG,
              std::string(argument) + " = " + std::to_string(value) + ", expected >= 0");
}

// An array the function reads `count` entries of, or a pointer it writes.
inline int pointer(std::string_view function, std::string_view argument, const void* p,
                   long long count = 1) {
  if (p != nullptr || count <= 0) return MPI_SUCCESS;
  return fail(function, MPI_ERR_ARG,
              std::string(argument) + " = NULL, expected " +
                  (count == 1 ? std::string("a pointer")
                              : "an array of " + std::to_string(count) + " entries"));
}

}  // namespace weft::mpi::datatype_checks
