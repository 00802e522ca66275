/* What the Fortran-callable layer (mpi_bindings.c, generated; custom_bindings.c) shares: the
 * special addresses of mpif.h and the conversions of arguments. This layer is compiled into
 * libweft_fortran.a, which weftfort links into the rank image: there, the COMMON blocks of
 * mpif.h and the `mpi` module are the image's own (each rank has its copy), and so are the
 * addresses these functions compare with. */
#ifndef WEFT_MPI_FORTRAN_SUPPORT_H
#define WEFT_MPI_FORTRAN_SUPPORT_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mpi.h"

/* The storage of mpif.h's COMMON blocks (mpi_bindings.c defines them). */
extern MPI_Fint mpi_fortran_bottom_[1], mpi_fortran_in_place_[1], mpi_fortran_unweighted_[1],
    mpi_fortran_weights_empty_[1], mpi_fortran_errcodes_ignore_[1];
extern char mpi_fortran_argv_null_[1], mpi_fortran_argvs_null_[1];

/* A C descriptor, as mpi_f08's BIND(C) interfaces pass TYPE(*), DIMENSION(..) and
 * CHARACTER(LEN=*) arguments: Fortran 2018 (18.5.3) names the members, GCC's
 * ISO_Fortran_binding.h orders them so. Declared here because only GCC's C compiler has that
 * header. */
typedef struct weft_cfi_dim {
  ptrdiff_t lower_bound, extent, sm; /* sm: bytes from one element to the next */
} weft_cfi_dim;
typedef struct weft_cfi_head {
  void* base_addr;
  size_t elem_len;
  int version;
  signed char rank, attribute;
  short type;
  weft_cfi_dim dim[];
} weft_cfi_head;

/* The elements of an array section (1 for a scalar). An assumed-size array's last extent is -1:
 * such an array is contiguous, and its size unknown (counted as 1 there). */
static inline size_t weft_f08_elements(const weft_cfi_head* array) {
  size_t count = 1;
  for (int i = 0; i < array->rank; ++i) {
    count *= array->dim[i].extent > 0 ? (size_t)array->dim[i].extent : 0;
  }
  return count;
}

static inline int weft_f08_contiguous(const weft_cfi_head* array) {
  ptrdiff_t step = (ptrdiff_t)array->elem_len;
  for (int i = 0; i < array->rank; ++i) {
    if (array->dim[i].extent < 0) return 1;
    if (array->dim[i].extent > 1 && array->dim[i].sm != step) return 0;
    step *= array->dim[i].extent;
  }
  return 1;
}

/* Copies the elements of a section from (to_section 0) or into (1) a contiguous copy, in array
 * element order (the first subscript fastest). */
static inline void weft_f08_copy(const weft_cfi_head* array, char* copy, int to_section) {
  ptrdiff_t index[15] = {0};
  const size_t count = weft_f08_elements(array);
  for (size_t n = 0; n < count; ++n) {
    char* element = (char*)array->base_addr;
    for (int i = 0; i < array->rank; ++i) element += index[i] * array->dim[i].sm;
    if (to_section) {
      memcpy(element, copy + n * array->elem_len, array->elem_len);
    } else {
      memcpy(copy + n * array->elem_len, element, array->elem_len);
    }
    for (int i = 0; i < array->rank && ++index[i] == array->dim[i].extent; ++i) index[i] = 0;
  }
}

/* mpi_f08's choice buffers. MPI_SUBARRAYS_SUPPORTED is .false., so MPI reads and writes a
 * contiguous buffer: a non-contiguous section (`a(1:9:2)`, gfortran passes its descriptor as it
 * is) goes through a contiguous copy of its elements, made here (*copy, null when none is
 * needed), as a compiler's copy-in/copy-out would. weft_f08_buffer_out writes an output copy back
 * and frees it once the call has returned; a nonblocking call keeps the copy with its request
 * (weft_f_keep_section), and writes an output back when Fortran completes the request. */
/* The address of a buffer MPI keeps past the call (generate.py's KEEPS_BUFFER), as it is. */
static inline void* weft_f08_buffer(const weft_cfi_head* buffer) {
  if (buffer->base_addr == mpi_fortran_bottom_) return MPI_BOTTOM;
  if (buffer->base_addr == mpi_fortran_in_place_) return MPI_IN_PLACE;
  return buffer->base_addr;
}

static inline void* weft_f08_buffer_in(const weft_cfi_head* buffer, void** copy) {
  *copy = NULL;
  if (buffer->base_addr == mpi_fortran_bottom_) return MPI_BOTTOM;
  if (buffer->base_addr == mpi_fortran_in_place_) return MPI_IN_PLACE;
  if (buffer->base_addr == NULL || weft_f08_contiguous(buffer)) return buffer->base_addr;
  const size_t bytes = weft_f08_elements(buffer) * buffer->elem_len;
  *copy = malloc(bytes > 0 ? bytes : 1);
  weft_f08_copy(buffer, (char*)*copy, 0);
  return *copy;
}

