// What the point-to-point calls share: their argument checks, starting a prepared request, and
// turning a completed request into what MPI_Wait and friends return.
#pragma once

#include <string_view>

#include "init/caller.h"
#include "mpi.h"
#include "request/request.h"

namespace weft::mpi {

// Argument checks of a send and of a receive, each returning MPI_SUCCESS or the class raised.
// On success *caller says who calls.
int check_send(std::string_view function, const void* buffer, int count, MPI_Datatype datatype,
               int dest, int tag, MPI_Comm comm, Caller* caller);
int check_recv(std::string_view function, const void* buffer, int count, MPI_Datatype datatype,
               int source, int tag, MPI_Comm comm, Caller* caller);
// MPI is initialised in the calling rank and `comm` is a communicator it may use: then fills
// *caller and returns MPI_SUCCESS, else raises the error.
int check_caller(std::string_view function, MPI_Comm comm, Caller* caller);
// A pointer argument the call writes through (status pointers excepted: they may be ignored).
int check_out(MPI_Comm comm, std::string_view function, std::string_view argument,
              const void* pointer);

// Starts a prepared request whose peer is a rank (not MPI_PROC_NULL). A send goes into the
// destination's engine, a receive into the caller's. A buffered send copies the data into the
// attached buffer first; it returns MPI_ERR_BUFFER (raised) when it does not fit.
int start(Request& request, std::string_view function);
// A blocking send's own path for a small message of a contiguous type to a rank of another
// process: sent within the call when the transport takes it at once (Transport::send_now), with
// no request. False when it did not send it: start() then, as for any message.
bool send_now(const void* buffer, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm, const Caller& caller);
// Completes a request at once, as an operation with MPI_PROC_NULL does.
void complete_proc_null(Request& request);

// The status of an operation with MPI_PROC_NULL, which leaves MPI_ERROR alone (a call that
// completes one operation leaves that field as the caller had it, MPI-4.1 3.2.5; a request's own
// status sets it where it is made), and the empty status, whose error is MPI_SUCCESS by
// definition (MPI-4.1 3.7.3; MPICH's pt2pt/rqstatus checks it).
void set_proc_null_status(MPI_Status* status);
void set_empty_status(MPI_Status* status);
// Hands a completed operation's status to the caller of a single-completion call (MPI_Recv,
// MPI_Wait, MPI_Mrecv, MPI_Request_get_status...): every field but MPI_ERROR, which only the
// multiple-completion calls set, and only when they return MPI_ERR_IN_STATUS (MPI-4.1 3.2.5).
void report_status(MPI_Status* out, const MPI_Status& status);

// A request MPI_Wait and friends treat as done at once with an empty status: null, or a
// persistent request not started.
inline bool inactive(const Request* request) {
  return request == MPI_REQUEST_NULL || (request->persistent && !request->active);
}

// Hands a completed request's results to the caller: copies its status (unless ignored), frees
// a non-persistent request (nulling the handle) or deactivates a persistent one. Returns the
// operation's error class (MPI_ERR_TRUNCATE for a truncated receive), not raised.
int collect(MPI_Request* handle, MPI_Status* status);
// Raises the error of a failed receive (truncation) on its communicator, naming the call.
int raise_status_error(MPI_Comm comm, std::string_view function, const MPI_Status& status,
                       int error_class);

}  // namespace weft::mpi
