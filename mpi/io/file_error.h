// Errors on files: raised on the file's error handler, MPI_ERRORS_RETURN unless the program set
// another (MPI-4.1 9.3: I/O errors are usually not fatal). Errors of MPI_File_open and
// MPI_File_delete, which have no file yet, go to the handler of MPI_FILE_NULL: the default for
// files opened later, which the program may change with MPI_File_set_errhandler(MPI_FILE_NULL).
#pragma once

#include <string>
#include <string_view>

#include "mpi.h"

namespace weft::mpi::io {

// Invokes the calling rank's handler of `file` (of MPI_FILE_NULL when `file` is null or not
// live). The message names the call, the rank, the class and `detail`. Returns error_class.
int raise(MPI_File file, std::string_view function, int error_class, std::string_view detail);

// MPI_Init has run and `file` is an open file.
int check_file(MPI_File file, std::string_view function);

// The error class of a failed system call's errno (MPI_ERR_NO_SUCH_FILE for ENOENT,
// MPI_ERR_NO_SPACE for ENOSPC...), and a detail naming the operation, the file and the system's
// text.
int class_of_errno(int error);
std::string errno_detail(std::string_view what, std::string_view filename, int error);

// The calling rank's default handler for files (that of MPI_FILE_NULL).
MPI_Errhandler default_errhandler();

}  // namespace weft::mpi::io
