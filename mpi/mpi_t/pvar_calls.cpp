// Performance variables (MPI-4.1 15.3.7): their queries, sessions and handles.
//
// Every variable is continuous (it counts from the start of the job: MPI_T_pvar_start and
// MPI_T_pvar_stop do not apply) and a handle reads it relative to its own origin: a counter's
// reset moves the origin to the current count, and a write moves it so that the next read
// gives the value written. Levels (the unexpected queue's length) are read-only.
#include <algorithm>
#include <memory>
#include <mutex>
#include <vector>

#include "init/world.h"
#include "mpi_t/tools_state.h"
#include "mpi_t/variables.h"
#include "util/profiling.h"

using weft::mpi::tools::PerformanceVariable;
using weft::mpi::tools::tables;

struct weft_mpi_t_pvar_handle {
  int index = 0;
  MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
  std::uint64_t origin = 0;  // counters: subtracted from the count (modulo 2^64)
};

struct weft_mpi_t_pvar_session {
  int owner = -1;  // world rank
  std::vector<std::unique_ptr<weft_mpi_t_pvar_handle>> handles;
};

namespace {

// Sessions and handles change rarely; one lock keeps two threads of a rank safe.
std::mutex session_lock;

bool read_only(const PerformanceVariable& pvar) {
  return pvar.var_class != MPI_T_PVAR_CLASS_COUNTER;
}

const PerformanceVariable& pvar_of(const weft_mpi_t_pvar_handle& handle) {
  return tables().pvars[static_cast<std::size_t>(handle.index)];
}

std::uint64_t current(const weft_mpi_t_pvar_handle& handle) {
  return weft::mpi::tools::read_counter(pvar_of(handle).counter);
}

std::uint64_t value_of(const weft_mpi_t_pvar_handle& handle) {
  const std::uint64_t now = current(handle);
  return read_only(pvar_of(handle)) ? now : now - handle.origin;
}

int check_session(MPI_T_pvar_session session) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  if (session == MPI_T_PVAR_SESSION_NULL || session->owner != weft::mpi::caller_world_rank()) {
    return MPI_T_ERR_INVALID_SESSION;
  }
  return MPI_SUCCESS;
}

// A handle of `session` (MPI_T_PVAR_ALL_HANDLES only where `all` allows it).
int check_handle(MPI_T_pvar_session session, MPI_T_pvar_handle handle, bool all) {
  if (int rc = check_session(session); rc != MPI_SUCCESS) return rc;
  if (handle == MPI_T_PVAR_ALL_HANDLES) return all ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
  if (handle == MPI_T_PVAR_HANDLE_NULL || handle->session != session) {
    return MPI_T_ERR_INVALID_HANDLE;
  }
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_T_pvar_get_num(int* num_pvar) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  if (num_pvar == nullptr) return MPI_T_ERR_INVALID;
  *num_pvar = static_cast<int>(tables().pvars.size());
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_pvar_get_num);

extern "C" int PMPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity,
                                    int* var_class, MPI_Datatype* datatype, MPI_T_enum* enumtype,
                                    char* desc, int* desc_len, int* bind, int* readonly,
                                    int* continuous, int* atomic) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  if (pvar_index < 0 || static_cast<std::size_t>(pvar_index) >= tables().pvars.size()) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  const PerformanceVariable& pvar = tables().pvars[static_cast<std::size_t>(pvar_index)];
  weft::mpi::tools::copy_string(pvar.name, name, name_len);
  weft::mpi::tools::copy_string(pvar.desc, desc, desc_len);
  auto set = [](int* out, int value) {
    if (out != nullptr) *out = value;
  };
  set(verbosity, pvar.verbosity);
  set(var_class, pvar.var_class);
  if (datatype != nullptr) *datatype = MPI_UNSIGNED_LONG_LONG;
  if (enumtype != nullptr) *enumtype = MPI_T_ENUM_NULL;
  set(bind, MPI_T_BIND_NO_OBJECT);
  set(readonly, read_only(pvar) ? 1 : 0);
  set(continuous, 1);
  // A handle's read and reset are one read of the count: nothing counted between them is lost.
  set(atomic, read_only(pvar) ? 0 : 1);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_pvar_get_info);

