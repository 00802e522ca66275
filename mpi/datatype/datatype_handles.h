// The objects behind derived datatype handles. A freed handle is the first one the next
// constructor returns, as MPICH's handle pools and Open MPI's allocator both behave: programs
// (MPICH's datatype/indexed_misc among them) that keep using a freed handle after making a new
// type get the new type, not freed memory.
#pragma once

#include "datatype/datatype_layout.h"

namespace weft::mpi {

// A handle for a new derived type, the most recently recycled one first.
weft_mpi_datatype* new_handle(weft_mpi_datatype::Layout* layout);
// By the last release of a derived type: its handle object is free for the next constructor.
void recycle_handle(weft_mpi_datatype* handle);

}  // namespace weft::mpi
