// MPI_Wait, MPI_Test and their any / some / all forms.
#include <string>
#include <vector>

#include "coll/collective_spanning.h"
#include "coll/nbc.h"
#include "diagnostics/blocked_call.h"
#include "errhan/error.h"
#include "init/world.h"
#include "pt2pt/p2p.h"
#include "util/profiling.h"
#include "weft/this_thread.h"
#include "weft/trace.h"

using weft::mpi::inactive;
using weft::mpi::Request;

namespace {

int check_array(std::string_view function, int count, const MPI_Request* requests) {
  if (int rc = weft::mpi::check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_count(MPI_COMM_WORLD, function, "count", count);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (count > 0 && requests == nullptr) {
    return weft::mpi::raise(MPI_COMM_WORLD, function, MPI_ERR_ARG,
                            "array_of_requests = NULL with count = " + std::to_string(count) +
                                ", expected an array of requests");
  }
  return MPI_SUCCESS;
}

int check_handle(std::string_view function, const MPI_Request* handle) {
  if (int rc = weft::mpi::check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (handle != nullptr) return MPI_SUCCESS;
  return weft::mpi::raise(MPI_COMM_WORLD, function, MPI_ERR_REQUEST,
                          "request = NULL, expected the address of a request handle");
}

bool done(const Request* request) {
  return !inactive(request) && request->completion.done();
}

// Why a send to another process failed, when UCX failed it; else empty.
std::string lost_send(const weft_mpi_request& request) {
  if (request.transport_failure.empty()) return {};
  weft::mpi::World& w = *weft::mpi::world();
  const int dest = request.comm->world_rank(request.peer);
  return "the message to rank " + std::to_string(request.peer) + " (world rank " +
         std::to_string(dest) + ", process " + std::to_string(w.process_of(dest)) +
         ") was lost: UCX: " + std::string(request.transport_failure);
}

// Collects one completed request and raises its error, if any, on its communicator.
int finish_one(std::string_view function, MPI_Request* handle, MPI_Status* status) {
  const MPI_Comm comm = (*handle)->comm;
  // A collective's reason lives in its instance, which the collect would release. Moved, not
  // copied: the count lives on a line every member touches, and the request (disposed of, or
  // persistent and inactive) needs it no more.
  std::shared_ptr<weft::mpi::nbc::Instance> collective = std::move((*handle)->collective);
  const std::string_view spanning_call = (*handle)->spanning_call;
  const std::string lost = lost_send(**handle);
  MPI_Status local;
  const int rc = weft::mpi::collect(handle, &local);
  weft::mpi::report_status(status, local);
  if (rc == MPI_SUCCESS) return rc;
  if (collective != nullptr) {
    return weft::mpi::raise(
        comm, function, rc,
        std::string(collective->function()) + ": " + collective->failure(comm->my_rank()));
  }
  if (!lost.empty()) return weft::mpi::raise(comm, function, rc, lost);
  if (!spanning_call.empty()) {
    return weft::mpi::raise(
        comm, function, rc,
        std::string(spanning_call) + ": " + std::string(weft::mpi::spanning::failure_text(rc)));
  }
  return weft::mpi::raise_status_error(comm, function, local, rc);
}

// Collects `n` completed requests, those of `indices` (all of them when null), into
// statuses[0..n), as the some / all forms report them: on any failure every status's MPI_ERROR
// is meaningful and the call returns MPI_ERR_IN_STATUS (raised on the first failed request's
// communicator). Without one each MPI_ERROR is MPI_SUCCESS: MPI-4.1 3.2.5 requires the field only
// with MPI_ERR_IN_STATUS, but MPICH writes it always and programs (its part/multipart) read it.
int finish_many(std::string_view function, MPI_Request* requests, int n, const int* indices,
                MPI_Status* statuses) {
  MPI_Comm failed_comm = MPI_COMM_NULL;
  std::string failures;
  for (int k = 0; k < n; ++k) {
    const int i = indices != nullptr ? indices[k] : k;
    MPI_Request* handle = &requests[i];
    MPI_Status local;
    if (inactive(*handle)) {
      weft::mpi::set_empty_status(&local);
    } else {
      const MPI_Comm comm = (*handle)->comm;
      const std::string lost = lost_send(**handle);
      if (weft::mpi::collect(handle, &local) != MPI_SUCCESS) {
        if (failed_comm == MPI_COMM_NULL) failed_comm = comm;
        failures += (failures.empty() ? "request " : ", request ") + std::to_string(i) +
                    " failed with " + std::string(weft::mpi::error_class_name(local.MPI_ERROR));
        if (!lost.empty()) failures += " (" + lost + ")";
      }
    }
    if (statuses != MPI_STATUSES_IGNORE) statuses[k] = local;
  }
  if (failed_comm == MPI_COMM_NULL) return MPI_SUCCESS;
  return weft::mpi::raise(failed_comm, function, MPI_ERR_IN_STATUS,
                          failures + " (see the statuses' MPI_ERROR)");
}

bool all_inactive(int count, const MPI_Request* requests) {
  for (int i = 0; i < count; ++i) {
    if (!inactive(requests[i])) return false;
  }
  return true;
}

// Returns once one of the active requests is complete: spins over them, then parks on all of
// them at once.
void wait_any(int count, const MPI_Request* requests) {
  auto any_done = [&] {
    for (int i = 0; i < count; ++i) {
      if (done(requests[i])) return true;
    }
    return false;
  };
  if (weft::mpi::caller_state().spin.spin_until(any_done)) return;
  weft::mpi::Parker parker;
  std::vector<int> armed;
  bool already_done = false;
  for (int i = 0; i < count && !already_done; ++i) {
    if (inactive(requests[i])) continue;
    if (requests[i]->completion.arm(&parker)) {
      armed.push_back(i);
    } else {
      already_done = true;
    }
  }
  if (!already_done) parker.wait_beyond(0);
  std::uint32_t notifications = 0;
  for (int i : armed) {
    if (!requests[i]->completion.disarm(&parker)) ++notifications;
  }
  parker.drain(notifications);
}

std::vector<int> done_indices(int count, const MPI_Request* requests) {
  std::vector<int> indices;
  for (int i = 0; i < count; ++i) {
    if (done(requests[i])) indices.push_back(i);
  }
  return indices;
}

}  // namespace

extern "C" int PMPI_Wait(MPI_Request* request, MPI_Status* status) {
  // Ends right after the wait's return (trace::End::at_resume).
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1, 0,
                                     weft::trace::End::at_resume);
  if (int rc = check_handle("MPI_Wait", request); rc != MPI_SUCCESS) return rc;
  if (inactive(*request)) {
    weft::mpi::set_empty_status(status);
    return MPI_SUCCESS;
  }
  if (!(*request)->completion.done()) {
    const weft::mpi::BlockedCall blocked = weft::mpi::blocked_on_requests("MPI_Wait", request, 1);
    weft::mpi::BlockedScope scope(blocked);
    weft::mpi::wait(**request, weft::mpi::caller_state().spin);
  }
  return finish_one("MPI_Wait", request, status);
}
WEFT_MPI_ALIAS(MPI_Wait);

extern "C" int PMPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_handle("MPI_Test", request); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_out(MPI_COMM_WORLD, "MPI_Test", "flag", flag); rc != MPI_SUCCESS) {
    return rc;
  }
  if (inactive(*request)) {
    *flag = 1;
    weft::mpi::set_empty_status(status);
    return MPI_SUCCESS;
  }
  *flag = (*request)->completion.done();
  if (!*flag) {
    weft::mpi::after_failed_test();
    return MPI_SUCCESS;
  }
  return finish_one("MPI_Test", request, status);
}
WEFT_MPI_ALIAS(MPI_Test);

