// Every kind of handle that has Fortran integers, one line each: its name in the conversion calls
// (MPI_Type_c2f), its C type's suffix (MPI_Datatype), its name in C++ (datatype_handles()) and its
// list of predefined objects (handle_kinds.cpp). A new
// kind (MPI_File) is one line here, its list, and the prototypes of MPI_File_c2f/f2c in mpi.h.
#pragma once

#include "interop/handle_table.h"
#include "mpi.h"

#define WEFT_HANDLE_KINDS(X)                                   \
  X(Comm, Comm, comm, comm_predefined)                         \
  X(Group, Group, group, group_predefined)                     \
  X(Type, Datatype, datatype, datatype_predefined)             \
  X(Op, Op, op, op_predefined)                                 \
  X(Request, Request, request, no_predefined)                  \
  X(Message, Message, message, message_predefined)             \
  X(Errhandler, Errhandler, errhandler, errhandler_predefined) \
  X(Info, Info, info, info_predefined)                         \
  X(Win, Win, win, no_predefined)                              \
  X(Session, Session, session, no_predefined)                  \
  X(File, File, file, no_predefined)

namespace weft::mpi::interop {

#define WEFT_HANDLE_KIND(Name, Type, kind, predefined) HandleTable<MPI_##Type>& kind##_handles();
WEFT_HANDLE_KINDS(WEFT_HANDLE_KIND)
#undef WEFT_HANDLE_KIND

}  // namespace weft::mpi::interop

// For the Fortran layer: a Fortran call freed the object of `handle` (its handle came back null),
// so the integer may name another object later.
extern "C" {
#define WEFT_HANDLE_KIND(Name, Type, kind, predefined) \
  void weft_mpi_##kind##_fortran_free(MPI_Fint handle);
WEFT_HANDLE_KINDS(WEFT_HANDLE_KIND)
#undef WEFT_HANDLE_KIND
}
