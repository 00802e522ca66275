// MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4.0 3.10): a send and a receive started together,
// completed by one request. Both start during the call, so the send is ordered with the rank's
// other sends as a plain MPI_Isend would be. A thread of the rank (request/helper_thread.h) waits
// for the two and completes the request the user holds with the receive's status; it parks while
// they are in flight, so the caller's core runs other threads meanwhile.
#include <memory>
#include <string_view>
#include <vector>

#include "coll/nbc.h"
#include "datatype/datatype.h"
#include "init/world.h"
#include "pt2pt/p2p.h"
#include "request/helper_thread.h"
#include "util/profiling.h"
#include "weft/trace.h"

namespace weft::mpi {
namespace {

// The outgoing data of MPI_Isendrecv_replace, packed aside so the receive may overwrite the
// buffer; it lives until both operations are done.
using Packed = std::shared_ptr<std::vector<unsigned char>>;

Request* start_send(const Caller& caller, std::string_view function, const void* buffer, int count,
                    MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  Request* send = caller.state->requests.get();
  prepare(*send, RequestKind::send, SendMode::standard, buffer, count, datatype, dest, tag, comm,
          caller);
  if (dest == MPI_PROC_NULL) {
    complete_proc_null(*send);
  } else {
    start(*send, function);
  }
  return send;
}

Request* start_recv(const Caller& caller, void* buffer, int count, MPI_Datatype datatype,
                    int source, int tag, MPI_Comm comm) {
  Request* recv = caller.state->requests.get();
  prepare(*recv, RequestKind::recv, SendMode::standard, buffer, count, datatype, source, tag, comm,
          caller);
  if (source == MPI_PROC_NULL) {
    complete_proc_null(*recv);
  } else {
    caller.state->engine.post(*recv);
  }
  return recv;
}

// Completes `result` when `send` and `recv` are done, with the receive's status (its error, or
// the send's when only that failed).
void complete_when_done(Request* result, Request* send, Request* recv, Packed packed) {
  spawn(helper_thread(result->owner, false), [result, send, recv, packed = std::move(packed)] {
    RankState& state = world()->rank(result->owner);
    wait(*recv, state.spin);
    wait(*send, state.spin);
    MPI_Request send_handle = send;
    MPI_Request recv_handle = recv;
    MPI_Status status;
    const int recv_error = collect(&recv_handle, &status);
    const int send_error = collect(&send_handle, MPI_STATUS_IGNORE);
    status.MPI_ERROR = recv_error != MPI_SUCCESS ? recv_error : send_error;
    result->status = status;
    finish(*result);
  }).detach();
}

int isendrecv(std::string_view function, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
              int dest, int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype,
              int source, int recvtag, MPI_Comm comm, MPI_Request* request, bool replace) {
  Caller caller;
  if (int rc = check_send(function, sendbuf, sendcount, sendtype, dest, sendtag, comm, &caller);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_recv(function, recvbuf, recvcount, recvtype, source, recvtag, comm, &caller);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = check_out(comm, function, "request", request); rc != MPI_SUCCESS) return rc;
  Packed packed;
  if (replace && dest != MPI_PROC_NULL) {
    packed = std::make_shared<std::vector<unsigned char>>(static_cast<std::size_t>(sendcount) *
                                                          sendtype->size());
    if (!packed->empty())
      pack(sendbuf, static_cast<std::size_t>(sendcount), *sendtype, packed->data());
    sendbuf = packed->data();
    sendcount = static_cast<int>(packed->size());
    sendtype = MPI_BYTE;
  }
  Request* recv = start_recv(caller, recvbuf, recvcount, recvtype, source, recvtag, comm);
  Request* send = start_send(caller, function, sendbuf, sendcount, sendtype, dest, sendtag, comm);
  Request* result = nbc::new_request(comm);
  complete_when_done(result, send, recv, std::move(packed));
  *request = result;
  return MPI_SUCCESS;
}

}  // namespace
}  // namespace weft::mpi

extern "C" int PMPI_Isendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                              int sendtag, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                              int source, int recvtag, MPI_Comm comm, MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return weft::mpi::isendrecv("MPI_Isendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                              recvcount, recvtype, source, recvtag, comm, request, false);
}
WEFT_MPI_ALIAS(MPI_Isendrecv);

extern "C" int PMPI_Isendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest,
                                      int sendtag, int source, int recvtag, MPI_Comm comm,
                                      MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return weft::mpi::isendrecv("MPI_Isendrecv_replace", buf, count, datatype, dest, sendtag, buf,
                              count, datatype, source, recvtag, comm, request, true);
}
WEFT_MPI_ALIAS(MPI_Isendrecv_replace);
