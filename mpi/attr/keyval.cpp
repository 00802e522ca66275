// The process-wide keyval registry, MPI_Comm_create_keyval / MPI_Comm_free_keyval and the
// predefined copy and delete callbacks.
#include <mutex>
#include <string>
#include <unordered_map>

#include "attr/attribute.h"
#include "errhan/error.h"
#include "util/profiling.h"
#include "weft/detail/spin_lock.h"

namespace weft::mpi::keyvals {

namespace {

struct Entry {
  Keyval keyval;
  bool freed = false;
  int attached = 0;  // attributes set with it, on any communicator and rank
};

// Any rank may create, free or use a keyval at any time; critical sections are a map operation
// and never run a callback, so a spin lock suffices.
struct Registry {
  weft::detail::SpinLock lock;
  std::unordered_map<int, Entry> entries;
  int next = MPI_LASTUSEDCODE + 1;  // user keyvals follow the predefined ones
};

Registry& registry() {
  static Registry instance;
  return instance;
}

}  // namespace

int create(const Keyval& keyval) {
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  const int id = r.next++;
  r.entries.emplace(id, Entry{keyval});
  return id;
}

std::optional<Keyval> live(int id) {
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  const auto it = r.entries.find(id);
  if (it == r.entries.end() || it->second.freed) return std::nullopt;
  return it->second.keyval;
}

Keyval attached(int id) {
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  return r.entries.at(id).keyval;
}

bool free(int id) {
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  const auto it = r.entries.find(id);
  if (it == r.entries.end() || it->second.freed) return false;
  if (it->second.attached == 0) {
    r.entries.erase(it);
  } else {
    it->second.freed = true;
  }
  return true;
}

void attach(int id) {
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  ++r.entries.at(id).attached;
}

void detach(int id) {
  Registry& r = registry();
  std::lock_guard guard(r.lock);
  const auto it = r.entries.find(id);
  if (--it->second.attached == 0 && it->second.freed) r.entries.erase(it);
}

}  // namespace weft::mpi::keyvals

extern "C" int weft_mpi_comm_null_copy_fn(MPI_Comm, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}

extern "C" int weft_mpi_comm_dup_fn(MPI_Comm, int, void*, void* attribute_val_in,
                                    void* attribute_val_out, int* flag) {
  *static_cast<void**>(attribute_val_out) = attribute_val_in;
  *flag = 1;
  return MPI_SUCCESS;
}

extern "C" int weft_mpi_comm_null_delete_fn(MPI_Comm, int, void*, void*) {
  return MPI_SUCCESS;
}

extern "C" int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* comm_copy_attr_fn,
                                       MPI_Comm_delete_attr_function* comm_delete_attr_fn,
                                       int* comm_keyval, void* extra_state) {
  if (int rc = weft::mpi::check_initialized("MPI_Comm_create_keyval"); rc != MPI_SUCCESS) {
    return rc;
  }
  if (comm_keyval == nullptr) {
    return weft::mpi::raise(MPI_COMM_WORLD, "MPI_Comm_create_keyval", MPI_ERR_ARG,
                            "comm_keyval = NULL, expected where to store the keyval");
  }
  *comm_keyval = weft::mpi::keyvals::create({comm_copy_attr_fn, comm_delete_attr_fn, extra_state});
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_create_keyval);

extern "C" int PMPI_Comm_free_keyval(int* comm_keyval) {
  if (int rc = weft::mpi::check_initialized("MPI_Comm_free_keyval"); rc != MPI_SUCCESS) return rc;
  if (comm_keyval == nullptr) {
    return weft::mpi::raise(MPI_COMM_WORLD, "MPI_Comm_free_keyval", MPI_ERR_ARG,
                            "comm_keyval = NULL, expected the address of a keyval");
  }
  if (weft::mpi::is_predefined_keyval(*comm_keyval) || !weft::mpi::keyvals::free(*comm_keyval)) {
    return weft::mpi::raise(
        MPI_COMM_WORLD, "MPI_Comm_free_keyval", MPI_ERR_KEYVAL,
        "comm_keyval = " + std::to_string(*comm_keyval) +
            (weft::mpi::is_predefined_keyval(*comm_keyval)
                 ? ", a predefined keyval, expected one made by MPI_Comm_create_keyval"
                 : ", expected a keyval made by MPI_Comm_create_keyval and not freed yet"));
  }
  *comm_keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_free_keyval);
