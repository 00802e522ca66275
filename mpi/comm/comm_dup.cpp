// MPI_Comm_dup_with_info, MPI_Comm_idup, MPI_Comm_idup_with_info, MPI_Comm_set_info and
// MPI_Comm_get_info.
//
// A nonblocking duplication takes its collective call number at once and runs the duplication in
// a thread of the calling rank, which writes *newcomm and completes the request: the members meet
// as for MPI_Comm_dup, in the order of their collective calls, while the caller goes on.
//
// Hints: weft keeps those of MPI-4.1 7.4.4 it knows (the four mpi_assert_* assertions, "true" or
// "false") for each member and returns them from MPI_Comm_get_info; it ignores the others, as
// MPI-4.1 allows and MPICH does. weft's matching does not depend on them: each is a promise the
// program makes that weft may take up, never a change of meaning.
#include "comm/comm_dup.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "coll/nbc.h"
#include "errhan/error.h"
#include "info/info.h"
#include "init/world.h"
#include "request/helper_thread.h"
#include "request/request.h"
#include "util/profiling.h"
#include "weft/this_thread.h"
#include "weft/thread.h"

namespace {

using weft::mpi::Hints;
using weft::mpi::raise;

constexpr std::array<std::string_view, 4> kAssertions = {
    "mpi_assert_no_any_tag", "mpi_assert_no_any_source", "mpi_assert_exact_length",
    "mpi_assert_allow_overtaking"};

// The hints of `info` weft knows, in its order; MPI_INFO_NULL gives none.
Hints known_hints(MPI_Info info) {
  Hints hints;
  if (info == MPI_INFO_NULL) return hints;
  for (const auto& [key, value] : info->entries) {
    const bool known = std::find(kAssertions.begin(), kAssertions.end(), key) != kAssertions.end();
    if (known && (value == "true" || value == "false")) hints.emplace_back(key, value);
  }
  return hints;
}

int check_call(MPI_Comm comm, std::string_view function) {
  if (int rc = weft::mpi::check_initialized(function); rc != MPI_SUCCESS) return rc;
  return weft::mpi::check_comm(comm, function);
}

int check_info(MPI_Comm comm, std::string_view function, MPI_Info info, bool allow_null) {
  if (info != MPI_INFO_NULL || allow_null) return MPI_SUCCESS;
  return raise(comm, function, MPI_ERR_INFO, "info = MPI_INFO_NULL, expected an info object");
}

int check_out(MPI_Comm comm, std::string_view function, std::string_view argument,
              const void* pointer) {
  if (pointer != nullptr) return MPI_SUCCESS;
  return raise(comm, function, MPI_ERR_ARG,
               std::string(argument) + " = NULL, expected where to store the result");
}

// MPI_Comm_idup(_with_info): the duplication runs in a thread of the caller's rank.
int idup(MPI_Comm comm, std::string_view function, std::shared_ptr<const Hints> hints,
         MPI_Comm* newcomm, MPI_Request* request) {
  if (int rc = check_out(comm, function, "newcomm", newcomm); rc != MPI_SUCCESS) return rc;
  if (int rc = check_out(comm, function, "request", request); rc != MPI_SUCCESS) return rc;
  const weft::mpi::CallNumber number = weft::mpi::next_duplication(comm);
  weft::mpi::Request* r = weft::mpi::nbc::new_request(comm);
  r->spanning_call = function;
  weft::spawn(weft::mpi::helper_thread(r->owner, true), [comm, function, hints, newcomm, number,
                                                         r] {
    r->status.MPI_ERROR = weft::mpi::duplicate(comm, function, number, hints.get(), newcomm);
    weft::mpi::finish(*r);
  }).detach();
  *request = r;
  return MPI_SUCCESS;
}

}  // namespace

extern "C" int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  constexpr std::string_view kFunction = "MPI_Comm_dup_with_info";
  if (int rc = check_call(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_info(comm, kFunction, info, true); rc != MPI_SUCCESS) return rc;
  const Hints hints = known_hints(info);
  return weft::mpi::duplicate(comm, kFunction, weft::mpi::next_duplication(comm), &hints, newcomm);
}
WEFT_MPI_ALIAS(MPI_Comm_dup_with_info);

extern "C" int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request) {
  constexpr std::string_view kFunction = "MPI_Comm_idup";
  if (int rc = check_call(comm, kFunction); rc != MPI_SUCCESS) return rc;
  return idup(comm, kFunction, nullptr, newcomm, request);
}
WEFT_MPI_ALIAS(MPI_Comm_idup);

extern "C" int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm,
                                        MPI_Request* request) {
  constexpr std::string_view kFunction = "MPI_Comm_idup_with_info";
  if (int rc = check_call(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_info(comm, kFunction, info, true); rc != MPI_SUCCESS) return rc;
  return idup(comm, kFunction, std::make_shared<const Hints>(known_hints(info)), newcomm, request);
}
WEFT_MPI_ALIAS(MPI_Comm_idup_with_info);

// The hints given replace those of the same keys; the others stay (MPI-4.1 7.4.4).
extern "C" int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info) {
  constexpr std::string_view kFunction = "MPI_Comm_set_info";
  if (int rc = check_call(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_info(comm, kFunction, info, true); rc != MPI_SUCCESS) return rc;
  Hints& hints = comm->local_of_caller().hints;
  for (auto& [key, value] : known_hints(info)) {
    auto same = std::find_if(hints.begin(), hints.end(),
                             [&key = key](const auto& hint) { return hint.first == key; });
    if (same != hints.end()) {
      same->second = value;
    } else {
      hints.emplace_back(key, value);
    }
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_set_info);

extern "C" int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info_used) {
  constexpr std::string_view kFunction = "MPI_Comm_get_info";
  if (int rc = check_call(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_out(comm, kFunction, "info_used", info_used); rc != MPI_SUCCESS) return rc;
  if (int rc = PMPI_Info_create(info_used); rc != MPI_SUCCESS) return rc;
  (*info_used)->entries = comm->local_of_caller().hints;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_get_info);
