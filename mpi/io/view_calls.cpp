// The calls on views and file pointers (MPI-4.1 14.3, 14.4.3-14.4.4) and the split collectives
// (14.4.5).
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "io/datarep.h"
#include "io/file.h"
#include "io/file_error.h"
#include "io/hints.h"
#include "io/operation.h"
#include "io/view.h"
#include "util/profiling.h"

using weft::mpi::io::check_file;
using weft::mpi::io::raise;

namespace {

int check_type(MPI_File fh, std::string_view function, std::string_view argument,
               MPI_Datatype type) {
  if (type == MPI_DATATYPE_NULL) {
    return raise(fh, function, MPI_ERR_TYPE,
                 std::string(argument) + " = MPI_DATATYPE_NULL, expected a datatype");
  }
  if (!type->committed()) {
    return raise(fh, function, MPI_ERR_TYPE,
                 std::string(argument) + " has not been committed (MPI_Type_commit)");
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
                                  MPI_Datatype filetype, const char* datarep, MPI_Info info) {
  constexpr std::string_view kFunction = "MPI_File_set_view";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_type(fh, kFunction, "etype", etype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_type(fh, kFunction, "filetype", filetype); rc != MPI_SUCCESS) return rc;
  if (datarep == nullptr) {
    return raise(fh, kFunction, MPI_ERR_UNSUPPORTED_DATAREP, "datarep = NULL");
  }
  if (disp < 0 && !((fh->amode & MPI_MODE_SEQUENTIAL) != 0 && disp == MPI_DISPLACEMENT_CURRENT)) {
    return raise(fh, kFunction, MPI_ERR_ARG,
                 "disp = " + std::to_string(disp) +
                     ", expected >= 0 (MPI_DISPLACEMENT_CURRENT only with MPI_MODE_SEQUENTIAL)");
  }
  // The filetype must be a whole number of etypes.
  if (etype->size() == 0 || filetype->size() % etype->size() != 0) {
    return raise(fh, kFunction, MPI_ERR_TYPE,
                 "filetype holds " + std::to_string(filetype->size()) +
                     " bytes, not a whole number of etypes of " + std::to_string(etype->size()) +
                     " bytes");
  }
  // MPI-4.1 14.3: the displacements of the etype and the filetype must be non-negative and
  // non-decreasing, without overlaps when the file is opened for writing. Refused as MPICH
  // refuses them (MPI_ERR_IO), before anything changes.
  const bool writable = (fh->amode & MPI_MODE_RDONLY) == 0;
  for (auto [name, type] : {std::pair{"etype", etype}, std::pair{"filetype", filetype}}) {
    if (std::string why = weft::mpi::io::layout_problem(type, writable); !why.empty()) {
      return raise(fh, kFunction, MPI_ERR_IO, std::string(name) + " " + why);
    }
  }
  const std::string representation(datarep);
  std::string detail;
  for (MPI_Datatype type : {etype, filetype}) {
    if (int rc = weft::mpi::io::check_datarep(representation, type, detail); rc != MPI_SUCCESS) {
      return raise(fh, kFunction, rc, detail);
    }
  }
  // Collective: once no rank accesses the file through the shared pointer any more, rank 0 reads
  // it (for MPI_DISPLACEMENT_CURRENT) and resets it, and every rank learns the displacement.
  PMPI_Barrier(fh->comm);
  MPI_Offset current = 0;
  if (fh->rank == 0) {
    current = fh->view.byte_offset(fh->shared_pointer->load(std::memory_order_acquire) *
                                   static_cast<MPI_Offset>(fh->view.etype_size));
    fh->shared_pointer->store(0, std::memory_order_release);
  }
  PMPI_Bcast(&current, 1, MPI_OFFSET, 0, fh->comm);
  if (disp == MPI_DISPLACEMENT_CURRENT) disp = current;
  // Nonblocking accesses issued before read the view they were planned with.
  weft::mpi::io::set(fh->view, disp, etype, filetype, representation);
  fh->pointer = 0;
  weft::mpi::io::update_hints(*fh, info);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_set_view);

extern "C" int PMPI_File_get_view(MPI_File fh, MPI_Offset* disp, MPI_Datatype* etype,
                                  MPI_Datatype* filetype, char* datarep) {
  constexpr std::string_view kFunction = "MPI_File_get_view";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  if (disp == nullptr || etype == nullptr || filetype == nullptr || datarep == nullptr) {
    return raise(fh, kFunction, MPI_ERR_ARG,
                 "disp, etype, filetype and datarep must all point where to store the view");
  }
  *disp = fh->view.disp;
  // A derived type returned is a new handle of the program's (MPI-4.1 14.3: it may free it).
  auto handle_of = [](MPI_Datatype type) {
    if (type->predefined()) return type;
    MPI_Datatype copy = MPI_DATATYPE_NULL;
    PMPI_Type_dup(type, &copy);
    return copy;
  };
  *etype = handle_of(fh->view.etype);
  *filetype = handle_of(fh->view.filetype);
  // The name and its terminator only: strncpy would pad up to MPI_MAX_DATAREP_STRING, past the
  // end of the smaller buffers programs pass.
  const std::size_t length =
      std::min<std::size_t>(fh->view.datarep.size(), MPI_MAX_DATAREP_STRING - 1);
  std::memcpy(datarep, fh->view.datarep.data(), length);
  datarep[length] = '\0';
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_get_view);

extern "C" int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint* extent) {
  constexpr std::string_view kFunction = "MPI_File_get_type_extent";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  if (datatype == MPI_DATATYPE_NULL) {
    return raise(fh, kFunction, MPI_ERR_TYPE, "datatype = MPI_DATATYPE_NULL");
  }
  if (extent == nullptr) return raise(fh, kFunction, MPI_ERR_ARG, "extent = NULL");
  if (int rc = weft::mpi::io::file_extent(fh->view.datarep, datatype, *extent); rc != MPI_SUCCESS) {
    return raise(fh, kFunction, rc,
                 "no file extent of the datatype in data representation " + fh->view.datarep);
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_get_type_extent);

namespace {

// The new position of a seek, in etypes; -1 when it would be negative.
int seek_target(MPI_File fh, MPI_Offset offset, int whence, MPI_Offset current,
                std::string_view function, MPI_Offset& target) {
  switch (whence) {
    case MPI_SEEK_SET:
      target = offset;
      break;
    case MPI_SEEK_CUR:
      target = current + offset;
      break;
    case MPI_SEEK_END: {
      // The end of the file as a position of the view: the etypes of the view before it.
      struct stat st {};
      ::fstat(fh->fd, &st);
      MPI_Offset end = 0;
      const weft::mpi::io::View& view = fh->view;
      if (view.tile_size != 0 && st.st_size > view.disp) {
        const MPI_Offset tiles = (st.st_size - view.disp) / view.extent;
        MPI_Offset bytes = tiles * static_cast<MPI_Offset>(view.tile_size);
        const MPI_Offset rest = st.st_size - view.disp - tiles * view.extent;
        for (const weft::mpi::io::Extent& block : view.blocks) {
          if (block.offset >= rest) break;
          bytes += std::min<MPI_Offset>(static_cast<MPI_Offset>(block.length), rest - block.offset);
        }
        end = (bytes + static_cast<MPI_Offset>(view.etype_size) - 1) /
              static_cast<MPI_Offset>(view.etype_size);
      }
      target = end + offset;
      break;
    }
    default:
      return raise(fh, function, MPI_ERR_ARG,
                   "whence = " + std::to_string(whence) +
                       ", expected MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END");
  }
  if (target < 0) {
    return raise(fh, function, MPI_ERR_ARG,
                 "the seek would move the file pointer to " + std::to_string(target) +
                     ", before the start of the view");
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence) {
  constexpr std::string_view kFunction = "MPI_File_seek";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  if ((fh->amode & MPI_MODE_SEQUENTIAL) != 0) {
    return raise(fh, kFunction, MPI_ERR_UNSUPPORTED_OPERATION,
                 "the file was opened with MPI_MODE_SEQUENTIAL");
  }
  MPI_Offset target = 0;
  if (int rc = seek_target(fh, offset, whence, fh->pointer, kFunction, target); rc != MPI_SUCCESS) {
    return rc;
  }
  fh->pointer = target;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_seek);

extern "C" int PMPI_File_get_position(MPI_File fh, MPI_Offset* offset) {
  constexpr std::string_view kFunction = "MPI_File_get_position";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  if (offset == nullptr) return raise(fh, kFunction, MPI_ERR_ARG, "offset = NULL");
  *offset = fh->pointer;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_get_position);

extern "C" int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence) {
  constexpr std::string_view kFunction = "MPI_File_seek_shared";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  // Collective: every rank has finished its accesses through the pointer before it moves, and
  // sees it moved on return.
  PMPI_Barrier(fh->comm);
  int rc = MPI_SUCCESS;
  if (fh->rank == 0) {
    MPI_Offset target = 0;
    rc = seek_target(fh, offset, whence, fh->shared_pointer->load(std::memory_order_acquire),
                     kFunction, target);
    if (rc == MPI_SUCCESS) fh->shared_pointer->store(target, std::memory_order_release);
  }
  PMPI_Bcast(&rc, 1, MPI_INT, 0, fh->comm);
  // Every rank returns the class rank 0 raised, each on its own handler.
  if (rc != MPI_SUCCESS && fh->rank != 0) {
    return raise(fh, kFunction, rc, "rank 0 of the file's group refused the seek");
  }
  return rc;
}
WEFT_MPI_ALIAS(MPI_File_seek_shared);

extern "C" int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset* offset) {
  constexpr std::string_view kFunction = "MPI_File_get_position_shared";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  if (offset == nullptr) return raise(fh, kFunction, MPI_ERR_ARG, "offset = NULL");
  *offset = fh->shared_pointer->load(std::memory_order_acquire);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_get_position_shared);

extern "C" int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset* disp) {
  constexpr std::string_view kFunction = "MPI_File_get_byte_offset";
  if (int rc = check_file(fh, kFunction); rc != MPI_SUCCESS) return rc;
  if (disp == nullptr) return raise(fh, kFunction, MPI_ERR_ARG, "disp = NULL");
  if (offset < 0) {
    return raise(fh, kFunction, MPI_ERR_ARG,
                 "offset = " + std::to_string(offset) + ", expected >= 0");
  }
  *disp = fh->view.byte_offset(offset * static_cast<MPI_Offset>(fh->view.etype_size));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_File_get_byte_offset);

// Split collectives: _begin starts the collective access as the nonblocking call would, so it
// goes on until _end waits for it; an ordered one (which places the ranks with collectives of the
// caller's thread) is done in _begin. One split collective per file at a time (MPI-4.1 14.4.5).
namespace {

using weft::mpi::io::Operation;
using weft::mpi::io::Position;

int begin(MPI_File fh, const Operation& op) {
  if (int rc = check_file(fh, op.function); rc != MPI_SUCCESS) return rc;
  if (fh->split.active) {
    return raise(fh, op.function, MPI_ERR_OTHER,
                 "a split collective is already active on this file; end it first");
  }
  fh->split.active = true;
  fh->split.buffer = op.buffer;
  fh->split.request = MPI_REQUEST_NULL;
  fh->split.rc = op.position == Position::shared
                     ? weft::mpi::io::run_ordered(fh, op, &fh->split.status)
                     : weft::mpi::io::start(fh, op, &fh->split.request);
  return fh->split.rc;
}

int end(MPI_File fh, const void* buffer, std::string_view function, MPI_Status* status) {
  if (int rc = check_file(fh, function); rc != MPI_SUCCESS) return rc;
  if (!fh->split.active) {
    return raise(fh, function, MPI_ERR_OTHER,
                 "no split collective is active on this file (its _begin call is missing)");
  }
  if (buffer != fh->split.buffer) {
    return raise(fh, function, MPI_ERR_BUFFER,
                 "buf is not the buffer the matching _begin call named");
  }
  fh->split.active = false;
  if (fh->split.request != MPI_REQUEST_NULL) {
    fh->split.rc = PMPI_Wait(&fh->split.request, &fh->split.status);
  }
  if (status != MPI_STATUS_IGNORE) *status = fh->split.status;
  return fh->split.rc;
}

}  // namespace

extern "C" int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void* buf, int count,
                                           MPI_Datatype datatype) {
  return begin(fh, Operation{"MPI_File_read_at_all_begin", Position::explicit_offset, false, true,
                             offset, const_cast<void*>(buf), count, datatype});
}
WEFT_MPI_ALIAS(MPI_File_read_at_all_begin);

