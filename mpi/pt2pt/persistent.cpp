// Persistent requests: MPI_Send_init and friends describe an operation once; MPI_Start runs it.
#include "errhan/error.h"
#include "init/world.h"
#include "pt2pt/p2p.h"
#include "util/profiling.h"
#include "weft/trace.h"

using weft::mpi::Request;
using weft::mpi::RequestKind;
using weft::mpi::SendMode;

namespace {

int make(std::string_view function, RequestKind kind, SendMode mode, const void* buf, int count,
         MPI_Datatype datatype, int peer, int tag, MPI_Comm comm, MPI_Request* handle) {
  weft::mpi::Caller caller;
  const int rc =
      kind == RequestKind::send
          ? weft::mpi::check_send(function, buf, count, datatype, peer, tag, comm, &caller)
          : weft::mpi::check_recv(function, buf, count, datatype, peer, tag, comm, &caller);
  if (rc != MPI_SUCCESS) return rc;
  if (int rc2 = weft::mpi::check_out(comm, function, "request", handle); rc2 != MPI_SUCCESS) {
    return rc2;
  }
  Request* request = caller.state->requests.get();
  weft::mpi::prepare(*request, kind, mode, buf, count, datatype, peer, tag, comm, caller);
  request->persistent = true;
  *handle = request;
  return MPI_SUCCESS;
}

int start_one(std::string_view function, Request* request) {
  if (request == MPI_REQUEST_NULL || !request->persistent || request->active) {
    return weft::mpi::raise(
        request != MPI_REQUEST_NULL ? request->comm : MPI_COMM_WORLD, function, MPI_ERR_REQUEST,
        request == MPI_REQUEST_NULL ? "request = MPI_REQUEST_NULL, expected a persistent request"
        : !request->persistent      ? "the request is not persistent, expected one made by "
                                      "MPI_Send_init, MPI_Bcast_init or their kin"
                                    : "the request is active already, expected it completed by "
                                      "MPI_Wait or MPI_Test before it starts again");
  }
  request->active = true;
  request->status = MPI_Status{};
  request->completion.reset();
  if (request->kind == RequestKind::collective) {
    request->restart(*request);
    return MPI_SUCCESS;
  }
  if (request->peer == MPI_PROC_NULL) {
    weft::mpi::complete_proc_null(*request);
    return MPI_SUCCESS;
  }
  const int rc = weft::mpi::start(*request, function);
  if (rc != MPI_SUCCESS) request->active = false;
  return rc;
}

}  // namespace

extern "C" int PMPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                              MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return make("MPI_Send_init", RequestKind::send, SendMode::standard, buf, count, datatype, dest,
              tag, comm, request);
}
WEFT_MPI_ALIAS(MPI_Send_init);

extern "C" int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                               MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return make("MPI_Ssend_init", RequestKind::send, SendMode::sync, buf, count, datatype, dest, tag,
              comm, request);
}
WEFT_MPI_ALIAS(MPI_Ssend_init);

extern "C" int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                               MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return make("MPI_Rsend_init", RequestKind::send, SendMode::ready, buf, count, datatype, dest, tag,
              comm, request);
}
WEFT_MPI_ALIAS(MPI_Rsend_init);

extern "C" int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                               MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return make("MPI_Bsend_init", RequestKind::send, SendMode::buffered, buf, count, datatype, dest,
              tag, comm, request);
}
WEFT_MPI_ALIAS(MPI_Bsend_init);

extern "C" int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                              MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return make("MPI_Recv_init", RequestKind::recv, SendMode::standard, buf, count, datatype, source,
              tag, comm, request);
}
WEFT_MPI_ALIAS(MPI_Recv_init);

extern "C" int PMPI_Start(MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = weft::mpi::check_initialized("MPI_Start"); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_out(MPI_COMM_WORLD, "MPI_Start", "request", request);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return start_one("MPI_Start", *request);
}
WEFT_MPI_ALIAS(MPI_Start);

extern "C" int PMPI_Startall(int count, MPI_Request array_of_requests[]) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = weft::mpi::check_initialized("MPI_Startall"); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_count(MPI_COMM_WORLD, "MPI_Startall", "count", count);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (count > 0 && array_of_requests == nullptr) {
    return weft::mpi::raise(MPI_COMM_WORLD, "MPI_Startall", MPI_ERR_ARG,
                            "array_of_requests = NULL, expected an array of requests");
  }
  for (int i = 0; i < count; ++i) {
    if (int rc = start_one("MPI_Startall", array_of_requests[i]); rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Startall);
