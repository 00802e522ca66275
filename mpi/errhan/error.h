// Raising MPI errors and the argument checks every MPI function shares. Each check returns
// MPI_SUCCESS, or raises the error on the communicator's handler (for the calling rank) and
// returns its class, so a function reads:
//
//   if (int rc = check_comm("MPI_Send", comm); rc != MPI_SUCCESS) return rc;
//
// Messages name the function, the calling rank, the error class, the argument and what was
// expected, e.g. "weft: MPI_Send (rank 3): MPI_ERR_RANK: dest = 17, expected 0..7 (the size of
// MPI_COMM_WORLD) or MPI_PROC_NULL".
#pragma once

#include <string>
#include <string_view>

#include "mpi.h"

namespace weft::mpi {

// Invokes the calling rank's error handler of `comm` (MPI_COMM_NULL or an invalid communicator:
// that of MPI_COMM_WORLD, as MPI-3.1 8.3 says for errors not tied to a communicator).
// MPI_ERRORS_ARE_FATAL prints the message and ends the whole job with a non-zero status;
// MPI_ERRORS_RETURN returns; a user handler is called with the class. Returns error_class.
int raise(MPI_Comm comm, std::string_view function, int error_class, std::string_view detail);

std::string_view error_class_name(int error_class);  // "MPI_ERR_RANK"; "MPI_ERR_UNKNOWN" if none

// MPI_Init or MPI_Init_thread has run in the caller's rank and MPI_Finalize has not; the caller
// is a thread of a rank (an mpi_task or a thread it spawned). Errors here are always fatal:
// there is no handler yet (or any more) to call.
int check_initialized(std::string_view function);
// The same for a caller whose world rank (caller_world_rank()) the function has looked up once
// for all its checks and its work: each lookup reads the current thread through thread-local data.
int check_initialized(std::string_view function, int world_rank);

// A communicator handle the calling rank may use: not null, not freed, and the caller a member.
int check_comm(MPI_Comm comm, std::string_view function);
// The same for the caller of world rank `world_rank`, as check_initialized has let it through.
int check_comm(MPI_Comm comm, std::string_view function, int world_rank);
// count >= 0.
int check_count(MPI_Comm comm, std::string_view function, std::string_view argument, int count);
// Not null, and committed unless predefined.
int check_datatype(MPI_Comm comm, std::string_view function, std::string_view argument,
                   MPI_Datatype datatype);
// A null buffer is refused when count > 0 and the datatype holds data at relative addresses
// (absolute ones, built with MPI_Get_address, are meant to be used with MPI_BOTTOM).
int check_buffer(MPI_Comm comm, std::string_view function, std::string_view argument,
                 const void* buffer, int count, MPI_Datatype datatype);
// A tag a send may use (0..MPI_TAG_UB) or, with allow_any, MPI_ANY_TAG too.
int check_tag(MPI_Comm comm, std::string_view function, int tag, bool allow_any);
// A rank of `comm`, MPI_PROC_NULL, or with allow_any MPI_ANY_SOURCE too. `argument` names it
// ("dest", "source", "root").
int check_rank(MPI_Comm comm, std::string_view function, std::string_view argument, int rank,
               bool allow_any);
// Not null, not freed.
int check_op(MPI_Comm comm, std::string_view function, MPI_Op op);

// The largest tag (the MPI_TAG_UB attribute).
constexpr int kTagUpperBound = (1 << 30) - 1;

}  // namespace weft::mpi
