// MPI_Grequest_start and MPI_Grequest_complete, and what waits, tests, MPI_Request_free,
// MPI_Request_get_status and MPI_Cancel do with a generalized request.
//
// Freeing: free_fn runs once, when the program no longer holds the request and it is complete:
// at the wait or test that collects it, or, for a request given up by MPI_Request_free, at that
// call if it is complete already, else at MPI_Grequest_complete (the completion word tells which
// came last, as for a freed point-to-point request).
#include "request/generalized.h"

#include <string>
#include <string_view>

#include "errhan/error.h"
#include "init/world.h"
#include "util/profiling.h"

namespace weft::mpi {

int query_generalized(Request& request) {
  const Request::Generalized& g = request.generalized;
  MPI_Status status = request.status;
  const int rc = g.query(g.extra_state, &status);
  // The query decides what the program sees, but weft's cancelled flag and byte count are its
  // fields too (set through MPI_Status_set_cancelled and MPI_Status_set_elements).
  request.status = status;
  request.status.MPI_ERROR = rc;
  return rc;
}

int collect_generalized(Request& request) {
  const int query_rc = query_generalized(request);
  const Request::Generalized& g = request.generalized;
  const int free_rc = g.free(g.extra_state);
  const int rc = query_rc != MPI_SUCCESS ? query_rc : free_rc;
  request.status.MPI_ERROR = rc;
  return rc;
}

}  // namespace weft::mpi

extern "C" int PMPI_Grequest_start(MPI_Grequest_query_function* query_fn,
                                   MPI_Grequest_free_function* free_fn,
                                   MPI_Grequest_cancel_function* cancel_fn, void* extra_state,
                                   MPI_Request* request) {
  constexpr std::string_view kFunction = "MPI_Grequest_start";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  const char* missing = query_fn == nullptr    ? "query_fn"
                        : free_fn == nullptr   ? "free_fn"
                        : cancel_fn == nullptr ? "cancel_fn"
                        : request == nullptr   ? "request"
                                               : nullptr;
  if (missing != nullptr) {
    return weft::mpi::raise(
        MPI_COMM_WORLD, kFunction, MPI_ERR_ARG,
        std::string(missing) + " = NULL, expected " +
            (request == nullptr && query_fn && free_fn && cancel_fn ? "where to store the request"
                                                                    : "a callback"));
  }
  weft::mpi::Request* r = weft::mpi::caller_state().requests.get();
  r->kind = weft::mpi::RequestKind::generalized;
  // Errors of a generalized request belong to no communicator: MPI_COMM_WORLD's handler.
  r->comm = MPI_COMM_WORLD;
  r->owner = weft::mpi::caller_world_rank();
  r->peer = MPI_PROC_NULL;
  r->generalized = {query_fn, free_fn, cancel_fn, extra_state};
  *request = r;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Grequest_start);

// Any thread may complete the request, also one that is not a rank's (a helper thread of the
// program). The handle stays valid for the waits.
extern "C" int PMPI_Grequest_complete(MPI_Request request) {
  if (request == MPI_REQUEST_NULL || request->kind != weft::mpi::RequestKind::generalized) {
    return weft::mpi::raise(
        MPI_COMM_WORLD, "MPI_Grequest_complete", MPI_ERR_REQUEST,
        std::string(request == MPI_REQUEST_NULL ? "request = MPI_REQUEST_NULL"
                                                : "request is not a generalized request") +
            ", expected one made by MPI_Grequest_start");
  }
  // True when MPI_Request_free gave it up before: nobody will collect it, so free it here.
  if (request->completion.complete()) {
    request->generalized.free(request->generalized.extra_state);
    weft::mpi::dispose(request);
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Grequest_complete);
