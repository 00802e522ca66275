// MPI_Intercomm_create, MPI_Intercomm_merge, MPI_Comm_remote_size, MPI_Comm_remote_group.
//
// An intercommunicator is two objects, one per group (communicator.h, Inter): each is shared by
// the members of its group in this process and sees the other group as remote ranks. Both share
// one point-to-point context: a message's envelope names its sender's rank in its own group,
// which is the rank the receiver names as the source, and no message travels inside a group on
// that context. Collectives inside one group use the side's hidden intracommunicator.
#include "comm/intercomm.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "comm/comm_registry.h"
#include "errhan/error.h"
#include "group/group.h"
#include "init/world.h"
#include "util/profiling.h"

using weft::mpi::check_comm;
using weft::mpi::check_initialized;
using weft::mpi::raise;

namespace {

using weft::mpi::Comm;

int check_inter(MPI_Comm comm, std::string_view function) {
  if (int rc = check_initialized(function); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(comm, function); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter()) return MPI_SUCCESS;
  return raise(comm, function, MPI_ERR_COMM,
               "comm is an intracommunicator, expected an intercommunicator");
}

bool overlap(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> x = a;
  std::vector<int> y = b;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  std::vector<int> both;
  std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(both));
  return !both.empty();
}

// What the local leader of MPI_Intercomm_create finds out and tells its group: an error class and
// why, or the new context, this side's hidden context, whether it is the low group and the remote
// group.
struct Found {
  int rc = MPI_SUCCESS;
  std::string problem;
  std::vector<int> info;  // {rc, context, local context, low, remote world ranks...}
};

Found lead_create(MPI_Comm local_comm, MPI_Comm peer_comm, int remote_leader, int tag) {
  Found found;
  auto fail = [&](int rc, std::string problem) {
    found.rc = rc;
    found.problem = std::move(problem);
    found.info = {rc};
    return found;
  };
  if (peer_comm == MPI_COMM_NULL) {
    return fail(MPI_ERR_COMM,
                "peer_comm = MPI_COMM_NULL at the local leader, expected a communicator");
  }
  if (peer_comm->my_rank() < 0 || peer_comm->local_of_caller().freed) {
    return fail(MPI_ERR_COMM,
                "peer_comm at the local leader is not one the leader may use, expected a live "
                "communicator it belongs to");
  }
  if (remote_leader < 0 || remote_leader >= peer_comm->peer_count()) {
    return fail(MPI_ERR_RANK, "remote_leader = " + std::to_string(remote_leader) +
                                  ", expected 0.." + std::to_string(peer_comm->peer_count() - 1) +
                                  " (a rank of peer_comm)");
  }
  const std::vector<int> local = weft::mpi::members_of(local_comm);
  const auto context = static_cast<int>(weft::mpi::allocate_context());
  std::vector<int> out{context};
  out.insert(out.end(), local.begin(), local.end());
  std::vector<int> in;
  if (int rc = weft::mpi::inter::swap(peer_comm, remote_leader,
                                      weft::mpi::inter::intercomm_create_tag(tag), out, in);
      rc != MPI_SUCCESS) {
    return fail(rc, "the exchange with the remote leader failed");
  }
  if (in.size() < 2) return fail(MPI_ERR_INTERN, "the remote leader's reply is malformed");
  const std::vector<int> remote(in.begin() + 1, in.end());
  if (overlap(local, remote)) {
    return fail(
        MPI_ERR_GROUP,
        "the local and remote groups share ranks, expected disjoint groups (MPI-4.1 7.6.2)");
  }
  found.info = {MPI_SUCCESS, std::max(context, in[0]),
                static_cast<int>(weft::mpi::allocate_context()), local.front() < remote.front()};
  found.info.insert(found.info.end(), remote.begin(), remote.end());
  return found;
}

}  // namespace

