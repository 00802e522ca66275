#include "pt2pt/p2p.h"

#include <string>

#include "errhan/error.h"
#include "init/world.h"
#include "request/generalized.h"
#include "transport/transport.h"

namespace weft::mpi {

namespace {

// check_caller's test of the common case, inline in every check so that a call pays one frame for
// all of them: true when it filled *caller.
inline bool plain_caller(MPI_Comm comm, Caller* caller) {
  World* w = world();
  const int world_rank = caller_world_rank();
  if (w == nullptr || world_rank < 0 || comm == MPI_COMM_NULL) return false;
  RankState& state = w->rank(world_rank);
  const int comm_rank = comm->rank_of(world_rank);
  // acquire: pairs with MPI_Init's release of the rank's state.
  if (state.phase.load(std::memory_order_acquire) != RankState::Phase::initialized ||
      comm_rank < 0 || comm->locals[comm->rank_of_world[world_rank]].freed) {
    return false;
  }
  *caller = Caller{world_rank, comm_rank, &state};
  return true;
}

// Something is wrong: the full checks say what. Out of line, with the other full checks below,
// so that their frames (strings for the messages) cost the common case nothing.
[[gnu::noinline, gnu::cold]] int check_caller_fully(std::string_view function, MPI_Comm comm) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  return check_comm(comm, function);
}

// Every argument of a send or receive plainly valid, tested with two calls instead of the full
// checks' six: the common case of every call. Anything else takes the full checks, which say
// what is wrong.
inline bool plainly_valid(const void* buffer, int count, MPI_Datatype datatype, int peer, int tag,
                          MPI_Comm comm, bool receive) {
  return count >= 0 && datatype != MPI_DATATYPE_NULL && (buffer != nullptr || count == 0) &&
         ((tag >= 0 && tag <= kTagUpperBound) || (receive && tag == MPI_ANY_TAG)) &&
         (peer == MPI_PROC_NULL || (receive && peer == MPI_ANY_SOURCE) ||
          (peer >= 0 && peer < comm->peer_count())) &&
         datatype->committed();
}

[[gnu::noinline, gnu::cold]] int check_message_fully(std::string_view function, const void* buffer,
                                                     int count, MPI_Datatype datatype, int peer,
                                                     int tag, MPI_Comm comm, bool receive) {
  if (plainly_valid(buffer, count, datatype, peer, tag, comm, receive)) return MPI_SUCCESS;
  if (int rc = check_count(comm, function, "count", count); rc != MPI_SUCCESS) return rc;
  // An empty message may name no datatype, as MPICH allows (MPI-4.1 tests send it so); prepare()
  // gives it MPI_BYTE.
  if (count == 0 && datatype == MPI_DATATYPE_NULL) datatype = MPI_BYTE;
  if (int rc = check_datatype(comm, function, "datatype", datatype); rc != MPI_SUCCESS) return rc;
  if (int rc = check_buffer(comm, function, "buf", buffer, count, datatype); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_rank(comm, function, receive ? "source" : "dest", peer, receive);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return check_tag(comm, function, tag, receive);
}

[[gnu::noinline, gnu::cold]] int check_fully(std::string_view function, const void* buffer,
                                             int count, MPI_Datatype datatype, int peer, int tag,
                                             MPI_Comm comm, Caller* caller, bool receive) {
  if (!plain_caller(comm, caller)) {
    if (int rc = check_caller_fully(function, comm); rc != MPI_SUCCESS) return rc;
  }
  return check_message_fully(function, buffer, count, datatype, peer, tag, comm, receive);
}

}  // namespace

int check_caller(std::string_view function, MPI_Comm comm, Caller* caller) {
  if (plain_caller(comm, caller)) return MPI_SUCCESS;
  return check_caller_fully(function, comm);
}

int check_send(std::string_view function, const void* buffer, int count, MPI_Datatype datatype,
               int dest, int tag, MPI_Comm comm, Caller* caller) {
  if (plain_caller(comm, caller) && plainly_valid(buffer, count, datatype, dest, tag, comm, false))
    return MPI_SUCCESS;
  return check_fully(function, buffer, count, datatype, dest, tag, comm, caller, false);
}

int check_recv(std::string_view function, const void* buffer, int count, MPI_Datatype datatype,
               int source, int tag, MPI_Comm comm, Caller* caller) {
  if (plain_caller(comm, caller) && plainly_valid(buffer, count, datatype, source, tag, comm, true))
    return MPI_SUCCESS;
  return check_fully(function, buffer, count, datatype, source, tag, comm, caller, true);
}

int check_out(MPI_Comm comm, std::string_view function, std::string_view argument,
              const void* pointer) {
  if (pointer != nullptr) return MPI_SUCCESS;
  return raise(comm, function, MPI_ERR_ARG,
               std::string(argument) + " = NULL, expected where to store the result");
}

namespace {

Envelope envelope_of(const Request& send) {
  return Envelope{send.context, send.source, send.tag,
                  static_cast<std::size_t>(send.count) * send.datatype->size()};
}

// MPI_Bsend: the data goes into the attached buffer and an internal send delivers it from
// there; the user's operation is complete at once.
// Hands a send to its destination: the engine of a rank of this process, else the transport.
int deliver(Request& send, std::string_view function, std::size_t eager_limit,
            std::uint64_t* queued_key) {
  World& w = *world();
  const int dest = send.comm->world_rank(send.peer);
  w.rank(send.owner).engine.count_sent();
  if (w.is_local(dest)) {
    w.rank(dest).engine.send(send, envelope_of(send), eager_limit, queued_key);
    return MPI_SUCCESS;
  }
  const std::string failure = w.transport()->send(send, dest, envelope_of(send), queued_key);
  if (failure.empty()) return MPI_SUCCESS;
  // The other process is most likely gone. If it ended the job on purpose (a rank's non-zero
  // exit, MPI_Abort), it told weftrun so first (end_job_deliberately), and weftrun names its end
  // rather than this consequence.
  return raise(send.comm, function, MPI_ERR_OTHER,
               "the message to rank " + std::to_string(send.peer) + " (world rank " +
                   std::to_string(dest) + ", process " + std::to_string(w.process_of(dest)) +
                   ") could not be sent: " + failure);
}

int start_buffered(Request& request, std::string_view function) {
  RankState& state = world()->rank(request.owner);
  const Caller owner{request.owner, request.source, &state};
  const std::size_t bytes = static_cast<std::size_t>(request.count) * request.datatype->size();
  void* block = state.bsend.reserve(bytes);
  if (block == nullptr) {
    return raise(request.comm, function, MPI_ERR_BUFFER,
                 std::string(state.bsend.attached() ? "the attached buffer has no room left for "
                                                    : "no buffer is attached for ") +
                     std::to_string(bytes) +
                     " bytes + MPI_BSEND_OVERHEAD, expected MPI_Buffer_attach of enough space");
  }
  if (bytes > 0)
    pack(request.buffer, static_cast<std::size_t>(request.count), *request.datatype, block);
  Request& internal = *state.requests.get();
  prepare(internal, RequestKind::send, SendMode::buffered, block, static_cast<int>(bytes), MPI_BYTE,
          request.peer, request.tag, request.comm, owner);
  internal.bsend_block = block;
  // Always a rendezvous from the block (an eager copy would copy twice); the block is released
  // when the receiver has copied it out.
  return deliver(internal, function, 0, &request.queued_key);
}

}  // namespace

int start(Request& request, std::string_view function) {
  World& w = *world();
  request.queued_key = 0;  // a persistent request's last start may have left one
  if (request.kind == RequestKind::recv) {
    w.rank(request.owner).engine.post(request);
    return MPI_SUCCESS;
  }
  if (request.mode == SendMode::buffered && request.bsend_block == nullptr) {
    const int rc = start_buffered(request, function);
    if (rc == MPI_SUCCESS) {
      request.status.MPI_ERROR = MPI_SUCCESS;
      finish(request);
    }
    return rc;
  }
  return deliver(request, function, w.eager_limit(), &request.queued_key);
}

bool send_now(const void* buffer, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm, const Caller& caller) {
  World& w = *world();
  Transport* transport = w.transport();
  if (transport == nullptr || datatype == MPI_DATATYPE_NULL) return false;
  const int dest_world = comm->world_rank(dest);
  if (w.is_local(dest_world) || !datatype->contiguous()) return false;
  const std::size_t bytes = static_cast<std::size_t>(count) * datatype->size();
  if (bytes > Transport::kImmediateBytes) return false;
  const void* data = bytes == 0 ? buffer : static_cast<const char*>(buffer) + datatype->true_lb();
  if (!transport->send_now(dest_world, Envelope{comm->context, caller.comm_rank, tag, bytes},
                           data)) {
    return false;
  }
  caller.state->engine.count_sent();
  return true;
}

void set_proc_null_status(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_PROC_NULL;
  status->MPI_TAG = MPI_ANY_TAG;
  status->weft_cancelled = 0;
  status->weft_bytes = 0;
}

void set_empty_status(MPI_Status* status) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = MPI_ANY_SOURCE;
  status->MPI_TAG = MPI_ANY_TAG;
  status->MPI_ERROR = MPI_SUCCESS;
  status->weft_cancelled = 0;
  status->weft_bytes = 0;
}

