// Probing for messages, and the matched probes (MPI_Mprobe) whose message is then received by
// MPI_Mrecv / MPI_Imrecv and by no other receive.
#include "errhan/error.h"
#include "init/world.h"
#include "pt2pt/p2p.h"
#include "util/profiling.h"
#include "weft/this_thread.h"
#include "weft/trace.h"

weft_mpi_message weft_mpi_message_no_proc;

using weft::mpi::Envelope;
using weft::mpi::Pattern;
using weft::mpi::Request;

namespace {

int check_probe(std::string_view function, int source, int tag, MPI_Comm comm,
                weft::mpi::Caller* caller) {
  if (int rc = weft::mpi::check_caller(function, comm, caller); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_rank(comm, function, "source", source, true); rc != MPI_SUCCESS) {
    return rc;
  }
  return weft::mpi::check_tag(comm, function, tag, true);
}

void set_probed_status(MPI_Status* status, const Envelope& envelope) {
  if (status == MPI_STATUS_IGNORE) return;
  status->MPI_SOURCE = envelope.source;
  status->MPI_TAG = envelope.tag;
  status->weft_cancelled = 0;
  status->weft_bytes = static_cast<MPI_Count>(envelope.bytes);
}

// Probe (take = false) or matched probe (take = true), blocking or not. Returns the message (or
// its mere presence without take), nullptr when a nonblocking probe found none.
weft_mpi_message* probe(const weft::mpi::Caller& caller, int source, int tag, MPI_Comm comm,
                        bool take, bool block, MPI_Status* status) {
  weft::mpi::RankState& state = *caller.state;
  const Pattern pattern{comm->context, source, tag};
  Envelope found;
  weft_mpi_message* message = block ? state.engine.wait_for(pattern, take, &found, state.spin)
                                    : state.engine.find(pattern, take, &found);
  if (message == nullptr) {
    weft::mpi::after_failed_test();
    return nullptr;
  }
  set_probed_status(status, found);
  if (take) message->comm = comm;
  return message;
}

int check_matched(std::string_view function, void* buf, int count, MPI_Datatype datatype,
                  const MPI_Message* message) {
  if (int rc = weft::mpi::check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (message == nullptr || *message == MPI_MESSAGE_NULL) {
    return weft::mpi::raise(
        MPI_COMM_WORLD, function, MPI_ERR_REQUEST,
        std::string(message == nullptr ? "message = NULL" : "message = MPI_MESSAGE_NULL") +
            ", expected a message from MPI_Mprobe or MPI_Improbe");
  }
  const MPI_Comm comm = *message == MPI_MESSAGE_NO_PROC ? MPI_COMM_WORLD : (*message)->comm;
  if (int rc = weft::mpi::check_count(comm, function, "count", count); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_datatype(comm, function, "datatype", datatype); rc != MPI_SUCCESS) {
    return rc;
  }
  return weft::mpi::check_buffer(comm, function, "buf", buf, count, datatype);
}

// Receives a matched message into `request` (completed on return: the data is there already).
void receive_matched(Request& request, void* buf, int count, MPI_Datatype datatype,
                     MPI_Message* message) {
  weft_mpi_message* m = *message;
  *message = MPI_MESSAGE_NULL;
  weft::mpi::prepare(request, weft::mpi::RequestKind::recv, weft::mpi::SendMode::standard, buf,
                     count, datatype, m == MPI_MESSAGE_NO_PROC ? MPI_PROC_NULL : m->envelope.source,
                     m == MPI_MESSAGE_NO_PROC ? MPI_ANY_TAG : m->envelope.tag,
                     m == MPI_MESSAGE_NO_PROC ? MPI_COMM_WORLD : m->comm,
                     weft::mpi::Caller{weft::mpi::caller_world_rank()});
  if (m == MPI_MESSAGE_NO_PROC) {
    weft::mpi::complete_proc_null(request);
  } else {
    weft::mpi::Engine::receive(request, *m);
  }
}

}  // namespace

extern "C" int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  weft::mpi::Caller caller;
  if (int rc = check_probe("MPI_Probe", source, tag, comm, &caller); rc != MPI_SUCCESS) return rc;
  if (source == MPI_PROC_NULL) {
    weft::mpi::set_proc_null_status(status);
    return MPI_SUCCESS;
  }
  probe(caller, source, tag, comm, false, true, status);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Probe);

extern "C" int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  weft::mpi::Caller caller;
  if (int rc = check_probe("MPI_Iprobe", source, tag, comm, &caller); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_out(comm, "MPI_Iprobe", "flag", flag); rc != MPI_SUCCESS) {
    return rc;
  }
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    weft::mpi::set_proc_null_status(status);
    return MPI_SUCCESS;
  }
  *flag = probe(caller, source, tag, comm, false, false, status) != nullptr;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Iprobe);

extern "C" int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message,
                           MPI_Status* status) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  weft::mpi::Caller caller;
  if (int rc = check_probe("MPI_Mprobe", source, tag, comm, &caller); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_out(comm, "MPI_Mprobe", "message", message); rc != MPI_SUCCESS) {
    return rc;
  }
  if (source == MPI_PROC_NULL) {
    *message = MPI_MESSAGE_NO_PROC;
    weft::mpi::set_proc_null_status(status);
    return MPI_SUCCESS;
  }
  *message = probe(caller, source, tag, comm, true, true, status);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Mprobe);

extern "C" int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                            MPI_Status* status) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  weft::mpi::Caller caller;
  if (int rc = check_probe("MPI_Improbe", source, tag, comm, &caller); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_out(comm, "MPI_Improbe", "flag", flag); rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = weft::mpi::check_out(comm, "MPI_Improbe", "message", message); rc != MPI_SUCCESS) {
    return rc;
  }
  if (source == MPI_PROC_NULL) {
    *flag = 1;
    *message = MPI_MESSAGE_NO_PROC;
    weft::mpi::set_proc_null_status(status);
    return MPI_SUCCESS;
  }
  weft_mpi_message* found = probe(caller, source, tag, comm, true, false, status);
  *flag = found != nullptr;
  if (found != nullptr) *message = found;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Improbe);

extern "C" int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                          MPI_Status* status) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_matched("MPI_Mrecv", buf, count, datatype, message); rc != MPI_SUCCESS) {
    return rc;
  }
  Request request;
  receive_matched(request, buf, count, datatype, message);
  weft::mpi::report_status(status, request.status);
  if (request.status.MPI_ERROR == MPI_SUCCESS) return MPI_SUCCESS;
  return weft::mpi::raise_status_error(request.comm, "MPI_Mrecv", request.status,
                                       request.status.MPI_ERROR);
}
WEFT_MPI_ALIAS(MPI_Mrecv);

extern "C" int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                           MPI_Request* request) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_matched("MPI_Imrecv", buf, count, datatype, message); rc != MPI_SUCCESS) {
    return rc;
  }
  const MPI_Comm comm = *message == MPI_MESSAGE_NO_PROC ? MPI_COMM_WORLD : (*message)->comm;
  if (int rc = weft::mpi::check_out(comm, "MPI_Imrecv", "request", request); rc != MPI_SUCCESS) {
    return rc;
  }
  Request* r = weft::mpi::caller_state().requests.get();
  receive_matched(*r, buf, count, datatype, message);
  *request = r;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Imrecv);
