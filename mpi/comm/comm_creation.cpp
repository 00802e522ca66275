// Making communicators: MPI_Comm_dup, MPI_Comm_split, MPI_Comm_split_type, MPI_Comm_create.
//
// Each is a collective call on the parent and meets like the collectives do: the members join
// the Meeting of their next collective call number and publish their part (color and key, or
// group). The last to arrive reads every part and builds all the new communicators at once, inside
// the phase; then each member takes its own and fills its slot (error handler, attributes), which
// only its own threads touch.
//
// Arguments are checked inside the meeting, by the builder, rather than by each member before it
// joins: a member that returned early would leave the others waiting for it forever. So a bad
// argument of one member fails the call in every member, each raising the error on the parent.
//
// A parent with members in other processes first has every member send its part to all (point
// to point, collective_spanning.h), together with a context number it reserved; the members of
// each process then meet as above, among themselves, with all the parts, and each new
// communicator takes the largest reservation of its members: the same everywhere, and unique in
// the job because reservations are.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "attr/attribute.h"
#include "coll/collective_spanning.h"
#include "comm/comm_dup.h"
#include "comm/comm_lifetime.h"
#include "comm/communicator.h"
#include "comm/hardware_split.h"
#include "comm/intercomm.h"
#include "errhan/error.h"
#include "group/group.h"
#include "init/world.h"
#include "util/profiling.h"

namespace {

using weft::mpi::Comm;
using weft::mpi::MeetingRef;

// One member's part of a creation call. A problem found with the member's own arguments is
// published too, so that the builder can fail the call everywhere.
struct Part {
  int color = 0;  // MPI_UNDEFINED: no new communicator for this member
  int key = 0;
  MPI_Group group = MPI_GROUP_NULL;  // MPI_Comm_create
  int error_class = MPI_SUCCESS;
  std::string problem;
};

// What the builder tells every member: the new communicator of each parent rank, or why there
// is none.
struct Outcome {
  std::vector<MPI_Comm> comms;
  int error_class = MPI_SUCCESS;
  int culprit = -1;  // the parent rank whose arguments are wrong
  std::string problem;
};

// The context of a new communicator whose members are these parent ranks.
using ContextOf = std::function<std::uint32_t(const std::vector<int>& parent_ranks)>;

using Builder = void (*)(const std::vector<const Part*>& parts, const std::vector<int>& members,
                         const ContextOf& context_of, Outcome& outcome);

// The new communicator of these parent ranks (`members` maps them to world ranks), or nothing
// when none of them is in this process (in a parent spanning processes).
MPI_Comm make_comm(const std::vector<int>& parent_ranks, const std::vector<int>& members,
                   const ContextOf& context_of) {
  std::vector<int> world_ranks;
  bool local = false;
  for (int r : parent_ranks) {
    world_ranks.push_back(members[r]);
    local = local || weft::mpi::world()->is_local(members[r]);
  }
  if (!local) return MPI_COMM_NULL;
  auto* comm =
      new Comm(std::move(world_ranks), context_of(parent_ranks), weft::mpi::world()->size());
  weft::mpi::define_in_trace(*comm);
  return comm;
}

// Members with a color get one communicator per color, ordered by key and then by parent rank.
void build_split(const std::vector<const Part*>& parts, const std::vector<int>& members,
                 const ContextOf& context_of, Outcome& outcome) {
  struct Entry {
    int color;
    int key;
    int rank;
  };
  std::vector<Entry> entries;
  for (int r = 0; r < static_cast<int>(parts.size()); ++r) {
    if (parts[r]->color != MPI_UNDEFINED) entries.push_back({parts[r]->color, parts[r]->key, r});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.color != b.color) return a.color < b.color;
    if (a.key != b.key) return a.key < b.key;
    return a.rank < b.rank;
  });
  for (std::size_t begin = 0; begin < entries.size();) {
    std::size_t end = begin;
    std::vector<int> parent_ranks;
    while (end < entries.size() && entries[end].color == entries[begin].color) {
      parent_ranks.push_back(entries[end++].rank);
    }
    const MPI_Comm comm = make_comm(parent_ranks, members, context_of);
    for (std::size_t i = begin; i < end; ++i) outcome.comms[entries[i].rank] = comm;
    begin = end;
  }
}

