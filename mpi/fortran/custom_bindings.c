/* The Fortran forms that differ from their C functions by more than argument conversion (written
 * here rather than generated): MPI_Init without argc/argv, and attributes, whose Fortran value is
 * an integer where C has a pointer. The mpi_f08 module calls them too, with ierror optional (an
 * absent one is null). */
#include <pthread.h>
#include <stdint.h>

#include "fortran_support.h"

static void set_ierror(MPI_Fint* ierror, int rc) {
  if (ierror != NULL) *ierror = rc;
}

void pmpi_init_(MPI_Fint* ierror) {
  int rc = PMPI_Init(NULL, NULL);
  set_ierror(ierror, rc);
}
extern __typeof__(pmpi_init_) mpi_init_ __attribute__((weak, alias("pmpi_init_")));

void pmpi_init_thread_(MPI_Fint* required, MPI_Fint* provided, MPI_Fint* ierror) {
  int rc = PMPI_Init_thread(NULL, NULL, *required, provided);
  set_ierror(ierror, rc);
}
extern __typeof__(pmpi_init_thread_) mpi_init_thread_
    __attribute__((weak, alias("pmpi_init_thread_")));

/* C's predefined attributes point at their value; Fortran gets the value itself, except
 * MPI_WIN_BASE, whose value is the address (MPI-4.1 12.2.6). */
static MPI_Aint predefined_value(int keyval, void* value) {
  switch (keyval) {
    case MPI_WIN_BASE:
      return (MPI_Aint)(intptr_t)value;
    case MPI_WIN_SIZE:
      return *(MPI_Aint*)value;
    case MPI_TAG_UB:
    case MPI_HOST:
    case MPI_IO:
    case MPI_WTIME_IS_GLOBAL:
    case MPI_UNIVERSE_SIZE:
    case MPI_APPNUM:
    case MPI_LASTUSEDCODE:
    case MPI_WIN_DISP_UNIT:
    case MPI_WIN_CREATE_FLAVOR:
    case MPI_WIN_MODEL:
      return *(int*)value;
    default:
      return (MPI_Aint)(intptr_t)value;
  }
}

/* libweft's forms for Fortran: they record that the value is Fortran's integer, which a C get then
 * reads through a pointer to it, and read values as they were set (mpi/attr/attribute_set.h). */
int weft_mpi_comm_set_attr_fortran(MPI_Comm comm, int keyval, void* value);
int weft_mpi_comm_get_attr_fortran(MPI_Comm comm, int keyval, void* value, int* flag);
int weft_mpi_type_set_attr_fortran(MPI_Datatype type, int keyval, void* value);
int weft_mpi_type_get_attr_fortran(MPI_Datatype type, int keyval, void* value, int* flag);
int weft_mpi_win_set_attr_fortran(MPI_Win win, int keyval, void* value);
int weft_mpi_win_get_attr_fortran(MPI_Win win, int keyval, void* value, int* flag);
int weft_mpi_attr_put_fortran(MPI_Comm comm, int keyval, void* value);
int weft_mpi_attr_get_fortran(MPI_Comm comm, int keyval, void* value, int* flag);

void pmpi_comm_set_attr_(MPI_Fint* comm, MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* ierror) {
  int rc = weft_mpi_comm_set_attr_fortran(MPI_Comm_f2c(*comm), *keyval, (void*)(intptr_t)*value);
  set_ierror(ierror, rc);
}
extern __typeof__(pmpi_comm_set_attr_) mpi_comm_set_attr_
    __attribute__((weak, alias("pmpi_comm_set_attr_")));

void pmpi_comm_get_attr_(MPI_Fint* comm, MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* flag,
                         MPI_Fint* ierror) {
  void* c_value = NULL;
  int rc = weft_mpi_comm_get_attr_fortran(MPI_Comm_f2c(*comm), *keyval, &c_value, flag);
  set_ierror(ierror, rc);
  if (rc == MPI_SUCCESS && *flag) *value = predefined_value(*keyval, c_value);
}
extern __typeof__(pmpi_comm_get_attr_) mpi_comm_get_attr_
    __attribute__((weak, alias("pmpi_comm_get_attr_")));

void pmpi_type_set_attr_(MPI_Fint* type, MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* ierror) {
  int rc = weft_mpi_type_set_attr_fortran(MPI_Type_f2c(*type), *keyval, (void*)(intptr_t)*value);
  set_ierror(ierror, rc);
}
extern __typeof__(pmpi_type_set_attr_) mpi_type_set_attr_
    __attribute__((weak, alias("pmpi_type_set_attr_")));

