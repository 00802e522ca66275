// The data access calls of MPI-4.1 14.4, each a row of one table: what it names (explicit offset,
// individual or shared file pointer), whether it writes, whether it is collective, and whether
// it blocks. io/operation.cpp does the work.
#include "io/operation.h"
#include "util/profiling.h"

using weft::mpi::io::Operation;
using weft::mpi::io::Position;

extern "C" int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void* buf, int count,
                                 MPI_Datatype datatype, MPI_Status* status) {
  return weft::mpi::io::run(fh,
                            Operation{"MPI_File_read_at", Position::explicit_offset, false, false,
                                      offset, const_cast<void*>(buf), count, datatype},
                            status);
}
WEFT_MPI_ALIAS(MPI_File_read_at);

extern "C" int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                                     MPI_Datatype datatype, MPI_Status* status) {
  return weft::mpi::io::run(fh,
                            Operation{"MPI_File_read_at_all", Position::explicit_offset, false,
                                      true, offset, const_cast<void*>(buf), count, datatype},
                            status);
}
WEFT_MPI_ALIAS(MPI_File_read_at_all);

extern "C" int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                  MPI_Datatype datatype, MPI_Status* status) {
  return weft::mpi::io::run(fh,
                            Operation{"MPI_File_write_at", Position::explicit_offset, true, false,
                                      offset, const_cast<void*>(buf), count, datatype},
                            status);
}
WEFT_MPI_ALIAS(MPI_File_write_at);

extern "C" int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                      MPI_Datatype datatype, MPI_Status* status) {
  return weft::mpi::io::run(fh,
                            Operation{"MPI_File_write_at_all", Position::explicit_offset, true,
                                      true, offset, const_cast<void*>(buf), count, datatype},
                            status);
}
WEFT_MPI_ALIAS(MPI_File_write_at_all);

extern "C" int PMPI_File_iread_at(MPI_File fh, MPI_Offset offset, void* buf, int count,
                                  MPI_Datatype datatype, MPI_Request* request) {
  return weft::mpi::io::start(fh,
                              Operation{"MPI_File_iread_at", Position::explicit_offset, false,
                                        false, offset, const_cast<void*>(buf), count, datatype},
                              request);
}
WEFT_MPI_ALIAS(MPI_File_iread_at);

extern "C" int PMPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                   MPI_Datatype datatype, MPI_Request* request) {
  return weft::mpi::io::start(fh,
                              Operation{"MPI_File_iwrite_at", Position::explicit_offset, true,
                                        false, offset, const_cast<void*>(buf), count, datatype},
                              request);
}
WEFT_MPI_ALIAS(MPI_File_iwrite_at);

extern "C" int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void* buf, int count,
                                      MPI_Datatype datatype, MPI_Request* request) {
  return weft::mpi::io::start(fh,
                              Operation{"MPI_File_iread_at_all", Position::explicit_offset, false,
                                        true, offset, const_cast<void*>(buf), count, datatype},
                              request);
}
WEFT_MPI_ALIAS(MPI_File_iread_at_all);

extern "C" int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void* buf, int count,
                                       MPI_Datatype datatype, MPI_Request* request) {
  return weft::mpi::io::start(fh,
                              Operation{"MPI_File_iwrite_at_all", Position::explicit_offset, true,
                                        true, offset, const_cast<void*>(buf), count, datatype},
                              request);
}
WEFT_MPI_ALIAS(MPI_File_iwrite_at_all);

extern "C" int PMPI_File_read(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                              MPI_Status* status) {
  return weft::mpi::io::run(fh,
                            Operation{"MPI_File_read", Position::individual, false, false, 0,
                                      const_cast<void*>(buf), count, datatype},
                            status);
}
WEFT_MPI_ALIAS(MPI_File_read);

extern "C" int PMPI_File_read_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                                  MPI_Status* status) {
  return weft::mpi::io::run(fh,
                            Operation{"MPI_File_read_all", Position::individual, false, true, 0,
                                      const_cast<void*>(buf), count, datatype},
                            status);
}
WEFT_MPI_ALIAS(MPI_File_read_all);

extern "C" int PMPI_File_write(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                               MPI_Status* status) {
  return weft::mpi::io::run(fh,
                            Operation{"MPI_File_write", Position::individual, true, false, 0,
                                      const_cast<void*>(buf), count, datatype},
                            status);
}
WEFT_MPI_ALIAS(MPI_File_write);

