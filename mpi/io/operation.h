// One data access call (MPI-4.1 14.4): what it names (explicit offset, individual or shared file
// pointer; blocking, nonblocking or split collective) and the steps every call shares: the checks,
// where its data starts in the view, the access itself, its status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "io/file.h"
#include "mpi.h"

namespace weft::mpi::io {

enum class Position : std::uint8_t { explicit_offset, individual, shared };

struct Operation {
  std::string_view function;
  Position position = Position::explicit_offset;
  bool write = false;
  bool collective = false;
  MPI_Offset offset = 0;  // explicit offsets, in etypes
  void* buffer = nullptr;
  MPI_Count count = 0;
  MPI_Datatype datatype = MPI_BYTE;
};

// A blocking call.
int run(MPI_File file, const Operation& op, MPI_Status* status);
// A nonblocking call (the MPI_File_i* calls): the access runs on a helper thread of the rank,
// its system calls on spare kernel threads of the I/O manager, and completes `request`.
int start(MPI_File file, const Operation& op, MPI_Request* request);
// MPI_File_read_ordered and MPI_File_write_ordered: collective, through the shared pointer in
// rank order.
int run_ordered(MPI_File file, const Operation& op, MPI_Status* status);

}  // namespace weft::mpi::io