void pmpi_type_get_attr_(MPI_Fint* type, MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* flag,
                         MPI_Fint* ierror) {
  void* c_value = NULL;
  int rc = weft_mpi_type_get_attr_fortran(MPI_Type_f2c(*type), *keyval, &c_value, flag);
  set_ierror(ierror, rc);
  if (rc == MPI_SUCCESS && *flag) *value = (MPI_Aint)(intptr_t)c_value;
}
extern __typeof__(pmpi_type_get_attr_) mpi_type_get_attr_
    __attribute__((weak, alias("pmpi_type_get_attr_")));

void pmpi_win_set_attr_(MPI_Fint* win, MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* ierror) {
  int rc = weft_mpi_win_set_attr_fortran(MPI_Win_f2c(*win), *keyval, (void*)(intptr_t)*value);
  set_ierror(ierror, rc);
}
extern __typeof__(pmpi_win_set_attr_) mpi_win_set_attr_
    __attribute__((weak, alias("pmpi_win_set_attr_")));

void pmpi_win_get_attr_(MPI_Fint* win, MPI_Fint* keyval, MPI_Aint* value, MPI_Fint* flag,
                        MPI_Fint* ierror) {
  void* c_value = NULL;
  int rc = weft_mpi_win_get_attr_fortran(MPI_Win_f2c(*win), *keyval, &c_value, flag);
  set_ierror(ierror, rc);
  if (rc == MPI_SUCCESS && *flag) *value = predefined_value(*keyval, c_value);
}
extern __typeof__(pmpi_win_get_attr_) mpi_win_get_attr_
    __attribute__((weak, alias("pmpi_win_get_attr_")));

/* MPI-1's names: the value is a default INTEGER. */
void pmpi_attr_put_(MPI_Fint* comm, MPI_Fint* keyval, MPI_Fint* value, MPI_Fint* ierror) {
  int rc = weft_mpi_attr_put_fortran(MPI_Comm_f2c(*comm), *keyval, (void*)(intptr_t)*value);
  set_ierror(ierror, rc);
}
extern __typeof__(pmpi_attr_put_) mpi_attr_put_ __attribute__((weak, alias("pmpi_attr_put_")));

void pmpi_attr_get_(MPI_Fint* comm, MPI_Fint* keyval, MPI_Fint* value, MPI_Fint* flag,
                    MPI_Fint* ierror) {
  void* c_value = NULL;
  int rc = weft_mpi_attr_get_fortran(MPI_Comm_f2c(*comm), *keyval, &c_value, flag);
  set_ierror(ierror, rc);
  if (rc == MPI_SUCCESS && *flag) *value = (MPI_Fint)predefined_value(*keyval, c_value);
}
extern __typeof__(pmpi_attr_get_) mpi_attr_get_ __attribute__((weak, alias("pmpi_attr_get_")));

/* Fortran has no argc/argv to give: the environment's info is the process's (MPI-4.1 10.4). */
void pmpi_info_create_env_(MPI_Fint* info, MPI_Fint* ierror) {
  MPI_Info c_info = MPI_INFO_NULL;
  int rc = PMPI_Info_create_env(0, NULL, &c_info);
  set_ierror(ierror, rc);
  *info = MPI_Info_c2f(c_info);
}
extern __typeof__(pmpi_info_create_env_) mpi_info_create_env_
    __attribute__((weak, alias("pmpi_info_create_env_")));

/* A Fortran reduction function takes its datatype as an integer: libweft calls it so
 * (mpi/interop/fortran_callbacks.cpp). */
typedef void(FortranUserFunction)(void* invec, void* inoutvec, MPI_Fint* len, MPI_Fint* datatype);
int weft_mpi_op_create_fortran(FortranUserFunction* user_fn, int commute, MPI_Op* op);

void pmpi_op_create_(FortranUserFunction* user_fn, MPI_Fint* commute, MPI_Fint* op,
                     MPI_Fint* ierror) {
  MPI_Op c_op = MPI_OP_NULL;
  int rc = weft_mpi_op_create_fortran(user_fn, *commute, &c_op);
  set_ierror(ierror, rc);
  *op = MPI_Op_c2f(c_op);
}
extern __typeof__(pmpi_op_create_) mpi_op_create_ __attribute__((weak, alias("pmpi_op_create_")));