// MPI_Comm_create: each distinct group passed makes one communicator of its members, in group
// order. MPI-2.2 lets the members pass different, disjoint groups (a member outside its own group
// gets none); every member of a group must have passed that group, and every group is a subset
// of the parent. A part's group is null when this process does not know it (the part of a member
// in another process whose group no member here passed): no group known here holds that member.
void build_create(const std::vector<const Part*>& parts, const std::vector<int>& members,
                  const ContextOf& context_of, Outcome& outcome) {
  std::vector<int> parent_rank(
      static_cast<std::size_t>(*std::max_element(members.begin(), members.end()) + 1), -1);
  for (int r = 0; r < static_cast<int>(members.size()); ++r) parent_rank[members[r]] = r;
  auto fail = [&](int culprit, std::string problem) {
    outcome.error_class = MPI_ERR_GROUP;
    outcome.culprit = culprit;
    outcome.problem = std::move(problem);
  };
  std::vector<bool> done(parts.size(), false);  // parts whose group has been built
  for (int r = 0; r < static_cast<int>(parts.size()); ++r) {
    const MPI_Group group = parts[r]->group;
    if (group == MPI_GROUP_NULL || done[r]) continue;
    std::vector<int> parent_ranks;
    for (int i = 0; i < group->size(); ++i) {
      const int w = group->members[i];
      const int p = w >= 0 && w < static_cast<int>(parent_rank.size()) ? parent_rank[w] : -1;
      if (p < 0) {
        return fail(r, "group rank " + std::to_string(i) + " is world rank " + std::to_string(w) +
                           ", which is not a member of comm, expected a subset of comm's group");
      }
      if (parts[p]->group == MPI_GROUP_NULL || parts[p]->group->members != group->members) {
        return fail(p, "group differs from that of comm rank " + std::to_string(r) +
                           ", which holds this member, expected each member to pass the group "
                           "it belongs to (groups of different members disjoint)");
      }
      parent_ranks.push_back(p);
    }
    // The members that passed this very group but are not in it get no communicator.
    for (int q = r; q < static_cast<int>(parts.size()); ++q) {
      done[q] = done[q] ||
                (parts[q]->group != MPI_GROUP_NULL && parts[q]->group->members == group->members);
    }
    if (parent_ranks.empty()) continue;
    const MPI_Comm comm = make_comm(parent_ranks, members, context_of);
    for (int p : parent_ranks) outcome.comms[p] = comm;
  }
}

// Builds the outcome of a call from every member's part.
std::shared_ptr<Outcome> build_outcome(MPI_Comm parent, const std::vector<const Part*>& parts,
                                       Builder build, const ContextOf& context_of) {
  auto outcome = std::make_shared<Outcome>();
  outcome->comms.assign(parts.size(), MPI_COMM_NULL);
  for (int r = 0; r < static_cast<int>(parts.size()); ++r) {
    if (parts[r]->error_class != MPI_SUCCESS && outcome->culprit < 0) {
      outcome->error_class = parts[r]->error_class;
      outcome->culprit = r;
      outcome->problem = parts[r]->problem;
    }
  }
  if (outcome->error_class == MPI_SUCCESS) {
    build(parts, weft::mpi::members_of(parent), context_of, *outcome);
  }
  return outcome;
}

// What a member of a parent spanning processes sends every other member.
struct WirePart {
  int color;
  int key;
  int error_class;
  std::uint32_t reserved;  // a context number this member reserved
  std::uint64_t group;     // a digest of MPI_Comm_create's group
};

std::uint64_t digest(MPI_Group group) {
  if (group == MPI_GROUP_NULL) return 0;
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a over the members
  for (int w : group->members) hash = (hash ^ static_cast<std::uint64_t>(w)) * 1099511628211ull;
  return hash;
}

