// Reduction operations: the predefined ones on the types MPI-3.1 5.9.2 allows, and user ones.
#pragma once

#include <cstddef>
#include <string_view>

#include "mpi.h"

namespace weft::mpi {

// inout[i] = in[i] op inout[i] for `count` elements of `type` (the MPI_User_function order: `in`
// is the left operand). Returns MPI_SUCCESS, or MPI_ERR_OP when `op` is not defined on `type`
// (then nothing is written).
int apply(MPI_Op op, const void* in, void* inout, std::size_t count, MPI_Datatype type);
bool commutative(MPI_Op op);
// A pending operation keeps a user operation alive past MPI_Op_free; predefined ones are never
// counted.
void retain(MPI_Op op);
void release(MPI_Op op);
bool defined_for(MPI_Op op, MPI_Datatype type);
std::string_view name(MPI_Op op);  // "MPI_SUM", or "user operation"

}  // namespace weft::mpi