static inline void weft_f08_buffer_out(const weft_cfi_head* buffer, void* copy, int output) {
  if (copy == NULL) return;
  if (output) weft_f08_copy(buffer, (char*)copy, 1);
  free(copy);
}

/* Handles the program's Fortran code freed (mpi/interop/handle_kinds.h). */
void weft_mpi_comm_fortran_free(MPI_Fint handle);
void weft_mpi_group_fortran_free(MPI_Fint handle);
void weft_mpi_datatype_fortran_free(MPI_Fint handle);
void weft_mpi_op_fortran_free(MPI_Fint handle);
void weft_mpi_request_fortran_free(MPI_Fint handle);
void weft_mpi_message_fortran_free(MPI_Fint handle);
void weft_mpi_errhandler_fortran_free(MPI_Fint handle);
void weft_mpi_info_fortran_free(MPI_Fint handle);
void weft_mpi_win_fortran_free(MPI_Fint handle);
void weft_mpi_session_fortran_free(MPI_Fint handle);
void weft_mpi_file_fortran_free(MPI_Fint handle);

static inline void* weft_f_buffer(const void* buffer) {
  if (buffer == mpi_fortran_bottom_) return MPI_BOTTOM;
  if (buffer == mpi_fortran_in_place_) return MPI_IN_PLACE;
  return (void*)buffer;
}

static inline int* weft_f_weights(MPI_Fint* weights) {
  if (weights == mpi_fortran_unweighted_) return MPI_UNWEIGHTED;
  if (weights == mpi_fortran_weights_empty_) return MPI_WEIGHTS_EMPTY;
  return weights;
}

static inline void* weft_f_alloc(int count, size_t size) {
  return malloc((count > 0 ? (size_t)count : 1) * size);
}

static inline MPI_Status* weft_f_status_in(MPI_Fint* f_status, MPI_Status* c_status) {
  if (f_status == mpi_fortran_status_ignore_ || f_status == mpi_fortran_statuses_ignore_ ||
      f_status == (MPI_Fint*)MPI_F08_STATUS_IGNORE ||
      f_status == (MPI_Fint*)MPI_F08_STATUSES_IGNORE) {
    return MPI_STATUS_IGNORE;
  }
  memcpy(c_status, f_status, sizeof *c_status); /* the same fields (status_conversion.cpp) */
  return c_status;
}

static inline void weft_f_status_out(const MPI_Status* c_status, MPI_Fint* f_status) {
  if (c_status != MPI_STATUS_IGNORE) memcpy(f_status, c_status, sizeof *c_status);
}

static inline MPI_Status* weft_f_statuses_in(MPI_Fint* f_statuses, int count) {
  if (f_statuses == mpi_fortran_statuses_ignore_ || f_statuses == mpi_fortran_status_ignore_ ||
      f_statuses == (MPI_Fint*)MPI_F08_STATUS_IGNORE ||
      f_statuses == (MPI_Fint*)MPI_F08_STATUSES_IGNORE) {
    return MPI_STATUSES_IGNORE;
  }
  return (MPI_Status*)weft_f_alloc(count, sizeof(MPI_Status));
}

static inline void weft_f_statuses_out(MPI_Status* c_statuses, MPI_Fint* f_statuses, int count) {
  if (c_statuses == MPI_STATUSES_IGNORE) return;
  memcpy(f_statuses, c_statuses, (size_t)(count > 0 ? count : 0) * sizeof *c_statuses);
  free(c_statuses);
}

/* Arrays a nonblocking or persistent call converted (MPI_IALLTOALLW's datatypes) must outlive the
 * call: each is kept with the Fortran integer of its request until a Fortran call completes or
 * frees that request (mpi_bindings.c). Not kept when the call failed. */
void weft_f_keep(int rc, MPI_Fint request, void* memory);
void weft_f_release(MPI_Fint request);
/* The same for the contiguous copy of an mpi_f08 section (weft_f08_buffer_in); an output one
 * (`output`) is written back into the section when the request completes. */
void weft_f_keep_section(int rc, MPI_Fint request, void* copy, const weft_cfi_head* section,
                         int output);

/* A Fortran string argument without its trailing blanks (and leading ones for info keys and
 * values: `info_string`), as a C string (freed by the caller). */
static inline char* weft_f_string_in(const char* f_string, size_t length, int info_string) {
  while (length > 0 && f_string[length - 1] == ' ') --length;
  while (info_string && length > 0 && f_string[0] == ' ') {
    ++f_string;
    --length;
  }
  char* c_string = (char*)malloc(length + 1);
  memcpy(c_string, f_string, length);
  c_string[length] = '\0';
  return c_string;
}

/* Room for whatever a C call writes into a string argument (at most one of MPI's maxima),
 * holding the Fortran string as it is: a call that writes nothing (a key not found) leaves it so.
 */