// The meeting of one creation call on a parent spanning processes: parts and reservations go
// to every member, then the members of this process meet with all of them.
std::shared_ptr<Outcome> meet_spanning(MPI_Comm parent, const Part& mine, Builder build,
                                       weft::mpi::CallNumber number) {
  const int rank = parent->my_rank();
  const int size = parent->size();
  const WirePart out{mine.color, mine.key, mine.error_class, weft::mpi::allocate_context(),
                     digest(mine.group)};
  std::vector<WirePart> wire(static_cast<std::size_t>(size));
  const int rc = weft::mpi::spanning::allgather(
      {const_cast<WirePart*>(&out), sizeof out, MPI_BYTE},
      weft::mpi::collective::Blocks::regular(wire.data(), sizeof(WirePart), MPI_BYTE), parent,
      weft::mpi::spanning::tag_of(number.call, 0));
  std::vector<Part> all(static_cast<std::size_t>(size));
  std::vector<const Part*> parts(static_cast<std::size_t>(size));
  // The members of this process, by parent rank: the index of each in the meeting.
  std::vector<int> local_index(static_cast<std::size_t>(size), -1);
  int local_members = 0;
  for (int r = 0; r < size; ++r) {
    if (weft::mpi::world()->is_local(parent->members[r])) local_index[r] = local_members++;
  }
  for (int r = 0; r < size; ++r) {
    Part& part = all[r];
    part.color = wire[r].color;
    part.key = wire[r].key;
    part.error_class = wire[r].error_class;
    if (r == rank) {
      part.problem = mine.problem;
    } else if (part.error_class != MPI_SUCCESS) {
      part.problem = "its arguments were refused (its own error says why)";
    }
    if (rc != MPI_SUCCESS && part.error_class == MPI_SUCCESS) {
      part.error_class = rc;
      part.problem = "the exchange of the members' arguments between processes failed";
    }
    parts[r] = &part;
  }
  const ContextOf context_of = [&wire](const std::vector<int>& parent_ranks) {
    std::uint32_t context = 0;
    for (int r : parent_ranks) context = std::max(context, wire[r].reserved);
    return context;
  };
  // Every member of this process has all the parts but only its own group: the last to arrive
  // takes the groups of the others here, and that of a member elsewhere from the one member here
  // that passed the same group (by digest), and builds for all.
  MeetingRef meeting = parent->meetings.join(number, local_members);
  meeting.publish(local_index[rank], &mine);
  meeting->phase([&] {
    for (int r = 0; r < size; ++r) {
      if (local_index[r] >= 0) {
        all[r].group = meeting->arguments_of<Part>(local_index[r]).group;
        continue;
      }
      for (int q = 0; q < size && all[r].group == MPI_GROUP_NULL; ++q) {
        if (local_index[q] < 0 || wire[q].group != wire[r].group) continue;
        all[r].group = meeting->arguments_of<Part>(local_index[q]).group;
      }
    }
    meeting->shared = build_outcome(parent, parts, build, context_of);
  });
  return std::static_pointer_cast<Outcome>(meeting->shared);
}

// The meeting of one creation call, the caller's collective call `number` on `parent`. Returns
// the caller's new communicator (MPI_COMM_NULL when it has none), or raises the call's error on
// `parent` and returns its class in `rc`.
MPI_Comm meet_as(MPI_Comm parent, std::string_view function, const Part& mine, Builder build,
                 int& rc, weft::mpi::CallNumber number) {
  const int rank = parent->my_rank();
  const int size = parent->size();
  std::shared_ptr<Outcome> kept;
  if (parent->spans_processes) {
    kept = meet_spanning(parent, mine, build, number);
  } else {
    MeetingRef meeting = parent->meetings.join(number, size, "a blocking collective", parent->self);
    meeting.publish(rank, &mine);
    // The last member to arrive builds for all before any member leaves the phase, so every
    // part it reads is still on its member's stack.
    meeting->phase([&] {
      std::vector<const Part*> parts(static_cast<std::size_t>(size));
      for (int r = 0; r < size; ++r) parts[r] = &meeting->arguments_of<Part>(r);
      meeting->shared = build_outcome(parent, parts, build, [](const std::vector<int>&) {
        return weft::mpi::allocate_context();
      });
    });
    kept = std::static_pointer_cast<Outcome>(meeting->shared);
  }
  const Outcome& outcome = *kept;
  if (outcome.error_class != MPI_SUCCESS) {
    const std::string who =
        outcome.culprit == rank ? "" : "in comm rank " + std::to_string(outcome.culprit) + ": ";
    rc = weft::mpi::raise(parent, function, outcome.error_class, who + outcome.problem);
    return MPI_COMM_NULL;
  }
  rc = MPI_SUCCESS;
  const MPI_Comm mine_comm = outcome.comms[rank];
  // MPI-3.1 6.4.2 and 8.3: the new communicator inherits the parent's error handler.
  if (mine_comm != MPI_COMM_NULL) {
    mine_comm->local_of_caller().errhandler = parent->local_of_caller().errhandler;
  }
  return mine_comm;
}

