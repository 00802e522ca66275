// MPI's environment: initialisation, finalisation, thread levels, abort, clocks and names.
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "attr/attribute.h"
#include "comm/communicator.h"
#include "errhan/error.h"
#include "init/fatal.h"
#include "init/world.h"
#include "util/profiling.h"
#include "weft/this_thread.h"
#include "weft/trace.h"

using weft::mpi::check_initialized;
using weft::mpi::RankState;

namespace {

// The calling rank's state for the calls allowed before MPI_Init; nullptr outside a rank.
RankState* state_or_null() {
  weft::mpi::World* world = weft::mpi::world();
  const int rank = weft::mpi::caller_world_rank();
  return world != nullptr && rank >= 0 ? &world->rank(rank) : nullptr;
}

int initialize(std::string_view function, int level) {
  RankState* state = state_or_null();
  if (state == nullptr) {
    // check_initialized words the reason (no job, or not a rank's thread) and ends the job.
    return check_initialized(function);
  }
  std::lock_guard lock(state->usage_lock);
  if (state->world_model.load(std::memory_order_acquire) != RankState::Phase::fresh) {
    weft::mpi::end_job(std::string(function) + " (rank " +
                       std::to_string(weft::mpi::caller_world_rank()) +
                       "): MPI is already initialised in this rank, expected one call of "
                       "MPI_Init or MPI_Init_thread");
  }
  state->thread_level = level;
  state->main_thread = weft::this_thread::id();
  // release: a thread of the rank that sees "initialized" sees the fields above.
  state->world_model.store(RankState::Phase::initialized, std::memory_order_release);
  state->phase.store(RankState::Phase::initialized, std::memory_order_release);
  return MPI_SUCCESS;
}

int copy_name(std::string_view text, char* out, int* length, std::size_t capacity) {
  const std::size_t n = std::min(text.size(), capacity - 1);
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
  *length = static_cast<int>(n);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Init(int*, char***) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return initialize("MPI_Init", MPI_THREAD_MULTIPLE);
}
WEFT_MPI_ALIAS(MPI_Init);

// Every level is provided: ranks are threads of one runtime whose MPI is thread-safe throughout.
extern "C" int PMPI_Init_thread(int*, char***, int, int* provided) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  const int rc = initialize("MPI_Init_thread", MPI_THREAD_MULTIPLE);
  if (provided != nullptr) *provided = MPI_THREAD_MULTIPLE;
  return rc;
}
WEFT_MPI_ALIAS(MPI_Init_thread);

extern "C" int PMPI_Finalize(void) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_initialized("MPI_Finalize"); rc != MPI_SUCCESS) return rc;
  // MPI-4.1 11.2.2: first of all, MPI_COMM_SELF is freed as if by MPI_Comm_free: its delete
  // callbacks run, last set first, while the rank still counts as initialized.
  if (int rc = weft::mpi::delete_attributes(weft::mpi::caller_self_comm(), "MPI_Finalize");
      rc != MPI_SUCCESS) {
    return rc;
  }
  RankState& state = weft::mpi::caller_state();
  if (state.world_model.load(std::memory_order_acquire) != RankState::Phase::initialized) {
    // MPI is usable through a session only: the world model was never started.
    weft::mpi::end_job("MPI_Finalize (rank " + std::to_string(weft::mpi::caller_world_rank()) +
                       "): called without MPI_Init or MPI_Init_thread (only sessions are open), "
                       "expected MPI_Session_finalize for them");
  }
  // Buffered sends must reach their receivers (MPI-3.1 3.6.1); eager copies already live in the
  // receivers' engines, so other ranks may still receive them after this rank is gone.
  state.bsend.drain();
  std::lock_guard lock(state.usage_lock);
  state.world_model.store(RankState::Phase::finalized, std::memory_order_release);
  // Open sessions keep MPI usable for the objects derived from them (MPI-4.1 11.3).
  if (state.sessions == 0)
    state.phase.store(RankState::Phase::finalized, std::memory_order_release);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Finalize);

extern "C" int PMPI_Initialized(int* flag) {
  const RankState* state = state_or_null();
  *flag = state != nullptr &&
          state->world_model.load(std::memory_order_acquire) != RankState::Phase::fresh;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Initialized);

extern "C" int PMPI_Finalized(int* flag) {
  const RankState* state = state_or_null();
  *flag = state != nullptr &&
          state->world_model.load(std::memory_order_acquire) == RankState::Phase::finalized;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Finalized);

extern "C" int PMPI_Abort(MPI_Comm comm, int errorcode) {
  const int rank = weft::mpi::caller_world_rank();
  std::string where = "MPI_COMM_NULL";
  if (comm != MPI_COMM_NULL && weft::mpi::world() != nullptr && comm->my_rank() >= 0) {
    where = comm->local_of_caller().name;
    if (where.empty()) where = "an unnamed communicator";
  }
  weft::mpi::end_job("MPI_Abort called by rank " + std::to_string(rank) + " on " + where +
                         " with code " + std::to_string(errorcode),
                     errorcode);
}
WEFT_MPI_ALIAS(MPI_Abort);

extern "C" int PMPI_Query_thread(int* provided) {
  if (int rc = check_initialized("MPI_Query_thread"); rc != MPI_SUCCESS) return rc;
  *provided = weft::mpi::caller_state().thread_level;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Query_thread);

extern "C" int PMPI_Is_thread_main(int* flag) {
  if (int rc = check_initialized("MPI_Is_thread_main"); rc != MPI_SUCCESS) return rc;
  *flag = weft::mpi::caller_state().main_thread == weft::this_thread::id();
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Is_thread_main);

extern "C" int PMPI_Get_version(int* version, int* subversion) {
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Get_version);

extern "C" int PMPI_Get_library_version(char* version, int* resultlen) {
  return copy_name("weft 0.1.0: thread-based MPI 3.1 (ranks are user-level threads)", version,
                   resultlen, MPI_MAX_LIBRARY_VERSION_STRING);
}
WEFT_MPI_ALIAS(MPI_Get_library_version);

extern "C" int PMPI_Get_processor_name(char* name, int* resultlen) {
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::strcpy(host, "localhost");
  return copy_name(host, name, resultlen, MPI_MAX_PROCESSOR_NAME);
}
WEFT_MPI_ALIAS(MPI_Get_processor_name);

extern "C" double PMPI_Wtime(void) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}
WEFT_MPI_ALIAS(MPI_Wtime);

extern "C" double PMPI_Wtick(void) {
  timespec resolution;
  clock_getres(CLOCK_MONOTONIC, &resolution);
  return static_cast<double>(resolution.tv_sec) + static_cast<double>(resolution.tv_nsec) * 1e-9;
}
WEFT_MPI_ALIAS(MPI_Wtick);

// Profiling control means nothing to weft itself; a profiling library may define MPI_Pcontrol.
extern "C" int PMPI_Pcontrol(const int, ...) {
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Pcontrol);