extern "C" int PMPI_File_read_at_all_end(MPI_File fh, void* buf, MPI_Status* status) {
  return end(fh, buf, "MPI_File_read_at_all_end", status);
}
WEFT_MPI_ALIAS(MPI_File_read_at_all_end);

extern "C" int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void* buf,
                                            int count, MPI_Datatype datatype) {
  return begin(fh, Operation{"MPI_File_write_at_all_begin", Position::explicit_offset, true, true,
                             offset, const_cast<void*>(buf), count, datatype});
}
WEFT_MPI_ALIAS(MPI_File_write_at_all_begin);

extern "C" int PMPI_File_write_at_all_end(MPI_File fh, const void* buf, MPI_Status* status) {
  return end(fh, buf, "MPI_File_write_at_all_end", status);
}
WEFT_MPI_ALIAS(MPI_File_write_at_all_end);

extern "C" int PMPI_File_read_all_begin(MPI_File fh, void* buf, int count, MPI_Datatype datatype) {
  return begin(fh, Operation{"MPI_File_read_all_begin", Position::individual, false, true, 0,
                             const_cast<void*>(buf), count, datatype});
}
WEFT_MPI_ALIAS(MPI_File_read_all_begin);

extern "C" int PMPI_File_read_all_end(MPI_File fh, void* buf, MPI_Status* status) {
  return end(fh, buf, "MPI_File_read_all_end", status);
}
WEFT_MPI_ALIAS(MPI_File_read_all_end);