// The same as the caller's next collective call.
MPI_Comm meet(MPI_Comm parent, std::string_view function, const Part& mine, Builder build,
              int& rc) {
  if (parent->is_inter()) {
    rc = weft::mpi::raise(parent, function, MPI_ERR_COMM,
                          "comm is an intercommunicator, expected an intracommunicator");
    return MPI_COMM_NULL;
  }
  return meet_as(parent, function, mine, build, rc, parent->local_of_caller().next_call(true));
}

// The checks made before joining: without a valid parent there is no meeting to join.
int check_parent(MPI_Comm comm, std::string_view function) {
  if (int rc = weft::mpi::check_initialized(function); rc != MPI_SUCCESS) return rc;
  return weft::mpi::check_comm(comm, function);
}

void complain(Part& part, int error_class, std::string problem) {
  if (part.error_class != MPI_SUCCESS) return;
  part.error_class = error_class;
  part.problem = std::move(problem);
}

void check_newcomm(Part& part, const MPI_Comm* newcomm) {
  if (newcomm == nullptr) {
    complain(part, MPI_ERR_ARG, "newcomm = NULL, expected where to store the new communicator");
  }
}

int raise_problem(MPI_Comm comm, std::string_view function, const Part& part) {
  return weft::mpi::raise(comm, function, part.error_class, part.problem);
}

int finish(MPI_Comm* newcomm, MPI_Comm result, int rc) {
  if (newcomm != nullptr) *newcomm = result;
  return rc;
}

int split(MPI_Comm comm, std::string_view function, Part& part, MPI_Comm* newcomm) {
  check_newcomm(part, newcomm);
  int rc = MPI_SUCCESS;
  const MPI_Comm result = meet(comm, function, part, build_split, rc);
  return finish(newcomm, result, rc);
}

// MPI_Comm_create on an intercommunicator: `group`, a subset of the caller's group, keeps its
// members, in group order; the new intercommunicator joins the kept members of both groups.
int create_inter(MPI_Comm comm, std::string_view function, const Part& part, MPI_Comm* newcomm) {
  if (part.error_class != MPI_SUCCESS) return raise_problem(comm, function, part);
  const MPI_Group group = part.group;
  int key = -1;
  for (int i = 0; i < group->size(); ++i) {
    const int w = group->members[i];
    if (comm->rank_of(w) < 0) {
      *newcomm = MPI_COMM_NULL;
      return weft::mpi::raise(comm, function, MPI_ERR_GROUP,
                              "group rank " + std::to_string(i) + " is world rank " +
                                  std::to_string(w) +
                                  ", which is not in comm's local group, expected a subset of it");
    }
    if (w == weft::mpi::caller_world_rank()) key = i;
  }
  return weft::mpi::inter::split(comm, key < 0 ? MPI_UNDEFINED : 0, key, function, newcomm);
}

}  // namespace

