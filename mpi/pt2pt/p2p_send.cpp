// The send calls, in their four modes, blocking and not, and the Bsend buffer.
#include "diagnostics/blocked_call.h"
#include "errhan/error.h"
#include "init/world.h"
#include "pt2pt/p2p.h"
#include "util/profiling.h"
#include "weft/trace.h"

using weft::mpi::caller_state;
using weft::mpi::Request;
using weft::mpi::SendMode;

namespace {

// A blocking send through a request on this frame's stack. Out of line, so that the frame of a
// send that send_now() takes holds no request (a cache-line-aligned object, whose frame is
// realigned).
[[gnu::noinline]] int send_with_request(std::string_view function, SendMode mode, const void* buf,
                                        int count, MPI_Datatype datatype, int dest, int tag,
                                        MPI_Comm comm, const weft::mpi::Caller& caller) {
  Request request;
  weft::mpi::prepare(request, weft::mpi::RequestKind::send, mode, buf, count, datatype, dest, tag,
                     comm, caller);
  if (int rc = weft::mpi::start(request, function); rc != MPI_SUCCESS) return rc;
  if (request.completion.done()) return MPI_SUCCESS;
  const weft::mpi::BlockedCall blocked =
      weft::mpi::blocked_in(weft::mpi::BlockedCall::Kind::send, function, comm, dest, tag);
  weft::mpi::BlockedScope scope(blocked);
  weft::mpi::wait(request, caller.state->spin);
  return MPI_SUCCESS;
}

int blocking_send(std::string_view function, SendMode mode, const void* buf, int count,
                  MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  weft::mpi::Caller caller;
  if (int rc = weft::mpi::check_send(function, buf, count, datatype, dest, tag, comm, &caller);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (dest == MPI_PROC_NULL) return MPI_SUCCESS;
  if ((mode == SendMode::standard || mode == SendMode::ready) &&
      weft::mpi::send_now(buf, count, datatype, dest, tag, comm, caller)) {
    return MPI_SUCCESS;
  }
  return send_with_request(function, mode, buf, count, datatype, dest, tag, comm, caller);
}

int nonblocking_send(std::string_view function, SendMode mode, const void* buf, int count,
                     MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request* handle) {
  weft::mpi::Caller caller;
  if (int rc = weft::mpi::check_send(function, buf, count, datatype, dest, tag, comm, &caller);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = weft::mpi::check_out(comm, function, "request", handle); rc != MPI_SUCCESS) {
    return rc;
  }
  Request* request = caller.state->requests.get();
  weft::mpi::prepare(*request, weft::mpi::RequestKind::send, mode, buf, count, datatype, dest, tag,
                     comm, caller);
  if (dest == MPI_PROC_NULL) {
    weft::mpi::complete_proc_null(*request);
  } else if (int rc = weft::mpi::start(*request, function); rc != MPI_SUCCESS) {
    weft::mpi::dispose(request);
    return rc;
  }
  *handle = request;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                         MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return blocking_send("MPI_Send", SendMode::standard, buf, count, datatype, dest, tag, comm);
}
WEFT_MPI_ALIAS(MPI_Send);

extern "C" int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return blocking_send("MPI_Ssend", SendMode::sync, buf, count, datatype, dest, tag, comm);
}
WEFT_MPI_ALIAS(MPI_Ssend);

// Ready mode is a promise the receive is posted; a standard send honours it as well.
extern "C" int PMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return blocking_send("MPI_Rsend", SendMode::ready, buf, count, datatype, dest, tag, comm);
}
WEFT_MPI_ALIAS(MPI_Rsend);

extern "C" int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return blocking_send("MPI_Bsend", SendMode::buffered, buf, count, datatype, dest, tag, comm);
}
WEFT_MPI_ALIAS(MPI_Bsend);

extern "C" int PMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                          MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return nonblocking_send("MPI_Isend", SendMode::standard, buf, count, datatype, dest, tag, comm,
                          request);
}
WEFT_MPI_ALIAS(MPI_Isend);

extern "C" int PMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return nonblocking_send("MPI_Issend", SendMode::sync, buf, count, datatype, dest, tag, comm,
                          request);
}
WEFT_MPI_ALIAS(MPI_Issend);

extern "C" int PMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return nonblocking_send("MPI_Irsend", SendMode::ready, buf, count, datatype, dest, tag, comm,
                          request);
}
WEFT_MPI_ALIAS(MPI_Irsend);

extern "C" int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                           MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return nonblocking_send("MPI_Ibsend", SendMode::buffered, buf, count, datatype, dest, tag, comm,
                          request);
}
WEFT_MPI_ALIAS(MPI_Ibsend);

extern "C" int PMPI_Buffer_attach(void* buffer, int size) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  constexpr std::string_view kFunction = "MPI_Buffer_attach";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (size < 0) {
    return weft::mpi::raise(MPI_COMM_WORLD, kFunction, MPI_ERR_ARG,
                            "size = " + std::to_string(size) + ", expected >= 0");
  }
  if (buffer == nullptr && size > 0) {
    return weft::mpi::raise(
        MPI_COMM_WORLD, kFunction, MPI_ERR_BUFFER,
        "buffer = NULL with size = " + std::to_string(size) + ", expected a buffer");
  }
  if (!caller_state().bsend.attach(buffer, static_cast<std::size_t>(size))) {
    return weft::mpi::raise(MPI_COMM_WORLD, kFunction, MPI_ERR_BUFFER,
                            "a buffer is already attached, expected MPI_Buffer_detach first");
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Buffer_attach);

// Waits until the buffered messages have been received (MPI-3.1 3.6.1).
extern "C" int PMPI_Buffer_detach(void* buffer_addr, int* size) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  constexpr std::string_view kFunction = "MPI_Buffer_detach";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_out(MPI_COMM_WORLD, kFunction, "buffer_addr", buffer_addr);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = weft::mpi::check_out(MPI_COMM_WORLD, kFunction, "size", size); rc != MPI_SUCCESS) {
    return rc;
  }
  const auto [buffer, bytes] = caller_state().bsend.detach();
  *static_cast<void**>(buffer_addr) = buffer;
  *size = static_cast<int>(bytes);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Buffer_detach);
