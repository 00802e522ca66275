// MPI_Comm_create_group (MPI-3.0): collective over the group only, so the members of comm outside
// it go on undisturbed. The group's first member takes a context unique in the job and sends it
// down a binomial tree of the group, in comm's collective context under a tag made from the
// user's (concurrent calls on one communicator differ by tag); every member then takes the
// process's one object for it. MPI_Comm_create_from_group (session/) is the same over the world.
#include "comm/comm_create_group.h"

#include <string>
#include <string_view>
#include <vector>

#include "comm/comm_registry.h"
#include "comm/intercomm.h"
#include "errhan/error.h"
#include "group/group.h"
#include "init/world.h"
#include "util/profiling.h"

using weft::mpi::raise;

namespace weft::mpi {

int create_from_members(MPI_Comm comm, MPI_Group group, int wire_tag, std::string_view function,
                        MPI_Comm* newcomm) {
  *newcomm = MPI_COMM_NULL;
  std::vector<int> ranks;  // comm ranks of the group's members, in group order
  int me = -1;
  const int caller = comm->my_rank();
  for (int i = 0; i < group->size(); ++i) {
    const int r = comm->rank_of(group->members[i]);
    if (r < 0) {
      return raise(comm, function, MPI_ERR_GROUP,
                   "group rank " + std::to_string(i) + " is world rank " +
                       std::to_string(group->members[i]) +
                       ", which is not a member of comm, expected a subset of comm's group");
    }
    if (r == caller) me = i;
    ranks.push_back(r);
  }
  // A rank outside the group takes part in nothing and gets no communicator.
  if (me < 0) return MPI_SUCCESS;
  std::vector<int> context;
  if (me == 0) context = {static_cast<int>(allocate_context())};
  int rc = inter::bcast_ints(comm, ranks, 0, wire_tag, context);
  if (rc == MPI_SUCCESS && context.size() != 1) rc = MPI_ERR_INTERN;
  if (rc != MPI_SUCCESS) {
    return raise(comm, function, rc, "the context could not be spread through the group");
  }
  const auto number = static_cast<std::uint32_t>(context[0]);
  const MPI_Comm created = adopt(number, local_count(group->members), [&]() -> MPI_Comm {
    auto* made = new Comm(group->members, number, world()->size());
    define_in_trace(*made);
    return made;
  });
  created->local_of_caller().errhandler = comm->local_of_caller().errhandler;
  *newcomm = created;
  return MPI_SUCCESS;
}

}  // namespace weft::mpi

extern "C" int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  constexpr std::string_view kFunction = "MPI_Comm_create_group";
  if (int rc = weft::mpi::check_initialized(kFunction); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_comm(comm, kFunction); rc != MPI_SUCCESS) return rc;
  if (comm->is_inter()) {
    return raise(comm, kFunction, MPI_ERR_COMM,
                 "comm is an intercommunicator, expected an intracommunicator");
  }
  if (group == MPI_GROUP_NULL) {
    return raise(comm, kFunction, MPI_ERR_GROUP, "group = MPI_GROUP_NULL, expected a group");
  }
  if (tag < 0 || tag > weft::mpi::kTagUpperBound) {
    return raise(comm, kFunction, MPI_ERR_TAG,
                 "tag = " + std::to_string(tag) + ", expected 0.." +
                     std::to_string(weft::mpi::kTagUpperBound));
  }
  if (newcomm == nullptr) {
    return raise(comm, kFunction, MPI_ERR_ARG,
                 "newcomm = NULL, expected where to store the new communicator");
  }
  return weft::mpi::create_from_members(comm, group, weft::mpi::inter::create_group_tag(tag),
                                        kFunction, newcomm);
}
WEFT_MPI_ALIAS(MPI_Comm_create_group);
