// Attributes on communicators: the keyval calls, set, get, delete, copied by MPI_Comm_dup and
// deleted by MPI_Comm_free, the predefined attributes of MPI_COMM_WORLD, and the MPI-1 names of
// the same calls (MPI_Keyval_create, MPI_Attr_put, ...), which Open MPI and MPICH still provide.
#include <mutex>
#include <string>

#include "attr/attribute.h"
#include "comm/communicator.h"
#include "errhan/error.h"
#include "errhan/user_errors.h"
#include "init/world.h"
#include "util/profiling.h"
#include "weft/detail/spin_lock.h"

namespace weft::mpi {

namespace {

// Where MPI_Comm_get_attr points for a predefined attribute. Every value is the same for all ranks
// of a job; only MPI_UNIVERSE_SIZE may change between jobs, so the first rank of a job that asks
// rewrites it, under the lock that every reader takes before it gets the address.
int* predefined_value(int keyval) {
  static int tag_ub = kTagUpperBound;
  static int host = MPI_PROC_NULL;  // no rank is a host
  static int io = MPI_ANY_SOURCE;   // every rank may do I/O
  static int wtime_is_global = 1;   // one clock for every rank of the process
  static weft::detail::SpinLock universe_lock;
  static int universe_size = 0;
  switch (keyval) {
    case MPI_TAG_UB:
      return &tag_ub;
    case MPI_HOST:
      return &host;
    case MPI_IO:
      return &io;
    case MPI_WTIME_IS_GLOBAL:
      return &wtime_is_global;
    case MPI_APPNUM:
      return &caller_state().appnum;
    case MPI_LASTUSEDCODE: {
      // Per rank and refreshed when read: another rank may add a class meanwhile.
      int& value = caller_state().last_used_code;
      value = user_errors::last_used();
      return &value;
    }
    default:
      break;
  }
  std::lock_guard guard(universe_lock);
  // Written only when it changes: ranks of this job may be reading it through their pointer.
  if (universe_size != world()->universe_size()) universe_size = world()->universe_size();
  return &universe_size;
}

int raise_outcome(MPI_Comm comm, std::string_view function, const Outcome& outcome) {
  return raise(comm, function, outcome.code, outcome.detail);
}

}  // namespace

int copy_attributes(MPI_Comm parent, MPI_Comm child, std::string_view function) {
  const Outcome o = copy_attributes(parent->local_of_caller().attributes, parent,
                                    child->local_of_caller().attributes, child);
  return o.ok() ? MPI_SUCCESS : raise_outcome(parent, function, o);
}

int delete_attributes(MPI_Comm comm, std::string_view function) {
  const Outcome o = delete_attributes(comm->local_of_caller().attributes, comm);
  return o.ok() ? MPI_SUCCESS : raise_outcome(comm, function, o);
}

namespace {

int comm_create_keyval(std::string_view function, MPI_Comm_copy_attr_function* copy,
                       MPI_Comm_delete_attr_function* remove, int* keyval, void* extra_state) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  const Outcome o = weft::mpi::create_keyval<MPI_Comm>(copy, remove, keyval, extra_state);
  return o.ok() ? MPI_SUCCESS : raise_outcome(MPI_COMM_WORLD, function, o);
}

int comm_free_keyval(std::string_view function, int* keyval) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  const Outcome o = weft::mpi::free_keyval<MPI_Comm>(keyval);
  return o.ok() ? MPI_SUCCESS : raise_outcome(MPI_COMM_WORLD, function, o);
}

int comm_set_attr(std::string_view function, MPI_Comm comm, int keyval, void* value,
                  AttributeLanguage writer = AttributeLanguage::c) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  const Outcome o = set_attribute(comm->local_of_caller().attributes, comm, keyval, value, writer);
  return o.ok() ? MPI_SUCCESS : raise_outcome(comm, function, o);
}

// attribute_val is really a void**: the attribute's value (for the predefined attributes, the
// address of an int holding it) is stored there.
int comm_get_attr(std::string_view function, MPI_Comm comm, int keyval, void* attribute_val,
                  int* flag, AttributeLanguage reader = AttributeLanguage::c) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  if (is_predefined_keyval(keyval)) {
    if (attribute_val == nullptr || flag == nullptr) {
      return raise(comm, function, MPI_ERR_ARG,
                   std::string(attribute_val == nullptr ? "attribute_val" : "flag") +
                       " = NULL, expected where to store the result");
    }
    *flag = comm->world;
    if (*flag) *static_cast<void**>(attribute_val) = predefined_value(keyval);
    return MPI_SUCCESS;
  }
  const Outcome o = get_attribute<MPI_Comm>(comm->local_of_caller().attributes, keyval,
                                            attribute_val, flag, reader);
  return o.ok() ? MPI_SUCCESS : raise_outcome(comm, function, o);
}

