// File hints (MPI-4.1 14.2.8), under ROMIO's names so that job scripts written for MPICH and
// Open MPI keep working. weft acts on romio_cb_write, romio_cb_read, cb_buffer_size and
// striping_unit (collective_buffer.h) and cb_nodes (the processes whose heads aggregate, between
// processes); every hint the program sets is kept and returned by MPI_File_get_info.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "io/file.h"
#include "mpi.h"

namespace weft::mpi::io {

// The hints in effect for a file just opened with `info`: weft's defaults, then those of the file
// the ROMIO_HINTS environment variable names (as ROMIO reads it), then `info`'s.
std::vector<std::pair<std::string, std::string>> initial_hints(MPI_Info info);
// MPI_File_set_info and MPI_File_set_view: `info`'s keys replace those in effect.
void update_hints(File& file, MPI_Info info);

// Collective buffering for writes (romio_cb_write) or reads (romio_cb_read): "disable" makes
// every rank access the file itself in collective calls.
bool collective_buffering(const File& file, bool write);

// How many processes' heads aggregate a collective access between processes (the cb_nodes
// hint: the first ones of the communicator's processes), or 0 when the hint is absent or not a
// positive number (every process's head does).
std::size_t aggregator_processes(const File& file);

}  // namespace weft::mpi::io