static inline char* weft_f_string_buffer(const char* f_string, size_t length) {
  size_t room = length > MPI_MAX_LIBRARY_VERSION_STRING ? length : MPI_MAX_LIBRARY_VERSION_STRING;
  char* c_string = (char*)malloc(room + 1);
  memcpy(c_string, f_string, length);
  c_string[length] = '\0';
  return c_string;
}

static inline int* weft_f_errcodes(MPI_Fint* errcodes) {
  return errcodes == mpi_fortran_errcodes_ignore_ ? MPI_ERRCODES_IGNORE : errcodes;
}

static inline int weft_f_blank(const char* f_string, size_t length) {
  for (size_t i = 0; i < length; ++i) {
    if (f_string[i] != ' ') return 0;
  }
  return 1;
}

/* One CHARACTER element of a spawn's command line as a C string: without its leading and trailing
 * blanks (MPI-4.1 11.8.2, as MPICH and Open MPI strip them); NULL for an all-blank one. */
static inline char* weft_f_argument_in(const char* f_string, size_t length) {
  if (weft_f_blank(f_string, length)) return NULL;
  while (f_string[length - 1] == ' ') --length;
  while (f_string[0] == ' ') {
    ++f_string;
    --length;
  }
  return weft_f_string_in(f_string, length, 0);
}

/* MPI_COMM_SPAWN's argv: CHARACTER elements of `length` characters, `stride` elements apart (a
 * row of MPI_COMM_SPAWN_MULTIPLE's array_of_argv(count, *) is `count` apart), up to the first
 * blank one (MPI-4.1 11.8.2); a NULL-ended C array, or MPI_ARGV_NULL for Fortran's. */
static inline char** weft_f_argv_in(const char* f_argv, size_t length, int stride) {
  if (f_argv == mpi_fortran_argv_null_) return MPI_ARGV_NULL;
  int count = 0;
  while (length > 0 && !weft_f_blank(f_argv + (size_t)count * (size_t)stride * length, length)) {
    ++count;
  }
  char** c_argv = (char**)weft_f_alloc(count + 1, sizeof(char*));
  for (int i = 0; i < count; ++i) {
    c_argv[i] = weft_f_argument_in(f_argv + (size_t)i * (size_t)stride * length, length);
  }
  c_argv[count] = NULL;
  return c_argv;
}

static inline void weft_f_argv_free(char** c_argv) {
  if (c_argv == MPI_ARGV_NULL) return;
  for (char** argument = c_argv; *argument != NULL; ++argument) free(*argument);
  free(c_argv);
}

/* MPI_COMM_SPAWN_MULTIPLE's array_of_commands: `count` strings, NULL-ended as an argv. */
static inline char** weft_f_strings_in(const char* f_strings, size_t length, int count) {
  char** c_strings = (char**)weft_f_alloc(count + 1, sizeof(char*));
  int used = 0;
  for (int i = 0; i < count; ++i) {
    char* c_string = weft_f_argument_in(f_strings + (size_t)i * length, length);
    /* An all-blank command is passed on as an empty one (the spawn refuses it by name). */
    c_strings[used++] = c_string != NULL ? c_string : weft_f_string_in("", 0, 0);
  }
  c_strings[used] = NULL;
  return c_strings;
}

/* MPI_COMM_SPAWN_MULTIPLE's array_of_argv(count, *): the argv of command i is row i. */
static inline char*** weft_f_argvs_in(const char* f_argvs, size_t length, int count) {
  if (f_argvs == mpi_fortran_argvs_null_) return MPI_ARGVS_NULL;
  char*** c_argvs = (char***)weft_f_alloc(count, sizeof(char**));
  for (int i = 0; i < count; ++i)
    c_argvs[i] = weft_f_argv_in(f_argvs + (size_t)i * length, length, count);
  return c_argvs;
}

static inline void weft_f_argvs_free(char*** c_argvs, int count) {
  if (c_argvs == MPI_ARGVS_NULL) return;
  for (int i = 0; i < count; ++i) weft_f_argv_free(c_argvs[i]);
  free(c_argvs);
}

/* The size of the group a communicator's collectives address (the remote one of an
 * intercommunicator): the length of MPI_Alltoallw's datatype arrays. */
static inline int weft_f_group_size(MPI_Comm comm) {
  int inter = 0, size = 0;
  if (MPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return 0;
  if (inter) {
    MPI_Comm_remote_size(comm, &size);
  } else {
    MPI_Comm_size(comm, &size);
  }
  return size;
}

/* Copies a C result into a Fortran string, blank-padded (Fortran has no terminator). */
static inline void weft_f_string_out(char* c_string, char* f_string, size_t length) {
  size_t used = strlen(c_string);
  if (used > length) used = length;
  memcpy(f_string, c_string, used);
  memset(f_string + used, ' ', length - used);
  free(c_string);
}

#endif