int comm_delete_attr(std::string_view function, MPI_Comm comm, int keyval) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  const Outcome o = delete_attribute(comm->local_of_caller().attributes, comm, keyval);
  return o.ok() ? MPI_SUCCESS : raise_outcome(comm, function, o);
}

}  // namespace

}  // namespace weft::mpi

extern "C" int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                                       MPI_Comm_delete_attr_function* comm_delete_attr_fn,
                                       int* comm_keyval, void* extra_state) {
  return weft::mpi::comm_create_keyval("MPI_Comm_create_keyval", comm_copy_attr_fn,
                                       comm_delete_attr_fn, comm_keyval, extra_state);
}
WEFT_MPI_ALIAS(MPI_Comm_create_keyval);

extern "C" int PMPI_Comm_free_keyval(int* comm_keyval) {
  return weft::mpi::comm_free_keyval("MPI_Comm_free_keyval", comm_keyval);
}
WEFT_MPI_ALIAS(MPI_Comm_free_keyval);

extern "C" int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  return weft::mpi::comm_set_attr("MPI_Comm_set_attr", comm, comm_keyval, attribute_val);
}
WEFT_MPI_ALIAS(MPI_Comm_set_attr);

extern "C" int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  return weft::mpi::comm_get_attr("MPI_Comm_get_attr", comm, comm_keyval, attribute_val, flag);
}
WEFT_MPI_ALIAS(MPI_Comm_get_attr);

extern "C" int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  return weft::mpi::comm_delete_attr("MPI_Comm_delete_attr", comm, comm_keyval);
}
WEFT_MPI_ALIAS(MPI_Comm_delete_attr);

extern "C" int PMPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn,
                                  int* keyval, void* extra_state) {
  return weft::mpi::comm_create_keyval("MPI_Keyval_create", copy_fn, delete_fn, keyval,
                                       extra_state);
}
WEFT_MPI_ALIAS(MPI_Keyval_create);

extern "C" int PMPI_Keyval_free(int* keyval) {
  return weft::mpi::comm_free_keyval("MPI_Keyval_free", keyval);
}
WEFT_MPI_ALIAS(MPI_Keyval_free);

extern "C" int PMPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  return weft::mpi::comm_set_attr("MPI_Attr_put", comm, keyval, attribute_val);
}
WEFT_MPI_ALIAS(MPI_Attr_put);

extern "C" int PMPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return weft::mpi::comm_get_attr("MPI_Attr_get", comm, keyval, attribute_val, flag);
}
WEFT_MPI_ALIAS(MPI_Attr_get);

extern "C" int PMPI_Attr_delete(MPI_Comm comm, int keyval) {
  return weft::mpi::comm_delete_attr("MPI_Attr_delete", comm, keyval);
}
WEFT_MPI_ALIAS(MPI_Attr_delete);

// The Fortran forms' (mpi/fortran/custom_bindings.c): the value is Fortran's integer, stored as
// the void* of it; see AttributeLanguage.
extern "C" int weft_mpi_comm_set_attr_fortran(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  return weft::mpi::comm_set_attr("MPI_Comm_set_attr", comm, comm_keyval, attribute_val,
                                  weft::mpi::AttributeLanguage::fortran);
}

extern "C" int weft_mpi_comm_get_attr_fortran(MPI_Comm comm, int comm_keyval, void* attribute_val,
                                              int* flag) {
  return weft::mpi::comm_get_attr("MPI_Comm_get_attr", comm, comm_keyval, attribute_val, flag,
                                  weft::mpi::AttributeLanguage::fortran);
}

extern "C" int weft_mpi_attr_put_fortran(MPI_Comm comm, int keyval, void* attribute_val) {
  return weft::mpi::comm_set_attr("MPI_Attr_put", comm, keyval, attribute_val,
                                  weft::mpi::AttributeLanguage::fortran);
}

extern "C" int weft_mpi_attr_get_fortran(MPI_Comm comm, int keyval, void* attribute_val,
                                         int* flag) {
  return weft::mpi::comm_get_attr("MPI_Attr_get", comm, keyval, attribute_val, flag,
                                  weft::mpi::AttributeLanguage::fortran);
}
