// The local communicator calls: MPI_Comm_free, MPI_Comm_compare, MPI_Comm_set_name,
// MPI_Comm_get_name, MPI_Comm_test_inter.
#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "attr/attribute.h"
#include "comm/comm_lifetime.h"
#include "comm/communicator.h"
#include "errhan/error.h"
#include "group/group.h"
#include "util/profiling.h"

namespace weft::mpi {

void leave(MPI_Comm comm) {
  comm->local_of_caller().freed = true;
  if (comm->world || comm->self) return;
  // acq_rel: the member that deletes must see every other member's last use of the object.
  if (comm->references.fetch_sub(1, std::memory_order_acq_rel) == 1) delete comm;
}

}  // namespace weft::mpi

namespace {

// MPI_CONGRUENT for the same ranks in the same order, MPI_SIMILAR in another order, else
// MPI_UNEQUAL (these three ascend in mpi.h, so the worse of two results is the larger).
int compare_members(const std::vector<int>& members1, std::vector<int> members2) {
  if (members1 == members2) return MPI_CONGRUENT;
  std::vector<int> sorted1 = members1;
  std::sort(sorted1.begin(), sorted1.end());
  std::sort(members2.begin(), members2.end());
  return sorted1 == members2 ? MPI_SIMILAR : MPI_UNEQUAL;
}

}  // namespace

using weft::mpi::check_comm;
using weft::mpi::check_initialized;
using weft::mpi::raise;

// MPI-3.1 6.4.3: the delete callbacks of the caller's attributes run first. Not a meeting: each
// member lets go on its own and the last one deletes the object. Requests do not hold references,
// so a request still pending on a communicator that every member has freed must not fail (its
// error would be raised on the deleted object).
extern "C" int PMPI_Comm_free(MPI_Comm* comm) {
  constexpr std::string_view kFunction = "MPI_Comm_free";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (comm == nullptr) {
    return raise(MPI_COMM_NULL, kFunction, MPI_ERR_ARG,
                 "comm = NULL, expected the address of a communicator handle");
  }
  if (int rc = check_comm(*comm, kFunction); rc != MPI_SUCCESS) return rc;
  if ((*comm)->world || (*comm)->self) {
    return raise(*comm, kFunction, MPI_ERR_COMM,
                 std::string("comm = ") + ((*comm)->world ? "MPI_COMM_WORLD" : "MPI_COMM_SELF") +
                     ", expected a communicator the program created (the predefined ones "
                     "cannot be freed)");
  }
  if (int rc = weft::mpi::delete_attributes(*comm, kFunction); rc != MPI_SUCCESS) return rc;
  weft::mpi::leave(*comm);
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_free);

extern "C" int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  constexpr std::string_view kFunction = "MPI_Comm_compare";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm1, kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm2, kFunction); rc != MPI_SUCCESS) return rc;
  if (result == nullptr) {
    return raise(comm1, kFunction, MPI_ERR_ARG, "result = NULL, expected where to store it");
  }
  if (comm1 == comm2) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  // MPI-4.1 7.4.1: an intercommunicator and an intracommunicator are unequal; two
  // intercommunicators compare as the worse of their local and their remote groups.
  if (comm1->is_inter() != comm2->is_inter()) {
    *result = MPI_UNEQUAL;
    return MPI_SUCCESS;
  }
  *result = compare_members(weft::mpi::members_of(comm1), weft::mpi::members_of(comm2));
  if (comm1->is_inter()) {
    *result = std::max(*result, compare_members(comm1->inter->remote, comm2->inter->remote));
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_compare);

// Names are local to each rank (MPI-3.1 6.8); longer ones are truncated, as the standard allows.
extern "C" int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  constexpr std::string_view kFunction = "MPI_Comm_set_name";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (comm_name == nullptr) {
    return raise(comm, kFunction, MPI_ERR_ARG, "comm_name = NULL, expected a string");
  }
  comm->local_of_caller().name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_set_name);

extern "C" int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  constexpr std::string_view kFunction = "MPI_Comm_get_name";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (comm_name == nullptr || resultlen == nullptr) {
    return raise(comm, kFunction, MPI_ERR_ARG,
                 std::string(comm_name == nullptr ? "comm_name" : "resultlen") +
                     " = NULL, expected where to store the name (MPI_MAX_OBJECT_NAME chars)");
  }
  const std::string& name = comm->local_of_caller().name;
  std::memcpy(comm_name, name.c_str(), name.size() + 1);
  *resultlen = static_cast<int>(name.size());
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_get_name);

extern "C" int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  constexpr std::string_view kFunction = "MPI_Comm_test_inter";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (flag == nullptr) {
    return raise(comm, kFunction, MPI_ERR_ARG, "flag = NULL, expected where to store it");
  }
  *flag = comm->is_inter() ? 1 : 0;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_test_inter);