namespace weft::mpi {

CallNumber next_duplication(MPI_Comm comm) {
  return comm->local_of_caller().next_call(!comm->is_inter());
}

int duplicate(MPI_Comm comm, std::string_view function, CallNumber number, const Hints* hints,
              MPI_Comm* newcomm) {
  Part part;
  part.key = comm->my_rank();
  check_newcomm(part, newcomm);
  int rc = MPI_SUCCESS;
  MPI_Comm result = MPI_COMM_NULL;
  if (comm->is_inter()) {
    if (newcomm == nullptr) return raise_problem(comm, function, part);
    rc = inter::dup(comm, function, spanning::tag_of(number.call, 0), &result);
    if (rc == MPI_SUCCESS) {
      result->local_of_caller().errhandler = comm->local_of_caller().errhandler;
    }
  } else {
    result = meet_as(comm, function, part, build_split, rc, number);
  }
  if (rc != MPI_SUCCESS) return ::finish(newcomm, MPI_COMM_NULL, rc);
  if (int copy_rc = copy_attributes(comm, result, function); copy_rc != MPI_SUCCESS) {
    leave(result);
    return ::finish(newcomm, MPI_COMM_NULL, copy_rc);
  }
  result->local_of_caller().hints = hints != nullptr ? *hints : comm->local_of_caller().hints;
  // MPI-4.1 7.4.2: the duplicate has the same topology (dup, idup and their info forms alike).
  result->local_of_caller().topology = comm->local_of_caller().topology;
  return ::finish(newcomm, result, MPI_SUCCESS);
}

}  // namespace weft::mpi

extern "C" int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  constexpr std::string_view kFunction = "MPI_Comm_dup";
  if (int rc = check_parent(comm, kFunction); rc != MPI_SUCCESS) return rc;
  return weft::mpi::duplicate(comm, kFunction, weft::mpi::next_duplication(comm), nullptr, newcomm);
}
WEFT_MPI_ALIAS(MPI_Comm_dup);

extern "C" int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  constexpr std::string_view kFunction = "MPI_Comm_split";
  if (int rc = check_parent(comm, kFunction); rc != MPI_SUCCESS) return rc;
  Part part;
  part.color = color;
  part.key = key;
  if (color < 0 && color != MPI_UNDEFINED) {
    complain(part, MPI_ERR_ARG,
             "color = " + std::to_string(color) + ", expected >= 0 or MPI_UNDEFINED");
  }
  if (comm->is_inter()) {
    check_newcomm(part, newcomm);
    if (part.error_class != MPI_SUCCESS) return raise_problem(comm, kFunction, part);
    return weft::mpi::inter::split(comm, color, key, kFunction, newcomm);
  }
  return split(comm, kFunction, part, newcomm);
}
WEFT_MPI_ALIAS(MPI_Comm_split);

// Every rank of a process shares its memory, so MPI_COMM_TYPE_SHARED keeps all the members
// together; the hardware types split by NUMA node or core (comm/hardware_split.h).
extern "C" int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                    MPI_Comm* newcomm) {
  constexpr std::string_view kFunction = "MPI_Comm_split_type";
  if (int rc = check_parent(comm, kFunction); rc != MPI_SUCCESS) return rc;
  Part part;
  part.color = split_type == MPI_UNDEFINED ? MPI_UNDEFINED : 0;
  part.key = key;
  if (split_type == MPI_COMM_TYPE_HW_GUIDED || split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
    std::string problem;
    if (comm->is_inter()) {
      complain(part, MPI_ERR_COMM, "comm is an intercommunicator, expected an intracommunicator");
    } else if (int rc = weft::mpi::hardware_color(comm, split_type, info, &part.color, &problem);
               rc != MPI_SUCCESS) {
      complain(part, rc, problem);
    }
  } else if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED) {
    complain(part, MPI_ERR_ARG,
             "split_type = " + std::to_string(split_type) +
                 ", expected MPI_COMM_TYPE_SHARED, MPI_COMM_TYPE_HW_GUIDED, "
                 "MPI_COMM_TYPE_HW_UNGUIDED or MPI_UNDEFINED");
  }
  return split(comm, kFunction, part, newcomm);
}
WEFT_MPI_ALIAS(MPI_Comm_split_type);

extern "C" int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  constexpr std::string_view kFunction = "MPI_Comm_create";
  if (int rc = check_parent(comm, kFunction); rc != MPI_SUCCESS) return rc;
  Part part;
  part.group = group;
  if (group == MPI_GROUP_NULL) {
    complain(part, MPI_ERR_GROUP, "group = MPI_GROUP_NULL, expected a group");
  }
  check_newcomm(part, newcomm);
  if (comm->is_inter()) return create_inter(comm, kFunction, part, newcomm);
  int rc = MPI_SUCCESS;
  const MPI_Comm result = meet(comm, kFunction, part, build_create, rc);
  return finish(newcomm, result, rc);
}
WEFT_MPI_ALIAS(MPI_Comm_create);