extern "C" int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                                     int remote_leader, int tag, MPI_Comm* newintercomm) {
  constexpr std::string_view kFunction = "MPI_Intercomm_create";
  if (int rc = check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = check_comm(local_comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (local_comm->is_inter()) {
    return raise(local_comm, kFunction, MPI_ERR_COMM,
                 "local_comm is an intercommunicator, expected an intracommunicator");
  }
  if (local_leader < 0 || local_leader >= local_comm->size()) {
    return raise(local_comm, kFunction, MPI_ERR_RANK,
                 "local_leader = " + std::to_string(local_leader) + ", expected 0.." +
                     std::to_string(local_comm->size() - 1) + " (a rank of local_comm)");
  }
  if (tag < 0 || tag > weft::mpi::kTagUpperBound) {
    return raise(local_comm, kFunction, MPI_ERR_TAG,
                 "tag = " + std::to_string(tag) + ", expected 0.." +
                     std::to_string(weft::mpi::kTagUpperBound));
  }
  if (newintercomm == nullptr) {
    return raise(local_comm, kFunction, MPI_ERR_ARG,
                 "newintercomm = NULL, expected where to store the new intercommunicator");
  }
  const int call_tag = weft::mpi::inter::next_call_tag(local_comm);
  Found found;
  if (local_comm->my_rank() == local_leader)
    found = lead_create(local_comm, peer_comm, remote_leader, tag);
  int rc = weft::mpi::inter::bcast_ints(local_comm, local_leader, call_tag, found.info);
  if (rc == MPI_SUCCESS && found.info.empty()) rc = MPI_ERR_INTERN;
  if (rc == MPI_SUCCESS) rc = found.info[0];
  *newintercomm = MPI_COMM_NULL;
  if (rc != MPI_SUCCESS) {
    if (found.problem.empty()) found.problem = "in the local leader: its part of the call failed";
    return raise(local_comm, kFunction, rc, found.problem);
  }
  const std::vector<int>& info = found.info;
  const MPI_Comm side = weft::mpi::inter::adopt_side(
      weft::mpi::members_of(local_comm), std::vector<int>(info.begin() + 4, info.end()),
      static_cast<std::uint32_t>(info[1]), static_cast<std::uint32_t>(info[2]), info[3] != 0);
  side->local_of_caller().errhandler = local_comm->local_of_caller().errhandler;
  *newintercomm = side;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Intercomm_create);

// The group whose members pass high = false comes first; when both pass the same, the low group
// (the one with the lower first world rank) does.
extern "C" int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  constexpr std::string_view kFunction = "MPI_Intercomm_merge";
  if (int rc = check_inter(intercomm, kFunction); rc != MPI_SUCCESS) return rc;
  if (newintracomm == nullptr) {
    return raise(intercomm, kFunction, MPI_ERR_ARG,
                 "newintracomm = NULL, expected where to store the new intracommunicator");
  }
  const int tag = weft::mpi::inter::next_call_tag(intercomm);
  std::vector<int> info;  // {rc, context, whether this group comes first}
  if (intercomm->my_rank() == 0) {
    const std::vector<int> out{high != 0, static_cast<int>(weft::mpi::allocate_context())};
    std::vector<int> in;
    int rc = weft::mpi::inter::swap(intercomm, 0, tag, out, in);
    if (rc == MPI_SUCCESS && in.size() != 2) rc = MPI_ERR_INTERN;
    if (rc != MPI_SUCCESS) {
      info = {rc};
    } else {
      const bool first = out[0] != in[0] ? out[0] == 0 : intercomm->inter->low;
      info = {MPI_SUCCESS, std::max(out[1], in[1]), first};
    }
  }
  int rc = weft::mpi::inter::bcast_ints(weft::mpi::inter::local_group(intercomm), 0, tag, info);
  if (rc == MPI_SUCCESS && info.empty()) rc = MPI_ERR_INTERN;
  if (rc == MPI_SUCCESS) rc = info[0];
  *newintracomm = MPI_COMM_NULL;
  if (rc != MPI_SUCCESS) {
    return raise(intercomm, kFunction, rc, "the exchange between the groups' leaders failed");
  }
  const std::vector<int>& local = intercomm->members;
  const std::vector<int>& remote = intercomm->inter->remote;
  std::vector<int> members = info[2] != 0 ? local : remote;
  const std::vector<int>& second = info[2] != 0 ? remote : local;
  members.insert(members.end(), second.begin(), second.end());
  const auto context = static_cast<std::uint32_t>(info[1]);
  const MPI_Comm merged =
      weft::mpi::adopt(context, weft::mpi::local_count(members), [&]() -> MPI_Comm {
        auto* made = new Comm(members, context, weft::mpi::world()->size());
        weft::mpi::define_in_trace(*made);
        return made;
      });
  merged->local_of_caller().errhandler = intercomm->local_of_caller().errhandler;
  *newintracomm = merged;
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Intercomm_merge);

extern "C" int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
  constexpr std::string_view kFunction = "MPI_Comm_remote_size";
  if (int rc = check_inter(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (size == nullptr) {
    return raise(comm, kFunction, MPI_ERR_ARG, "size = NULL, expected where to store the size");
  }
  *size = comm->peer_count();
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_remote_size);

extern "C" int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  constexpr std::string_view kFunction = "MPI_Comm_remote_group";
  if (int rc = check_inter(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (group == nullptr) {
    return raise(comm, kFunction, MPI_ERR_ARG, "group = NULL, expected where to store the group");
  }
  *group = weft::mpi::make_group(comm->inter->remote);
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_remote_group);