extern "C" int PMPI_Waitall(int count, MPI_Request array_of_requests[],
                            MPI_Status array_of_statuses[]) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_array("MPI_Waitall", count, array_of_requests); rc != MPI_SUCCESS) return rc;
  weft::mpi::RankState& state = weft::mpi::caller_state();
  const weft::mpi::BlockedCall blocked =
      weft::mpi::blocked_on_requests("MPI_Waitall", array_of_requests, count);
  weft::mpi::BlockedScope scope(blocked);
  for (int i = 0; i < count; ++i) {
    if (!inactive(array_of_requests[i])) {
      weft::mpi::wait(*array_of_requests[i], state.spin);
    }
  }
  return finish_many("MPI_Waitall", array_of_requests, count, nullptr, array_of_statuses);
}
WEFT_MPI_ALIAS(MPI_Waitall);

extern "C" int PMPI_Testall(int count, MPI_Request array_of_requests[], int* flag,
                            MPI_Status array_of_statuses[]) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_array("MPI_Testall", count, array_of_requests); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_out(MPI_COMM_WORLD, "MPI_Testall", "flag", flag);
      rc != MPI_SUCCESS) {
    return rc;
  }
  for (int i = 0; i < count; ++i) {
    if (!inactive(array_of_requests[i]) && !array_of_requests[i]->completion.done()) {
      *flag = 0;
      weft::mpi::after_failed_test();
      return MPI_SUCCESS;
    }
  }
  *flag = 1;
  return finish_many("MPI_Testall", array_of_requests, count, nullptr, array_of_statuses);
}
WEFT_MPI_ALIAS(MPI_Testall);

