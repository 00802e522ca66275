// The receive calls, and the send-receive pairs built on them.
#include <vector>

#include "diagnostics/blocked_call.h"
#include "errhan/error.h"
#include "init/world.h"
#include "pt2pt/p2p.h"
#include "util/profiling.h"
#include "weft/trace.h"

using weft::mpi::Request;
using weft::mpi::RequestKind;
using weft::mpi::SendMode;

namespace {

// A blocking receive through a request on this frame's stack (Engine::receive_blocking), its
// status to *received. Out of line, so that the frame of a receive that takes the slot without a
// request holds none (a cache-line-aligned object, whose frame is realigned).
[[gnu::noinline]] void receive_with_request(void* buf, int count, MPI_Datatype datatype, int source,
                                            int tag, MPI_Comm comm, const weft::mpi::Caller& caller,
                                            MPI_Status* received) {
  Request recv;
  weft::mpi::prepare(recv, RequestKind::recv, SendMode::standard, buf, count, datatype, source, tag,
                     comm, caller);
  caller.state->engine.receive_blocking(recv, caller.state->spin);
  *received = recv.status;
}

// Receives (through the engine's slot, or a request on the caller's stack) and waits; `send` (may
// be null) is a send started before and waited for after the receive.
int receive_blocking(std::string_view function, void* buf, int count, MPI_Datatype datatype,
                     int source, int tag, MPI_Comm comm, MPI_Status* status, Request* send,
                     const weft::mpi::Caller& caller) {
  weft::mpi::RankState& state = *caller.state;
  int rc = MPI_SUCCESS;
  if (source == MPI_PROC_NULL) {
    weft::mpi::set_proc_null_status(status);
  } else {
    const weft::mpi::BlockedCall blocked =
        weft::mpi::blocked_in(weft::mpi::BlockedCall::Kind::receive, function, comm, source, tag);
    weft::mpi::BlockedScope scope(blocked);
    // A predefined type needs no request to keep it alive: with nothing queued, the receive goes
    // through the engine's slot without one (filling and destroying it was about a tenth of a
    // small receive from another process).
    MPI_Status received;
    if (datatype == MPI_DATATYPE_NULL || !datatype->predefined() ||
        !state.engine.receive_now(weft::mpi::Pattern{comm->context, source, tag}, buf, count,
                                  datatype, received, state.spin)) {
      receive_with_request(buf, count, datatype, source, tag, comm, caller, &received);
    }
    weft::mpi::report_status(status, received);
    rc = received.MPI_ERROR;
    if (rc != MPI_SUCCESS) rc = weft::mpi::raise_status_error(comm, function, received, rc);
  }
  if (send != nullptr && !send->completion.done()) {
    const weft::mpi::BlockedCall blocked = weft::mpi::blocked_in(
        weft::mpi::BlockedCall::Kind::send, function, comm, send->peer, send->tag);
    weft::mpi::BlockedScope scope(blocked);
    weft::mpi::wait(*send, state.spin);
  }
  return rc;
}

}  // namespace

extern "C" int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                         MPI_Comm comm, MPI_Status* status) {
  // Ends right after the wait's return (trace::End::at_resume).
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1, 0,
                                     weft::trace::End::at_resume);
  weft::mpi::Caller caller;
  if (int rc = weft::mpi::check_recv("MPI_Recv", buf, count, datatype, source, tag, comm, &caller);
      rc != MPI_SUCCESS) {
    return rc;
  }
  return receive_blocking("MPI_Recv", buf, count, datatype, source, tag, comm, status, nullptr,
                          caller);
}
WEFT_MPI_ALIAS(MPI_Recv);

extern "C" int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag,
                          MPI_Comm comm, MPI_Request* handle) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  weft::mpi::Caller caller;
  if (int rc = weft::mpi::check_recv("MPI_Irecv", buf, count, datatype, source, tag, comm, &caller);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = weft::mpi::check_out(comm, "MPI_Irecv", "request", handle); rc != MPI_SUCCESS) {
    return rc;
  }
  Request* request = caller.state->requests.get();
  weft::mpi::prepare(*request, RequestKind::recv, SendMode::standard, buf, count, datatype, source,
                     tag, comm, caller);
  if (source == MPI_PROC_NULL) {
    weft::mpi::complete_proc_null(*request);
  } else {
    caller.state->engine.post(*request);
  }
  *handle = request;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Irecv);

extern "C" int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                             int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                             int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  constexpr std::string_view kFunction = "MPI_Sendrecv";
  weft::mpi::Caller caller;
  if (int rc = weft::mpi::check_send(kFunction, sendbuf, sendcount, sendtype, dest, sendtag, comm,
                                     &caller);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = weft::mpi::check_recv(kFunction, recvbuf, recvcount, recvtype, source, recvtag, comm,
                                     &caller);
      rc != MPI_SUCCESS) {
    return rc;
  }
  Request send;
  Request* started = nullptr;
  if (dest != MPI_PROC_NULL) {
    weft::mpi::prepare(send, RequestKind::send, SendMode::standard, sendbuf, sendcount, sendtype,
                       dest, sendtag, comm, caller);
    weft::mpi::start(send, kFunction);
    started = &send;
  }
  return receive_blocking(kFunction, recvbuf, recvcount, recvtype, source, recvtag, comm, status,
                          started, caller);
}
WEFT_MPI_ALIAS(MPI_Sendrecv);

// The outgoing data is packed aside first, so the receive may overwrite the buffer.
extern "C" int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest,
                                     int sendtag, int source, int recvtag, MPI_Comm comm,
                                     MPI_Status* status) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  constexpr std::string_view kFunction = "MPI_Sendrecv_replace";
  weft::mpi::Caller caller;
  if (int rc = weft::mpi::check_send(kFunction, buf, count, datatype, dest, sendtag, comm, &caller);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc =
          weft::mpi::check_recv(kFunction, buf, count, datatype, source, recvtag, comm, &caller);
      rc != MPI_SUCCESS) {
    return rc;
  }
  Request send;
  Request* started = nullptr;
  std::vector<unsigned char> packed;
  if (dest != MPI_PROC_NULL) {
    packed.resize(static_cast<std::size_t>(count) * datatype->size());
    if (!packed.empty())
      weft::mpi::pack(buf, static_cast<std::size_t>(count), *datatype, packed.data());
    weft::mpi::prepare(send, RequestKind::send, SendMode::standard, packed.data(),
                       static_cast<int>(packed.size()), MPI_BYTE, dest, sendtag, comm, caller);
    weft::mpi::start(send, kFunction);
    started = &send;
  }
  return receive_blocking(kFunction, buf, count, datatype, source, recvtag, comm, status, started,
                          caller);
}
WEFT_MPI_ALIAS(MPI_Sendrecv_replace);
