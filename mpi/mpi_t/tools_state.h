// The state of the tools interface that its calls share: whether MPI_T is initialised for the
// calling rank (MPI_T_init_thread and MPI_T_finalize nest, and work before MPI_Init and after
// MPI_Finalize), and the copying of names and descriptions as MPI-4.1 15.3.3 says.
#pragma once

#include <string>

namespace weft::mpi::tools {

// MPI_T_init_thread / MPI_T_finalize of the calling rank (or of a thread of no rank): returns
// the new nesting depth, or -1 when finalize found none.
int enter();
int leave();
// MPI_SUCCESS when the calling rank is inside MPI_T_init_thread, else MPI_T_ERR_NOT_INITIALIZED.
int check_initialized();

// Copies `text` into `out` (at most *length - 1 characters and a terminator) and sets *length to
// the whole text's length + 1; with *length == 0 or `out` null only the length is set; with
// `length` null nothing is touched.
void copy_string(const std::string& text, char* out, int* length);

}  // namespace weft::mpi::tools
