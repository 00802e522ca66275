// MPI_Session_init and _finalize, their error handlers and info.
#include "session/session.h"

#include <mutex>
#include <set>
#include <string>

#include "errhan/errhandler.h"
#include "errhan/error.h"
#include "init/fatal.h"
#include "init/world.h"
#include "util/profiling.h"

using weft::mpi::RankState;

namespace weft::mpi::session {

namespace {

// The open sessions of this process, so that a stale or foreign handle is refused by name.
std::mutex registry_lock;
std::set<const weft_mpi_session*>& registry() {
  static std::set<const weft_mpi_session*> open;
  return open;
}

}  // namespace

int raise(MPI_Session session, std::string_view function, int error_class,
          std::string_view detail) {
  const int rank = caller_world_rank();
  const std::string message = std::string(function) + " (rank " + std::to_string(rank) +
                              "): " + std::string(error_class_name(error_class)) + ": " +
                              std::string(detail);
  MPI_Errhandler handler = MPI_ERRORS_ARE_FATAL;
  {
    std::lock_guard lock(registry_lock);
    if (registry().count(session) != 0) handler = session->errhandler;
  }
  if (handler == MPI_ERRORS_RETURN) return error_class;
  if (handler == MPI_ERRORS_ARE_FATAL || handler == MPI_ERRHANDLER_NULL) end_job(message);
  int code = error_class;
  // Made by MPI_Session_create_errhandler: the function is a session handler's.
  reinterpret_cast<MPI_Session_errhandler_function*>(handler->function)(&session, &code);
  return error_class;
}

int check(MPI_Session session, std::string_view function) {
  {
    std::lock_guard lock(registry_lock);
    if (registry().count(session) != 0 && session->owner == caller_world_rank()) {
      return MPI_SUCCESS;
    }
  }
  return raise(session, function, MPI_ERR_SESSION,
               session == MPI_SESSION_NULL
                   ? "session = MPI_SESSION_NULL, expected a session from MPI_Session_init"
                   : "the session is not open in this rank, expected one from MPI_Session_init "
                     "not finalized yet");
}

int pset_index(std::string_view name) {
  for (std::size_t i = 0; i < std::size(kPsets); ++i) {
    const std::string_view pset = kPsets[i];
    if (name.size() != pset.size()) continue;
    bool same = true;
    for (std::size_t c = 0; c < name.size() && same; ++c) {
      same = std::tolower(static_cast<unsigned char>(name[c])) ==
             std::tolower(static_cast<unsigned char>(pset[c]));
    }
    if (same) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace weft::mpi::session

extern "C" int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session* session) {
  constexpr std::string_view kFunction = "MPI_Session_init";
  weft::mpi::World* world = weft::mpi::world();
  const int rank = weft::mpi::caller_world_rank();
  if (world == nullptr || rank < 0) {
    weft::mpi::end_job(std::string(kFunction) +
                       " called outside a rank of an MPI job: start the program with weftrun");
  }
  if (session == nullptr) {
    return weft::mpi::session::raise(MPI_SESSION_NULL, kFunction, MPI_ERR_ARG,
                                     "session = NULL, expected where to store the handle");
  }
  if (errhandler == MPI_ERRHANDLER_NULL) {
    return weft::mpi::session::raise(MPI_SESSION_NULL, kFunction, MPI_ERR_ERRHANDLER,
                                     "errhandler = MPI_ERRHANDLER_NULL, expected a handler");
  }
  RankState& state = world->rank(rank);
  {
    std::lock_guard lock(state.usage_lock);
    ++state.sessions;
    // release: the rank's other threads that see "initialized" see the rank ready.
    state.phase.store(RankState::Phase::initialized, std::memory_order_release);
  }
  auto* made = new weft_mpi_session{rank, errhandler, MPI_THREAD_MULTIPLE};
  // "thread_level" asks for a level; every level is provided, so the session reports the one
  // asked for (MPI-4.1 11.3.1), MPI_THREAD_MULTIPLE by default.
  if (info != MPI_INFO_NULL) {
    char value[MPI_MAX_INFO_VAL + 1] = {};
    int flag = 0;
    PMPI_Info_get(info, "thread_level", MPI_MAX_INFO_VAL, value, &flag);
    const std::string level = flag != 0 ? value : "";
    if (level == "MPI_THREAD_SINGLE") made->thread_level = MPI_THREAD_SINGLE;
    if (level == "MPI_THREAD_FUNNELED") made->thread_level = MPI_THREAD_FUNNELED;
    if (level == "MPI_THREAD_SERIALIZED") made->thread_level = MPI_THREAD_SERIALIZED;
  }
  {
    std::lock_guard lock(weft::mpi::session::registry_lock);
    weft::mpi::session::registry().insert(made);
  }
  *session = made;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Session_init);

extern "C" int PMPI_Session_finalize(MPI_Session* session) {
  constexpr std::string_view kFunction = "MPI_Session_finalize";
  if (session == nullptr) {
    return weft::mpi::session::raise(MPI_SESSION_NULL, kFunction, MPI_ERR_ARG,
                                     "session = NULL, expected the address of a session");
  }
  if (int rc = weft::mpi::session::check(*session, kFunction); rc != MPI_SUCCESS) return rc;
  {
    std::lock_guard lock(weft::mpi::session::registry_lock);
    weft::mpi::session::registry().erase(*session);
  }
  RankState& state = weft::mpi::world()->rank((*session)->owner);
  delete *session;
  *session = MPI_SESSION_NULL;
  std::lock_guard lock(state.usage_lock);
  if (--state.sessions == 0 &&
      state.world_model.load(std::memory_order_relaxed) != RankState::Phase::initialized) {
    // Back to what the world model says: a later MPI_Init or MPI_Session_init starts again.
    state.phase.store(state.world_model.load(std::memory_order_relaxed), std::memory_order_release);
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Session_finalize);

extern "C" int PMPI_Session_get_info(MPI_Session session, MPI_Info* info_used) {
  constexpr std::string_view kFunction = "MPI_Session_get_info";
  if (int rc = weft::mpi::session::check(session, kFunction); rc != MPI_SUCCESS) return rc;
  if (info_used == nullptr) {
    return weft::mpi::session::raise(session, kFunction, MPI_ERR_ARG,
                                     "info_used = NULL, expected where to store the info");
  }
  static constexpr const char* kLevels[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                            "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};
  PMPI_Info_create(info_used);
  PMPI_Info_set(*info_used, "thread_level", kLevels[session->thread_level]);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Session_get_info);

extern "C" int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler) {
  constexpr std::string_view kFunction = "MPI_Session_set_errhandler";
  if (int rc = weft::mpi::session::check(session, kFunction); rc != MPI_SUCCESS) return rc;
  if (errhandler == MPI_ERRHANDLER_NULL) {
    return weft::mpi::session::raise(session, kFunction, MPI_ERR_ERRHANDLER,
                                     "errhandler = MPI_ERRHANDLER_NULL, expected a handler");
  }
  session->errhandler = errhandler;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Session_set_errhandler);

extern "C" int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler* errhandler) {
  constexpr std::string_view kFunction = "MPI_Session_get_errhandler";
  if (int rc = weft::mpi::session::check(session, kFunction); rc != MPI_SUCCESS) return rc;
  if (errhandler == nullptr) {
    return weft::mpi::session::raise(session, kFunction, MPI_ERR_ARG,
                                     "errhandler = NULL, expected where to store the handle");
  }
  *errhandler = session->errhandler;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Session_get_errhandler);

// Like MPI_Comm_create_errhandler's: the handler keeps the function, called with the session.
extern "C" int PMPI_Session_create_errhandler(MPI_Session_errhandler_function* function,
                                              MPI_Errhandler* errhandler) {
  constexpr std::string_view kFunction = "MPI_Session_create_errhandler";
  if (function == nullptr || errhandler == nullptr) {
    return weft::mpi::session::raise(MPI_SESSION_NULL, kFunction, MPI_ERR_ARG,
                                     function == nullptr
                                         ? "session_errhandler_fn = NULL, expected a function"
                                         : "errhandler = NULL, expected where to store it");
  }
  *errhandler = new weft_mpi_errhandler{reinterpret_cast<MPI_Comm_errhandler_function*>(function)};
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Session_create_errhandler);

extern "C" int PMPI_Session_call_errhandler(MPI_Session session, int errorcode) {
  constexpr std::string_view kFunction = "MPI_Session_call_errhandler";
  if (int rc = weft::mpi::session::check(session, kFunction); rc != MPI_SUCCESS) return rc;
  weft::mpi::session::raise(session, kFunction, errorcode, "called by the program");
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Session_call_errhandler);
