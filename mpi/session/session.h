// A session (MPI-4.1 11.3): a rank's handle on MPI that needs no MPI_Init. While a rank holds an
// open session it may call MPI (RankState::phase is initialized), whatever the world model's
// state; sessions nest with each other and with MPI_Init / MPI_Finalize, so a library can start
// and end MPI on its own, as often as it wants, beside a program that uses MPI_COMM_WORLD.
//
// Process sets: "mpi://WORLD" (every rank of the job) and "mpi://SELF" (the caller alone), the
// two the standard names; names compare without regard to case, as MPICH and Open MPI do.
#pragma once

#include <string>
#include <string_view>

#include "mpi.h"

struct weft_mpi_session {
  int owner = -1;  // world rank
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  int thread_level = MPI_THREAD_MULTIPLE;
};

namespace weft::mpi::session {

// Invokes the session's error handler (a null or invalid session: MPI_ERRORS_ARE_FATAL, as for
// errors of MPI_Session_init itself), as errhan/error.h's raise does for communicators.
int raise(MPI_Session session, std::string_view function, int error_class, std::string_view detail);

// MPI_SUCCESS when `session` is one the calling rank opened and has not finalized.
int check(MPI_Session session, std::string_view function);

// The process sets, by index; the index of a name, -1 when there is none.
inline constexpr std::string_view kPsets[] = {"mpi://WORLD", "mpi://SELF"};
int pset_index(std::string_view name);

}  // namespace weft::mpi::session