void report_status(MPI_Status* out, const MPI_Status& status) {
  if (out == MPI_STATUS_IGNORE) return;
  const int kept = out->MPI_ERROR;
  *out = status;
  out->MPI_ERROR = kept;
}

void complete_proc_null(Request& request) {
  set_proc_null_status(&request.status);
  request.status.MPI_ERROR = MPI_SUCCESS;
  finish(request);
}

int collect(MPI_Request* handle, MPI_Status* status) {
  Request* request = *handle;
  if (request->kind == RequestKind::generalized) collect_generalized(*request);
  const int error = request->status.MPI_ERROR;
  if (status != MPI_STATUS_IGNORE) *status = request->status;
  if (request->persistent) {
    request->active = false;
  } else {
    *handle = MPI_REQUEST_NULL;
    request->collective.reset();
    dispose(request);
  }
  return error;
}

int raise_status_error(MPI_Comm comm, std::string_view function, const MPI_Status& status,
                       int error_class) {
  if (error_class != MPI_ERR_TRUNCATE) return raise(comm, function, error_class, "");
  return raise(comm, function, MPI_ERR_TRUNCATE,
               "the message from rank " + std::to_string(status.MPI_SOURCE) + " with tag " +
                   std::to_string(status.MPI_TAG) +
                   " is larger than the receive buffer: its first " +
                   std::to_string(status.weft_bytes) +
                   " bytes were received, expected a buffer large enough");
}

}  // namespace weft::mpi