extern "C" int PMPI_Waitany(int count, MPI_Request array_of_requests[], int* index,
                            MPI_Status* status) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_array("MPI_Waitany", count, array_of_requests); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_out(MPI_COMM_WORLD, "MPI_Waitany", "index", index);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (all_inactive(count, array_of_requests)) {
    *index = MPI_UNDEFINED;
    weft::mpi::set_empty_status(status);
    return MPI_SUCCESS;
  }
  for (;;) {
    for (int i = 0; i < count; ++i) {
      if (done(array_of_requests[i])) {
        *index = i;
        return finish_one("MPI_Waitany", &array_of_requests[i], status);
      }
    }
    const weft::mpi::BlockedCall blocked =
        weft::mpi::blocked_on_requests("MPI_Waitany", array_of_requests, count);
    weft::mpi::BlockedScope scope(blocked);
    wait_any(count, array_of_requests);
  }
}
WEFT_MPI_ALIAS(MPI_Waitany);

extern "C" int PMPI_Testany(int count, MPI_Request array_of_requests[], int* index, int* flag,
                            MPI_Status* status) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  if (int rc = check_array("MPI_Testany", count, array_of_requests); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_out(MPI_COMM_WORLD, "MPI_Testany", "index", index);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (int rc = weft::mpi::check_out(MPI_COMM_WORLD, "MPI_Testany", "flag", flag);
      rc != MPI_SUCCESS) {
    return rc;
  }
  *index = MPI_UNDEFINED;
  if (all_inactive(count, array_of_requests)) {
    *flag = 1;
    weft::mpi::set_empty_status(status);
    return MPI_SUCCESS;
  }
  for (int i = 0; i < count; ++i) {
    if (done(array_of_requests[i])) {
      *flag = 1;
      *index = i;
      return finish_one("MPI_Testany", &array_of_requests[i], status);
    }
  }
  *flag = 0;
  weft::mpi::after_failed_test();
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Testany);

namespace {

int some(std::string_view function, bool block, int incount, MPI_Request* requests, int* outcount,
         int* indices, MPI_Status* statuses) {
  if (int rc = check_array(function, incount, requests); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_out(MPI_COMM_WORLD, function, "outcount", outcount);
      rc != MPI_SUCCESS) {
    return rc;
  }
  if (all_inactive(incount, requests)) {
    *outcount = MPI_UNDEFINED;
    return MPI_SUCCESS;
  }
  if (int rc = weft::mpi::check_out(MPI_COMM_WORLD, function, "array_of_indices", indices);
      rc != MPI_SUCCESS) {
    return rc;
  }
  std::vector<int> completed = done_indices(incount, requests);
  while (block && completed.empty()) {
    const weft::mpi::BlockedCall blocked =
        weft::mpi::blocked_on_requests(function, requests, incount);
    weft::mpi::BlockedScope scope(blocked);
    wait_any(incount, requests);
    completed = done_indices(incount, requests);
  }
  *outcount = static_cast<int>(completed.size());
  if (completed.empty()) {
    weft::mpi::after_failed_test();
    return MPI_SUCCESS;
  }
  for (std::size_t k = 0; k < completed.size(); ++k) indices[k] = completed[k];
  return finish_many(function, requests, *outcount, indices, statuses);
}

}  // namespace

extern "C" int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int* outcount,
                             int array_of_indices[], MPI_Status array_of_statuses[]) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return some("MPI_Waitsome", true, incount, array_of_requests, outcount, array_of_indices,
              array_of_statuses);
}
WEFT_MPI_ALIAS(MPI_Waitsome);

extern "C" int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int* outcount,
                             int array_of_indices[], MPI_Status array_of_statuses[]) {
  const weft::trace::Span trace_span(weft::trace::Category::mpi, __func__ + 1);
  return some("MPI_Testsome", false, incount, array_of_requests, outcount, array_of_indices,
              array_of_statuses);
}
WEFT_MPI_ALIAS(MPI_Testsome);