/* The arrays kept for pending requests: few at a time (one per nonblocking MPI_IALLTOALLW...). */
struct kept {
  MPI_Fint request;
  void* memory;
  weft_cfi_head* section; /* where `memory` goes back to when the request completes, or null */
  struct kept* next;
};
static struct kept* kept_list;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static void keep(MPI_Fint request, void* memory, weft_cfi_head* section) {
  struct kept* k = (struct kept*)malloc(sizeof *k);
  k->request = request;
  k->memory = memory;
  k->section = section;
  pthread_mutex_lock(&kept_lock);
  k->next = kept_list;
  __atomic_store_n(&kept_list, k, __ATOMIC_RELEASE);
  pthread_mutex_unlock(&kept_lock);
}

void weft_f_keep(int rc, MPI_Fint request, void* memory) {
  if (rc != MPI_SUCCESS) {
    free(memory);
    return;
  }
  keep(request, memory, NULL);
}

void weft_f_keep_section(int rc, MPI_Fint request, void* copy, const weft_cfi_head* section,
                         int output) {
  if (copy == NULL) return;
  if (rc != MPI_SUCCESS || !output) {
    if (rc != MPI_SUCCESS) {
      free(copy);
    } else {
      keep(request, copy, NULL);
    }
    return;
  }
  /* The descriptor is the caller's temporary: its copy outlives the call. */
  const size_t size = sizeof *section + (size_t)section->rank * sizeof section->dim[0];
  weft_cfi_head* kept_section = (weft_cfi_head*)malloc(size);
  memcpy(kept_section, section, size);
  keep(request, copy, kept_section);
}

void weft_f_release(MPI_Fint request) {
  /* Every completion comes here: most find nothing kept, without the lock. A request's own
   * arrays were kept before the call that completes it, by a thread of the same rank, so they are
   * seen here (acquire pairs with the release store in keep). */
  if (__atomic_load_n(&kept_list, __ATOMIC_ACQUIRE) == NULL) return;
  pthread_mutex_lock(&kept_lock);
  struct kept** at = &kept_list;
  while (*at != NULL) {
    struct kept* k = *at;
    if (k->request == request) {
      __atomic_store_n(at, k->next, __ATOMIC_RELEASE);
      if (k->section != NULL) weft_f08_copy(k->section, (char*)k->memory, 1);
      free(k->section);
      free(k->memory);
      free(k);
    } else {
      at = &k->next;
    }
  }
  pthread_mutex_unlock(&kept_lock);
}

/* Fortran's buflen counts characters without C's terminator, in and out (MPI-4.1 10): the value's
 * first buflen characters are copied, blank-padded; buflen 0 asks for the length alone. */
void pmpi_info_get_string_(MPI_Fint* info, const char* key, MPI_Fint* buflen, char* value,
                           MPI_Fint* flag, MPI_Fint* ierror, size_t key_len, size_t value_len) {
  char* c_key = weft_f_string_in(key, key_len, 1);
  MPI_Info c_info = MPI_Info_f2c(*info);
  int length = 0; /* with the terminator */
  char empty = '\0';
  int rc = PMPI_Info_get_string(c_info, c_key, &length, &empty, flag);
  if (rc == MPI_SUCCESS && *flag) {
    if (*buflen > 0) {
      char* c_value = (char*)malloc((size_t)length);
      rc = PMPI_Info_get_string(c_info, c_key, &length, c_value, flag);
      size_t room = (size_t)*buflen < value_len ? (size_t)*buflen : value_len;
      size_t used = strlen(c_value) < room ? strlen(c_value) : room;
      memcpy(value, c_value, used);
      memset(value + used, ' ', value_len - used);
      free(c_value);
    }
    *buflen = length - 1;
  }
  free(c_key);
  set_ierror(ierror, rc);
}
extern __typeof__(pmpi_info_get_string_) mpi_info_get_string_
    __attribute__((weak, alias("pmpi_info_get_string_")));

/* Error handlers from Fortran: libweft calls them with the handle as an integer
 * (mpi/interop/fortran_callbacks.cpp). MPI_ERRHANDLER_CREATE is MPI-1's name of the first. */
typedef void(FortranErrhandlerFunction)(MPI_Fint* handle, MPI_Fint* error_code);
int weft_mpi_comm_create_errhandler_fortran(FortranErrhandlerFunction* function,
                                            MPI_Errhandler* errhandler);
int weft_mpi_win_create_errhandler_fortran(FortranErrhandlerFunction* function,
                                           MPI_Errhandler* errhandler);