extern "C" int PMPI_File_write_all_begin(MPI_File fh, const void* buf, int count,
                                         MPI_Datatype datatype) {
  return begin(fh, Operation{"MPI_File_write_all_begin", Position::individual, true, true, 0,
                             const_cast<void*>(buf), count, datatype});
}
WEFT_MPI_ALIAS(MPI_File_write_all_begin);

extern "C" int PMPI_File_write_all_end(MPI_File fh, const void* buf, MPI_Status* status) {
  return end(fh, buf, "MPI_File_write_all_end", status);
}
WEFT_MPI_ALIAS(MPI_File_write_all_end);

extern "C" int PMPI_File_read_ordered_begin(MPI_File fh, void* buf, int count,
                                            MPI_Datatype datatype) {
  return begin(fh, Operation{"MPI_File_read_ordered_begin", Position::shared, false, true, 0,
                             const_cast<void*>(buf), count, datatype});
}
WEFT_MPI_ALIAS(MPI_File_read_ordered_begin);

extern "C" int PMPI_File_read_ordered_end(MPI_File fh, void* buf, MPI_Status* status) {
  return end(fh, buf, "MPI_File_read_ordered_end", status);
}
WEFT_MPI_ALIAS(MPI_File_read_ordered_end);

extern "C" int PMPI_File_write_ordered_begin(MPI_File fh, const void* buf, int count,
                                             MPI_Datatype datatype) {
  return begin(fh, Operation{"MPI_File_write_ordered_begin", Position::shared, true, true, 0,
                             const_cast<void*>(buf), count, datatype});
}
WEFT_MPI_ALIAS(MPI_File_write_ordered_begin);

extern "C" int PMPI_File_write_ordered_end(MPI_File fh, const void* buf, MPI_Status* status) {
  return end(fh, buf, "MPI_File_write_ordered_end", status);
}
WEFT_MPI_ALIAS(MPI_File_write_ordered_end);
