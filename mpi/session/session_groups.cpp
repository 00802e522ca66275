// Process sets, the groups they give and the communicators made from those groups.
#include <algorithm>
#include <cstring>
#include <string>

#include "comm/comm_create_group.h"
#include "comm/communicator.h"
#include "comm/intercomm.h"
#include "errhan/error.h"
#include "group/group.h"
#include "init/world.h"
#include "session/session.h"
#include "util/profiling.h"

using weft::mpi::session::kPsets;
using weft::mpi::session::pset_index;

extern "C" int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info /*info*/,
                                          int* npset_names) {
  constexpr std::string_view kFunction = "MPI_Session_get_num_psets";
  if (int rc = weft::mpi::session::check(session, kFunction); rc != MPI_SUCCESS) return rc;
  if (npset_names == nullptr) {
    return weft::mpi::session::raise(session, kFunction, MPI_ERR_ARG,
                                     "npset_names = NULL, expected where to store the count");
  }
  *npset_names = static_cast<int>(std::size(kPsets));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Session_get_num_psets);

// MPI-4.1 11.3.2: with *pset_len 0 only the length (with the terminator) is returned; else up
// to *pset_len - 1 characters are copied, terminated, and *pset_len is the whole length.
extern "C" int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info /*info*/, int n,
                                         int* pset_len, char* pset_name) {
  constexpr std::string_view kFunction = "MPI_Session_get_nth_pset";
  if (int rc = weft::mpi::session::check(session, kFunction); rc != MPI_SUCCESS) return rc;
  if (n < 0 || static_cast<std::size_t>(n) >= std::size(kPsets) || pset_len == nullptr) {
    return weft::mpi::session::raise(
        session, kFunction, MPI_ERR_ARG,
        pset_len == nullptr ? std::string("pset_len = NULL, expected the buffer's length")
                            : "n = " + std::to_string(n) + ", expected 0.." +
                                  std::to_string(std::size(kPsets) - 1));
  }
  const std::string_view name = kPsets[n];
  if (*pset_len > 0 && pset_name != nullptr) {
    const std::size_t copied = std::min(name.size(), static_cast<std::size_t>(*pset_len - 1));
    std::memcpy(pset_name, name.data(), copied);
    pset_name[copied] = '\0';
  }
  *pset_len = static_cast<int>(name.size()) + 1;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Session_get_nth_pset);

extern "C" int PMPI_Session_get_pset_info(MPI_Session session, const char* pset_name,
                                          MPI_Info* info) {
  constexpr std::string_view kFunction = "MPI_Session_get_pset_info";
  if (int rc = weft::mpi::session::check(session, kFunction); rc != MPI_SUCCESS) return rc;
  const int index = pset_name != nullptr ? pset_index(pset_name) : -1;
  if (index < 0 || info == nullptr) {
    return weft::mpi::session::raise(
        session, kFunction, MPI_ERR_ARG,
        info == nullptr ? std::string("info = NULL, expected where to store the info")
                        : std::string("pset_name = \"") + (pset_name ? pset_name : "(null)") +
                              "\", expected mpi://WORLD or mpi://SELF");
  }
  const int size = index == 0 ? weft::mpi::world()->size() : 1;
  PMPI_Info_create(info);
  PMPI_Info_set(*info, "mpi_size", std::to_string(size).c_str());
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Session_get_pset_info);

extern "C" int PMPI_Group_from_session_pset(MPI_Session session, const char* pset_name,
                                            MPI_Group* newgroup) {
  constexpr std::string_view kFunction = "MPI_Group_from_session_pset";
  if (int rc = weft::mpi::session::check(session, kFunction); rc != MPI_SUCCESS) return rc;
  const int index = pset_name != nullptr ? pset_index(pset_name) : -1;
  if (index < 0 || newgroup == nullptr) {
    return weft::mpi::session::raise(
        session, kFunction, MPI_ERR_ARG,
        newgroup == nullptr ? std::string("newgroup = NULL, expected where to store the group")
                            : std::string("pset_name = \"") + (pset_name ? pset_name : "(null)") +
                                  "\", expected mpi://WORLD or mpi://SELF");
  }
  std::vector<int> members;
  if (index == 0) {
    for (int r = 0; r < weft::mpi::world()->size(); ++r) members.push_back(r);
  } else {
    members.push_back(session->owner);
  }
  *newgroup = new weft_mpi_group(std::move(members));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Group_from_session_pset);

// A communicator over a group with no parent communicator, collective over the group's members
// (MPI-4.1 7.4.2). The groups a session gives are the world and the caller alone: the first is
// made as a duplicate of the world's communicator (every member calls, in the same order for
// the same string tag), the second as one of MPI_COMM_SELF. Other groups need
// MPI_Comm_create_group's machinery and are refused by name until it is there.
extern "C" int PMPI_Comm_create_from_group(MPI_Group group, const char* stringtag,
                                           MPI_Info /*info*/, MPI_Errhandler errhandler,
                                           MPI_Comm* newcomm) {
  constexpr std::string_view kFunction = "MPI_Comm_create_from_group";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (group == MPI_GROUP_NULL || stringtag == nullptr || newcomm == nullptr ||
      errhandler == MPI_ERRHANDLER_NULL) {
    return weft::mpi::raise(MPI_COMM_SELF, kFunction,
                            group == MPI_GROUP_NULL             ? MPI_ERR_GROUP
                            : errhandler == MPI_ERRHANDLER_NULL ? MPI_ERR_ERRHANDLER
                                                                : MPI_ERR_ARG,
                            group == MPI_GROUP_NULL ? "group = MPI_GROUP_NULL, expected a group"
                            : stringtag == nullptr  ? "stringtag = NULL, expected a tag"
                            : newcomm == nullptr
                                ? "newcomm = NULL, expected where to store the communicator"
                                : "errhandler = MPI_ERRHANDLER_NULL, expected a handler");
  }
  const MPI_Comm world = weft::mpi::caller_world_comm();
  if (world->rank_of(weft::mpi::caller_world_rank()) < 0 ||
      std::find(group->members.begin(), group->members.end(), weft::mpi::caller_world_rank()) ==
          group->members.end()) {
    return weft::mpi::raise(MPI_COMM_SELF, kFunction, MPI_ERR_GROUP,
                            "the caller is not a member of group, expected a group it belongs to");
  }
  // The group's members meet on the world alone, as MPI_Comm_create_group would: ranks outside
  // the group and the world's own collectives, running meanwhile in other threads, are untouched.
  const int rc = weft::mpi::create_from_members(
      world, group, weft::mpi::inter::create_from_group_tag(stringtag), kFunction, newcomm);
  if (rc != MPI_SUCCESS) return rc;
  return PMPI_Comm_set_errhandler(*newcomm, errhandler);
}
WEFT_MPI_ALIAS(MPI_Comm_create_from_group);