void pmpi_comm_create_errhandler_(FortranErrhandlerFunction* function, MPI_Fint* errhandler,
                                  MPI_Fint* ierror) {
  MPI_Errhandler c_errhandler = MPI_ERRHANDLER_NULL;
  int rc = weft_mpi_comm_create_errhandler_fortran(function, &c_errhandler);
  *errhandler = MPI_Errhandler_c2f(c_errhandler);
  set_ierror(ierror, rc);
}
extern __typeof__(pmpi_comm_create_errhandler_) mpi_comm_create_errhandler_
    __attribute__((weak, alias("pmpi_comm_create_errhandler_")));
extern __typeof__(pmpi_comm_create_errhandler_) mpi_errhandler_create_
    __attribute__((weak, alias("pmpi_comm_create_errhandler_")));

void pmpi_win_create_errhandler_(FortranErrhandlerFunction* function, MPI_Fint* errhandler,
                                 MPI_Fint* ierror) {
  MPI_Errhandler c_errhandler = MPI_ERRHANDLER_NULL;
  int rc = weft_mpi_win_create_errhandler_fortran(function, &c_errhandler);
  *errhandler = MPI_Errhandler_c2f(c_errhandler);
  set_ierror(ierror, rc);
}
extern __typeof__(pmpi_win_create_errhandler_) mpi_win_create_errhandler_
    __attribute__((weak, alias("pmpi_win_create_errhandler_")));

/* Memory MPI allocates comes back to Fortran as an address-sized integer (for a Cray pointer or
 * C_F_POINTER). */
void pmpi_alloc_mem_(MPI_Aint* size, MPI_Fint* info, MPI_Aint* baseptr, MPI_Fint* ierror) {
  void* base = NULL;
  int rc = PMPI_Alloc_mem(*size, MPI_Info_f2c(*info), &base);
  if (rc == MPI_SUCCESS) *baseptr = (MPI_Aint)(intptr_t)base;
  set_ierror(ierror, rc);
}
extern __typeof__(pmpi_alloc_mem_) mpi_alloc_mem_ __attribute__((weak, alias("pmpi_alloc_mem_")));

/* Generalized requests from Fortran (MPI-4.1 13.2): the C request's extra state holds the Fortran
 * procedures and where the program's extra state is, until the request's free function has run.
 * The procedures get the program's variable itself, as MPICH's and Open MPI's do (MPICH's greqf
 * checks that its free function's update is seen). A C status and a Fortran one have the same
 * fields (status_conversion.cpp). */
typedef void(FortranQueryFunction)(MPI_Aint* extra_state, MPI_Fint* status, MPI_Fint* ierror);
typedef void(FortranFreeFunction)(MPI_Aint* extra_state, MPI_Fint* ierror);
typedef void(FortranCancelFunction)(MPI_Aint* extra_state, MPI_Fint* complete, MPI_Fint* ierror);
struct fortran_grequest {
  FortranQueryFunction* query;
  FortranFreeFunction* free;
  FortranCancelFunction* cancel;
  MPI_Aint* extra_state;
};

static int grequest_query(void* extra, MPI_Status* status) {
  struct fortran_grequest* g = (struct fortran_grequest*)extra;
  MPI_Fint ierror = MPI_SUCCESS;
  g->query(g->extra_state, (MPI_Fint*)status, &ierror);
  return ierror;
}

static int grequest_free(void* extra) {
  struct fortran_grequest* g = (struct fortran_grequest*)extra;
  MPI_Fint ierror = MPI_SUCCESS;
  g->free(g->extra_state, &ierror);
  free(g);
  return ierror;
}

static int grequest_cancel(void* extra, int complete) {
  struct fortran_grequest* g = (struct fortran_grequest*)extra;
  MPI_Fint ierror = MPI_SUCCESS, f_complete = complete != 0;
  g->cancel(g->extra_state, &f_complete, &ierror);
  return ierror;
}

void pmpi_grequest_start_(FortranQueryFunction* query_fn, FortranFreeFunction* free_fn,
                          FortranCancelFunction* cancel_fn, MPI_Aint* extra_state,
                          MPI_Fint* request, MPI_Fint* ierror) {
  struct fortran_grequest* g = (struct fortran_grequest*)malloc(sizeof *g);
  g->query = query_fn;
  g->free = free_fn;
  g->cancel = cancel_fn;
  g->extra_state = extra_state;
  MPI_Request c_request = MPI_REQUEST_NULL;
  int rc = PMPI_Grequest_start(grequest_query, grequest_free, grequest_cancel, g, &c_request);
  if (rc != MPI_SUCCESS) free(g);
  *request = MPI_Request_c2f(c_request);
  set_ierror(ierror, rc);
}
extern __typeof__(pmpi_grequest_start_) mpi_grequest_start_
    __attribute__((weak, alias("pmpi_grequest_start_")));
