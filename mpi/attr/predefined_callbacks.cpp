// The predefined copy and delete callbacks of every kind (MPI_COMM_NULL_COPY_FN, MPI_TYPE_DUP_FN,
// MPI_WIN_NULL_DELETE_FN, ...). The MPI-1 names MPI_NULL_COPY_FN, MPI_DUP_FN and
// MPI_NULL_DELETE_FN are the communicator ones.
#include "mpi.h"

namespace {

template <class Handle>
int null_copy(Handle, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}

template <class Handle>
int dup(Handle, int, void*, void* attribute_val_in, void* attribute_val_out, int* flag) {
  *static_cast<void**>(attribute_val_out) = attribute_val_in;
  *flag = 1;
  return MPI_SUCCESS;
}

template <class Handle>
int null_delete(Handle, int, void*, void*) {
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int weft_mpi_comm_null_copy_fn(MPI_Comm comm, int keyval, void* extra_state, void* in,
                                          void* out, int* flag) {
  return null_copy(comm, keyval, extra_state, in, out, flag);
}

extern "C" int weft_mpi_comm_dup_fn(MPI_Comm comm, int keyval, void* extra_state, void* in,
                                    void* out, int* flag) {
  return dup(comm, keyval, extra_state, in, out, flag);
}

extern "C" int weft_mpi_comm_null_delete_fn(MPI_Comm comm, int keyval, void* value,
                                            void* extra_state) {
  return null_delete(comm, keyval, value, extra_state);
}

extern "C" int weft_mpi_type_null_copy_fn(MPI_Datatype type, int keyval, void* extra_state,
                                          void* in, void* out, int* flag) {
  return null_copy(type, keyval, extra_state, in, out, flag);
}

extern "C" int weft_mpi_type_dup_fn(MPI_Datatype type, int keyval, void* extra_state, void* in,
                                    void* out, int* flag) {
  return dup(type, keyval, extra_state, in, out, flag);
}

extern "C" int weft_mpi_type_null_delete_fn(MPI_Datatype type, int keyval, void* value,
                                            void* extra_state) {
  return null_delete(type, keyval, value, extra_state);
}

extern "C" int weft_mpi_win_null_copy_fn(MPI_Win win, int keyval, void* extra_state, void* in,
                                         void* out, int* flag) {
  return null_copy(win, keyval, extra_state, in, out, flag);
}

extern "C" int weft_mpi_win_dup_fn(MPI_Win win, int keyval, void* extra_state, void* in, void* out,
                                   int* flag) {
  return dup(win, keyval, extra_state, in, out, flag);
}

extern "C" int weft_mpi_win_null_delete_fn(MPI_Win win, int keyval, void* value,
                                           void* extra_state) {
  return null_delete(win, keyval, value, extra_state);
}