extern "C" int PMPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  if (name == nullptr || pvar_index == nullptr) return MPI_T_ERR_INVALID;
  for (std::size_t i = 0; i < tables().pvars.size(); ++i) {
    if (tables().pvars[i].name == name && tables().pvars[i].var_class == var_class) {
      *pvar_index = static_cast<int>(i);
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}
WEFT_MPI_ALIAS(MPI_T_pvar_get_index);

extern "C" int PMPI_T_pvar_session_create(MPI_T_pvar_session* session) {
  if (int rc = weft::mpi::tools::check_initialized(); rc != MPI_SUCCESS) return rc;
  if (session == nullptr) return MPI_T_ERR_INVALID;
  *session = new weft_mpi_t_pvar_session;
  (*session)->owner = weft::mpi::caller_world_rank();
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_pvar_session_create);

extern "C" int PMPI_T_pvar_session_free(MPI_T_pvar_session* session) {
  if (session == nullptr) return MPI_T_ERR_INVALID;
  if (int rc = check_session(*session); rc != MPI_SUCCESS) return rc;
  std::lock_guard lock(session_lock);
  delete *session;
  *session = MPI_T_PVAR_SESSION_NULL;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_pvar_session_free);

extern "C" int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index,
                                        void* /*obj_handle*/, MPI_T_pvar_handle* handle,
                                        int* count) {
  if (int rc = check_session(session); rc != MPI_SUCCESS) return rc;
  if (pvar_index < 0 || static_cast<std::size_t>(pvar_index) >= tables().pvars.size()) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  if (handle == nullptr || count == nullptr) return MPI_T_ERR_INVALID;
  auto made = std::make_unique<weft_mpi_t_pvar_handle>();
  made->index = pvar_index;
  made->session = session;
  // A counter reads from 0 at its handle's allocation.
  if (!read_only(tables().pvars[static_cast<std::size_t>(pvar_index)])) {
    made->origin = current(*made);
  }
  *handle = made.get();
  *count = 1;
  std::lock_guard lock(session_lock);
  session->handles.push_back(std::move(made));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_pvar_handle_alloc);

extern "C" int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle* handle) {
  if (handle == nullptr) return MPI_T_ERR_INVALID;
  if (int rc = check_handle(session, *handle, false); rc != MPI_SUCCESS) return rc;
  std::lock_guard lock(session_lock);
  auto& handles = session->handles;
  handles.erase(std::find_if(handles.begin(), handles.end(),
                             [&](const auto& h) { return h.get() == *handle; }));
  *handle = MPI_T_PVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_pvar_handle_free);

// Continuous variables only: start and stop apply to none (MPI_T_PVAR_ALL_HANDLES skips them).
extern "C" int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  if (int rc = check_handle(session, handle, true); rc != MPI_SUCCESS) return rc;
  return handle == MPI_T_PVAR_ALL_HANDLES ? MPI_SUCCESS : MPI_T_ERR_PVAR_NO_STARTSTOP;
}
WEFT_MPI_ALIAS(MPI_T_pvar_start);

extern "C" int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  if (int rc = check_handle(session, handle, true); rc != MPI_SUCCESS) return rc;
  return handle == MPI_T_PVAR_ALL_HANDLES ? MPI_SUCCESS : MPI_T_ERR_PVAR_NO_STARTSTOP;
}
WEFT_MPI_ALIAS(MPI_T_pvar_stop);

extern "C" int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  if (int rc = check_handle(session, handle, false); rc != MPI_SUCCESS) return rc;
  if (buf == nullptr) return MPI_T_ERR_INVALID;
  *static_cast<unsigned long long*>(buf) = value_of(*handle);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_pvar_read);

extern "C" int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                                 const void* buf) {
  if (int rc = check_handle(session, handle, false); rc != MPI_SUCCESS) return rc;
  if (buf == nullptr) return MPI_T_ERR_INVALID;
  if (read_only(pvar_of(*handle))) return MPI_T_ERR_PVAR_NO_WRITE;
  handle->origin = current(*handle) - *static_cast<const unsigned long long*>(buf);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_pvar_write);

extern "C" int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  if (int rc = check_handle(session, handle, true); rc != MPI_SUCCESS) return rc;
  if (handle == MPI_T_PVAR_ALL_HANDLES) {
    std::lock_guard lock(session_lock);
    for (const auto& h : session->handles) {
      if (!read_only(pvar_of(*h))) h->origin = current(*h);
    }
    return MPI_SUCCESS;
  }
  if (read_only(pvar_of(*handle))) return MPI_T_ERR_PVAR_NO_WRITE;
  handle->origin = current(*handle);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_pvar_reset);

extern "C" int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                                     void* buf) {
  if (int rc = check_handle(session, handle, false); rc != MPI_SUCCESS) return rc;
  if (buf == nullptr) return MPI_T_ERR_INVALID;
  if (read_only(pvar_of(*handle))) return MPI_T_ERR_PVAR_NO_WRITE;
  const std::uint64_t now = current(*handle);
  *static_cast<unsigned long long*>(buf) = now - handle->origin;
  handle->origin = now;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_T_pvar_readreset);