extern "C" int PMPI_File_write_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                                   MPI_Status* status) {
  return weft::mpi::io::run(fh,
                            Operation{"MPI_File_write_all", Position::individual, true, true, 0,
                                      const_cast<void*>(buf), count, datatype},
                            status);
}
WEFT_MPI_ALIAS(MPI_File_write_all);

extern "C" int PMPI_File_iread(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                               MPI_Request* request) {
  return weft::mpi::io::start(fh,
                              Operation{"MPI_File_iread", Position::individual, false, false, 0,
                                        const_cast<void*>(buf), count, datatype},
                              request);
}
WEFT_MPI_ALIAS(MPI_File_iread);

extern "C" int PMPI_File_iwrite(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                                MPI_Request* request) {
  return weft::mpi::io::start(fh,
                              Operation{"MPI_File_iwrite", Position::individual, true, false, 0,
                                        const_cast<void*>(buf), count, datatype},
                              request);
}
WEFT_MPI_ALIAS(MPI_File_iwrite);

extern "C" int PMPI_File_iread_all(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                                   MPI_Request* request) {
  return weft::mpi::io::start(fh,
                              Operation{"MPI_File_iread_all", Position::individual, false, true, 0,
                                        const_cast<void*>(buf), count, datatype},
                              request);
}
WEFT_MPI_ALIAS(MPI_File_iread_all);

extern "C" int PMPI_File_iwrite_all(MPI_File fh, const void* buf, int count, MPI_Datatype datatype,
                                    MPI_Request* request) {
  return weft::mpi::io::start(fh,
                              Operation{"MPI_File_iwrite_all", Position::individual, true, true, 0,
                                        const_cast<void*>(buf), count, datatype},
                              request);
}
WEFT_MPI_ALIAS(MPI_File_iwrite_all);

extern "C" int PMPI_File_read_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                                     MPI_Status* status) {
  return weft::mpi::io::run(fh,
                            Operation{"MPI_File_read_shared", Position::shared, false, false, 0,
                                      const_cast<void*>(buf), count, datatype},
                            status);
}
WEFT_MPI_ALIAS(MPI_File_read_shared);

extern "C" int PMPI_File_write_shared(MPI_File fh, const void* buf, int count,
                                      MPI_Datatype datatype, MPI_Status* status) {
  return weft::mpi::io::run(fh,
                            Operation{"MPI_File_write_shared", Position::shared, true, false, 0,
                                      const_cast<void*>(buf), count, datatype},
                            status);
}
WEFT_MPI_ALIAS(MPI_File_write_shared);

extern "C" int PMPI_File_iread_shared(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                                      MPI_Request* request) {
  return weft::mpi::io::start(fh,
                              Operation{"MPI_File_iread_shared", Position::shared, false, false, 0,
                                        const_cast<void*>(buf), count, datatype},
                              request);
}
WEFT_MPI_ALIAS(MPI_File_iread_shared);

extern "C" int PMPI_File_iwrite_shared(MPI_File fh, const void* buf, int count,
                                       MPI_Datatype datatype, MPI_Request* request) {
  return weft::mpi::io::start(fh,
                              Operation{"MPI_File_iwrite_shared", Position::shared, true, false, 0,
                                        const_cast<void*>(buf), count, datatype},
                              request);
}
WEFT_MPI_ALIAS(MPI_File_iwrite_shared);

extern "C" int PMPI_File_read_ordered(MPI_File fh, void* buf, int count, MPI_Datatype datatype,
                                      MPI_Status* status) {
  return weft::mpi::io::run_ordered(fh,
                                    Operation{"MPI_File_read_ordered", Position::shared, false,
                                              true, 0, const_cast<void*>(buf), count, datatype},
                                    status);
}
WEFT_MPI_ALIAS(MPI_File_read_ordered);

extern "C" int PMPI_File_write_ordered(MPI_File fh, const void* buf, int count,
                                       MPI_Datatype datatype, MPI_Status* status) {
  return weft::mpi::io::run_ordered(fh,
                                    Operation{"MPI_File_write_ordered", Position::shared, true,
                                              true, 0, const_cast<void*>(buf), count, datatype},
                                    status);
}
WEFT_MPI_ALIAS(MPI_File_write_ordered);
