// Data representations (MPI-4.1 14.5): "native" and "internal" store the memory bytes as they are;
// "external32" is the portable big-endian form of MPI_Pack_external; MPI_Register_datarep adds
// representations whose conversion functions the program gives. Views keep the byte layout of
// memory: a representation whose sizes differ from the native ones is refused when the view is
// set (MPI_ERR_UNSUPPORTED_DATAREP), never misplaced in the file.
#pragma once

#include <cstddef>
#include <string>

#include "mpi.h"

namespace weft::mpi::io {

// MPI_SUCCESS when `datarep` is known and keeps the sizes of `type` (and of each type a view
// uses); else the class, with `detail` saying why.
int check_datarep(const std::string& datarep, MPI_Datatype type, std::string& detail);

// The file representation of `count` elements of `datatype` at `buffer` into `out`
// (count * size bytes), and back. Return MPI_SUCCESS or the conversion's error.
int to_file(const std::string& datarep, const void* buffer, std::size_t count,
            MPI_Datatype datatype, std::byte* out, MPI_Offset position);
int from_file(const std::string& datarep, const std::byte* in, void* buffer, std::size_t count,
              MPI_Datatype datatype, MPI_Offset position);

// The extent of `datatype` in the file under `datarep` (MPI_File_get_type_extent).
int file_extent(const std::string& datarep, MPI_Datatype datatype, MPI_Aint& extent);

}  // namespace weft::mpi::io
