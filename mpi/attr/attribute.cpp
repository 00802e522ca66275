// Attributes on communicators: set, get, delete, copied by MPI_Comm_dup and deleted by
// MPI_Comm_free, and the predefined attributes of MPI_COMM_WORLD.
#include "attr/attribute.h"

#include <mutex>
#include <string>

#include "comm/communicator.h"
#include "errhan/error.h"
#include "init/world.h"
#include "util/profiling.h"
#include "weft/detail/spin_lock.h"

namespace weft::mpi {

namespace {

std::string keyval_text(int keyval) {
  return "keyval " + std::to_string(keyval);
}

int raise_callback_failure(MPI_Comm comm, std::string_view function, std::string_view callback,
                           int keyval, int code) {
  return raise(comm, function, code,
               "the " + std::string(callback) + " callback of " + keyval_text(keyval) +
                   " returned " + std::to_string(code) + ", expected MPI_SUCCESS");
}

// Runs the delete callback of the caller's attribute `keyval` on `comm` and removes it, unless
// the callback fails. Returns the callback's code.
int delete_one(MPI_Comm comm, int keyval, void* value) {
  const Keyval k = keyvals::attached(keyval);
  if (k.remove != nullptr) {
    if (int rc = k.remove(comm, keyval, value, k.extra_state); rc != MPI_SUCCESS) return rc;
  }
  comm->local_of_caller().attributes.erase(keyval);
  keyvals::detach(keyval);
  return MPI_SUCCESS;
}

// Where MPI_Comm_get_attr points for a predefined attribute. Every value is the same for all ranks
// of a job; only MPI_UNIVERSE_SIZE may change between jobs, so the first rank of a job that asks
// rewrites it, under the lock that every reader takes before it gets the address.
int* predefined_value(int keyval) {
  static int tag_ub = kTagUpperBound;
  static int host = MPI_PROC_NULL;  // no rank is a host
  static int io = MPI_ANY_SOURCE;   // every rank may do I/O
  static int wtime_is_global = 1;   // one clock for every rank of the process
  static int appnum = 0;
  static int last_used_code = MPI_ERR_LASTCODE;  // no MPI_Add_error_code
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
      return &appnum;
    case MPI_LASTUSEDCODE:
      return &last_used_code;
    default:
      break;
  }
  std::lock_guard guard(universe_lock);
  // Written only when it changes: ranks of this job may be reading it through their pointer.
  if (universe_size != world()->size()) universe_size = world()->size();
  return &universe_size;
}

}  // namespace

int copy_attributes(MPI_Comm parent, MPI_Comm child, std::string_view function) {
  // A copy of the map: a copy callback may set attributes on the parent.
  const std::map<int, void*> originals = parent->local_of_caller().attributes;
  for (const auto& [keyval, value] : originals) {
    const Keyval k = keyvals::attached(keyval);
    if (k.copy == nullptr) continue;
    void* copy = nullptr;
    int flag = 0;
    if (int rc = k.copy(parent, keyval, k.extra_state, value, &copy, &flag); rc != MPI_SUCCESS) {
      delete_attributes(child, function);
      return raise_callback_failure(parent, function, "copy", keyval, rc);
    }
    if (flag != 0) {
      child->local_of_caller().attributes[keyval] = copy;
      keyvals::attach(keyval);
    }
  }
  return MPI_SUCCESS;
}

int delete_attributes(MPI_Comm comm, std::string_view function) {
  auto& attributes = comm->local_of_caller().attributes;
  while (!attributes.empty()) {
    const auto newest = std::prev(attributes.end());
    const int keyval = newest->first;
    if (int rc = delete_one(comm, keyval, newest->second); rc != MPI_SUCCESS) {
      return raise_callback_failure(comm, function, "delete", keyval, rc);
    }
  }
  return MPI_SUCCESS;
}

}  // namespace weft::mpi

using weft::mpi::check_comm;
using weft::mpi::check_initialized;
using weft::mpi::is_predefined_keyval;
using weft::mpi::raise;

namespace {

// A keyval that MPI_Comm_set_attr or MPI_Comm_get_attr may name: live, or predefined when
// `predefined_ok`.
int check_keyval(MPI_Comm comm, std::string_view function, int keyval, bool predefined_ok) {
  if (is_predefined_keyval(keyval)) {
    if (predefined_ok) return MPI_SUCCESS;
    return raise(comm, function, MPI_ERR_KEYVAL,
                 "comm_keyval = " + std::to_string(keyval) +
                     ", a predefined attribute, which is read-only; expected a keyval made by "
                     "MPI_Comm_create_keyval");
  }
  if (weft::mpi::keyvals::live(keyval)) return MPI_SUCCESS;
  return raise(comm, function, MPI_ERR_KEYVAL,
               "comm_keyval = " + std::to_string(keyval) +
                   ", expected a keyval made by MPI_Comm_create_keyval and not freed");
}

}  // namespace

extern "C" int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void* attribute_val) {
  constexpr std::string_view kFunction = "MPI_Comm_set_attr";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_keyval(comm, kFunction, comm_keyval, false); rc != MPI_SUCCESS) return rc;
  auto& attributes = comm->local_of_caller().attributes;
  if (const auto it = attributes.find(comm_keyval); it != attributes.end()) {
    // MPI-3.1 6.7.2: replacing a value first deletes the old one through the callback.
    if (int rc = weft::mpi::delete_one(comm, comm_keyval, it->second); rc != MPI_SUCCESS) {
      return weft::mpi::raise_callback_failure(comm, kFunction, "delete", comm_keyval, rc);
    }
  }
  attributes[comm_keyval] = attribute_val;
  weft::mpi::keyvals::attach(comm_keyval);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_set_attr);

// attribute_val is really a void**: the attribute's value (for the predefined attributes, the
// address of an int holding it) is stored there.
extern "C" int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  constexpr std::string_view kFunction = "MPI_Comm_get_attr";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_keyval(comm, kFunction, comm_keyval, true); rc != MPI_SUCCESS) return rc;
  if (attribute_val == nullptr || flag == nullptr) {
    return raise(comm, kFunction, MPI_ERR_ARG,
                 std::string(attribute_val == nullptr ? "attribute_val" : "flag") +
                     " = NULL, expected where to store the result");
  }
  void*& out = *static_cast<void**>(attribute_val);
  if (is_predefined_keyval(comm_keyval)) {
    *flag = comm == MPI_COMM_WORLD;
    if (*flag) out = weft::mpi::predefined_value(comm_keyval);
    return MPI_SUCCESS;
  }
  const auto& attributes = comm->local_of_caller().attributes;
  const auto it = attributes.find(comm_keyval);
  *flag = it != attributes.end();
  if (*flag) out = it->second;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_get_attr);

// Deleting an attribute that is not set does nothing, as in MPICH: the standard names no error.
// The keyval may have been freed already: its attributes can still be deleted.
extern "C" int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval) {
  constexpr std::string_view kFunction = "MPI_Comm_delete_attr";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  const auto& attributes = comm->local_of_caller().attributes;
  const auto it = attributes.find(comm_keyval);
  if (it == attributes.end()) {
    return check_keyval(comm, kFunction, comm_keyval, false);
  }
  if (int rc = weft::mpi::delete_one(comm, comm_keyval, it->second); rc != MPI_SUCCESS) {
    return weft::mpi::raise_callback_failure(comm, kFunction, "delete", comm_keyval, rc);
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_delete_attr);
