// Calls on a request itself: freeing, peeking at its status, cancelling.
#include "errhan/error.h"
#include "init/world.h"
#include "pt2pt/p2p.h"
#include "request/generalized.h"
#include "transport/transport.h"
#include "util/profiling.h"
#include "weft/this_thread.h"

using weft::mpi::Request;

namespace {

int check_live_handle(std::string_view function, const MPI_Request* handle) {
  if (int rc = weft::mpi::check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (handle == nullptr || *handle == MPI_REQUEST_NULL) {
    return weft::mpi::raise(
        MPI_COMM_WORLD, function, MPI_ERR_REQUEST,
        std::string(handle == nullptr ? "request = NULL" : "request = MPI_REQUEST_NULL") +
            ", expected a request");
  }
  return MPI_SUCCESS;
}

}  // namespace

// A pending request is given to whoever completes it; a completed or inactive one goes now.
extern "C" int PMPI_Request_free(MPI_Request* request) {
  if (int rc = check_live_handle("MPI_Request_free", request); rc != MPI_SUCCESS) return rc;
  Request* r = *request;
  if (r->kind == weft::mpi::RequestKind::collective && !weft::mpi::inactive(r) &&
      !r->completion.done()) {
    return weft::mpi::raise(r->comm, "MPI_Request_free", MPI_ERR_REQUEST,
                            "the request is an active collective, expected it completed by "
                            "MPI_Wait or MPI_Test first (MPI-3.1 5.12)");
  }
  *request = MPI_REQUEST_NULL;
  r->collective.reset();
  // A persistent request's restart owns what its operation keeps (a partitioned channel): it
  // goes now, while the rank is alive, not when the pool reuses the request.
  r->restart = nullptr;
  if (weft::mpi::inactive(r) || !r->completion.mark_freed()) {
    // A generalized request complete already: its free_fn runs now (generalized.cpp).
    if (r->kind == weft::mpi::RequestKind::generalized) {
      r->generalized.free(r->generalized.extra_state);
    }
    weft::mpi::dispose(r);
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Request_free);

extern "C" int PMPI_Request_get_status(MPI_Request request, int* flag, MPI_Status* status) {
  constexpr std::string_view kFunction = "MPI_Request_get_status";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_out(MPI_COMM_WORLD, kFunction, "flag", flag); rc != MPI_SUCCESS) {
    return rc;
  }
  if (weft::mpi::inactive(request)) {
    *flag = 1;
    weft::mpi::set_empty_status(status);
    return MPI_SUCCESS;
  }
  *flag = request->completion.done();
  if (!*flag) {
    weft::mpi::after_failed_test();
    return MPI_SUCCESS;
  }
  if (request->kind == weft::mpi::RequestKind::generalized) {
    weft::mpi::query_generalized(*request);
  }
  weft::mpi::report_status(status, request->status);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Request_get_status);

// A receive not matched yet is cancelled; so is a send whose data nobody has started to copy:
// its rendezvous message, or the eager copy it left (the send completed then, but MPI-4.1 3.8.4
// lets a cancel succeed until the message is received, as MPICH's does), still queued at its
// destination. A destination in another process is asked through the transport, and answers.
extern "C" int PMPI_Cancel(MPI_Request* request) {
  if (int rc = check_live_handle("MPI_Cancel", request); rc != MPI_SUCCESS) return rc;
  Request* r = *request;
  if (r->persistent && !r->active) {
    return weft::mpi::raise(r->comm, "MPI_Cancel", MPI_ERR_REQUEST,
                            "the persistent request is not started, expected an active one");
  }
  if (r->kind == weft::mpi::RequestKind::generalized) {
    // The program decides; a request cancelled in time reports it through its query_fn.
    const int rc = r->generalized.cancel(r->generalized.extra_state, r->completion.done());
    if (rc == MPI_SUCCESS) return MPI_SUCCESS;
    return weft::mpi::raise(MPI_COMM_WORLD, "MPI_Cancel", rc,
                            "the cancel_fn of the generalized request returned " +
                                std::to_string(rc) + ", expected MPI_SUCCESS");
  }
  if (r->kind == weft::mpi::RequestKind::collective) {
    return weft::mpi::raise(r->comm, "MPI_Cancel", MPI_ERR_REQUEST,
                            "the request is a collective, which cannot be cancelled (MPI-3.1 "
                            "5.12), expected a point-to-point request");
  }
  if (r->peer == MPI_PROC_NULL) return MPI_SUCCESS;
  weft::mpi::World& world = *weft::mpi::world();
  if (r->kind == weft::mpi::RequestKind::recv) {
    if (!r->completion.done()) world.rank(r->owner).engine.cancel_recv(*r);
    return MPI_SUCCESS;
  }
  const int dest = r->comm->world_rank(r->peer);
  if (!world.is_local(dest)) {
    // A withdrawn rendezvous message's send completes through UCX without its data read, maybe
    // before this answer; the owner reads the status only once its Wait or Test has seen the
    // completion, after this call.
    if (r->queued_key != 0 && world.transport()->cancel(dest, r->queued_key)) {
      r->status.weft_cancelled = 1;
    }
    r->queued_key = 0;
    return MPI_SUCCESS;
  }
  if (!r->completion.done()) {
    if (world.rank(dest).engine.cancel_send(*r)) {
      r->status.weft_cancelled = 1;
      r->status.MPI_ERROR = MPI_SUCCESS;
      weft::mpi::finish(*r);
    }
    return MPI_SUCCESS;
  }
  // Completed, its message still queued: an eager copy, or a Bsend's.
  if (r->queued_key != 0) {
    if (weft_mpi_message* message = world.rank(dest).engine.withdraw(r->queued_key)) {
      message->release();
      r->status.weft_cancelled = 1;
    }
    r->queued_key = 0;
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Cancel);

extern "C" int PMPI_Test_cancelled(const MPI_Status* status, int* flag) {
  if (int rc = weft::mpi::check_initialized("MPI_Test_cancelled"); rc != MPI_SUCCESS) return rc;
  if (status == nullptr || flag == nullptr) {
    return weft::mpi::raise(MPI_COMM_WORLD, "MPI_Test_cancelled", MPI_ERR_ARG,
                            status == nullptr ? "status = NULL, expected a status"
                                              : "flag = NULL, expected where to store the result");
  }
  *flag = status->weft_cancelled;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Test_cancelled);
