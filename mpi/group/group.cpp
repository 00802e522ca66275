// The group calls (MPI-3.1 6.3). They are local and touch no rank state, so they work from any
// thread of a rank; their errors go to MPI_COMM_WORLD's handler, as errors tied to no
// communicator do.
#include "group/group.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "comm/communicator.h"
#include "errhan/error.h"
#include "init/world.h"
#include "util/profiling.h"

weft_mpi_group weft_mpi_group_empty;

namespace weft::mpi {

MPI_Group make_group(std::vector<int> world_ranks) {
  if (world_ranks.empty()) return MPI_GROUP_EMPTY;
  return new Group(std::move(world_ranks));
}

std::vector<int> members_of(MPI_Comm comm) {
  return comm->self ? std::vector<int>{caller_world_rank()} : comm->members;
}

GroupIndex::GroupIndex(const Group& group) {
  int largest = -1;
  for (int w : group.members) largest = std::max(largest, w);
  rank_of_world_.assign(static_cast<std::size_t>(largest + 1), -1);
  for (int r = 0; r < group.size(); ++r) rank_of_world_[group.members[r]] = r;
}

int GroupIndex::rank_of(int world_rank) const {
  if (world_rank < 0 || world_rank >= static_cast<int>(rank_of_world_.size())) return -1;
  return rank_of_world_[world_rank];
}

}  // namespace weft::mpi

namespace {

using weft::mpi::Group;
using weft::mpi::GroupIndex;
using weft::mpi::make_group;

int fail(std::string_view function, int error_class, const std::string& detail) {
  return weft::mpi::raise(MPI_COMM_WORLD, function, error_class, detail);
}

std::string ranks_text(int size) {
  if (size == 0) return "no rank (the group is empty)";
  return "0.." + std::to_string(size - 1) + " (the group has " + std::to_string(size) +
         (size == 1 ? " rank)" : " ranks)");
}

int check_group(std::string_view function, std::string_view argument, MPI_Group group) {
  if (group != MPI_GROUP_NULL) return MPI_SUCCESS;
  return fail(function, MPI_ERR_GROUP,
              std::string(argument) + " = MPI_GROUP_NULL, expected a group");
}

int check_out(std::string_view function, std::string_view argument, const void* out) {
  if (out != nullptr) return MPI_SUCCESS;
  return fail(function, MPI_ERR_ARG,
              std::string(argument) + " = NULL, expected where to store the result");
}

// The checks of a call that makes a group from `group` and a list of n ranks.
int check_list(std::string_view function, MPI_Group group, int n, const void* list,
               std::string_view list_name, MPI_Group* newgroup) {
  if (int rc = check_group(function, "group", group); rc != MPI_SUCCESS) return rc;
  if (int rc = check_out(function, "newgroup", newgroup); rc != MPI_SUCCESS) return rc;
  if (n < 0) return fail(function, MPI_ERR_ARG, "n = " + std::to_string(n) + ", expected >= 0");
  if (n > 0 && list == nullptr) {
    return fail(function, MPI_ERR_ARG,
                std::string(list_name) + " = NULL with n = " + std::to_string(n) +
                    ", expected an array of n entries");
  }
  return MPI_SUCCESS;
}

// Checks that the group ranks in `ranks` are valid and distinct (MPI_ERR_RANK otherwise).
// `name(i)` says how entry i was given: "ranks[i]" or the range it came from.
template <class Name>
int check_distinct(std::string_view function, const Group& group, const std::vector<int>& ranks,
                   Name name) {
  std::vector<int> seen_at(static_cast<std::size_t>(group.size()), -1);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const int r = ranks[i];
    if (r < 0 || r >= group.size()) {
      return fail(function, MPI_ERR_RANK,
                  name(i) + " = " + std::to_string(r) + ", expected " + ranks_text(group.size()));
    }
    if (seen_at[r] >= 0) {
      return fail(function, MPI_ERR_RANK,
                  name(i) + " = " + std::to_string(r) + " repeats " +
                      name(static_cast<std::size_t>(seen_at[r])) + ", expected distinct ranks");
    }
    seen_at[r] = static_cast<int>(i);
  }
  return MPI_SUCCESS;
}

int check_ranks(std::string_view function, const Group& group, int n, const int ranks[],
                std::vector<int>& out) {
  out.assign(ranks, ranks + n);
  return check_distinct(function, group, out,
                        [](std::size_t i) { return "ranks[" + std::to_string(i) + "]"; });
}

// The group ranks of n (first, last, stride) triplets, in order.
int expand_ranges(std::string_view function, const Group& group, int n, int ranges[][3],
                  std::vector<int>& out) {
  std::vector<int> triplet_of;  // which triplet produced each rank, for the messages
  for (int t = 0; t < n; ++t) {
    const int first = ranges[t][0];
    const int last = ranges[t][1];
    const int stride = ranges[t][2];
    const std::string name = "ranges[" + std::to_string(t) + "] = (" + std::to_string(first) +
                             ", " + std::to_string(last) + ", " + std::to_string(stride) + ")";
    if (stride == 0 || (first < last && stride < 0) || (first > last && stride > 0)) {
      return fail(function, MPI_ERR_ARG,
                  name + ", expected a stride that is not 0 and goes from first towards last");
    }
    for (int bound : {first, last}) {
      if (bound < 0 || bound >= group.size()) {
        return fail(
            function, MPI_ERR_RANK,
            name + ": rank " + std::to_string(bound) + ", expected " + ranks_text(group.size()));
      }
    }
    // 64-bit steps: first + stride may overflow an int when stride is huge.
    for (long long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
      out.push_back(static_cast<int>(r));
      triplet_of.push_back(t);
    }
  }
  return check_distinct(function, group, out, [&](std::size_t i) {
    return "rank " + std::to_string(out[i]) + " of ranges[" + std::to_string(triplet_of[i]) + "]";
  });
}

// The members of `group` at the given group ranks, or all but them.
std::vector<int> pick(const Group& group, const std::vector<int>& ranks, bool keep) {
  std::vector<int> members;
  if (keep) {
    members.reserve(ranks.size());
    for (int r : ranks) members.push_back(group.members[r]);
    return members;
  }
  std::vector<bool> excluded(static_cast<std::size_t>(group.size()), false);
  for (int r : ranks) excluded[r] = true;
  for (int r = 0; r < group.size(); ++r) {
    if (!excluded[r]) members.push_back(group.members[r]);
  }
  return members;
}

// The checks of a call that combines two groups.
int check_pair(std::string_view function, MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  if (int rc = check_group(function, "group1", group1); rc != MPI_SUCCESS) return rc;
  if (int rc = check_group(function, "group2", group2); rc != MPI_SUCCESS) return rc;
  return check_out(function, "newgroup", newgroup);
}

// Members of `from` that are (or are not) in `other`, in the order of `from`.
std::vector<int> filter(const Group& from, const Group& other, bool in_other) {
  const GroupIndex index(other);
  std::vector<int> members;
  for (int w : from.members) {
    if ((index.rank_of(w) >= 0) == in_other) members.push_back(w);
  }
  return members;
}

}  // namespace

extern "C" int PMPI_Group_size(MPI_Group group, int* size) {
  if (int rc = check_group("MPI_Group_size", "group", group); rc != MPI_SUCCESS) return rc;
  if (int rc = check_out("MPI_Group_size", "size", size); rc != MPI_SUCCESS) return rc;
  *size = group->size();
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Group_size);

extern "C" int PMPI_Group_rank(MPI_Group group, int* rank) {
  if (int rc = check_group("MPI_Group_rank", "group", group); rc != MPI_SUCCESS) return rc;
  if (int rc = check_out("MPI_Group_rank", "rank", rank); rc != MPI_SUCCESS) return rc;
  const auto& m = group->members;
  const auto it = std::find(m.begin(), m.end(), weft::mpi::caller_world_rank());
  *rank = it == m.end() ? MPI_UNDEFINED : static_cast<int>(it - m.begin());
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Group_rank);

extern "C" int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  constexpr std::string_view kFunction = "MPI_Group_incl";
  if (int rc = check_list(kFunction, group, n, ranks, "ranks", newgroup); rc != MPI_SUCCESS) {
    return rc;
  }
  std::vector<int> picked;
  if (int rc = check_ranks(kFunction, *group, n, ranks, picked); rc != MPI_SUCCESS) return rc;
  *newgroup = make_group(pick(*group, picked, true));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Group_incl);

extern "C" int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  constexpr std::string_view kFunction = "MPI_Group_excl";
  if (int rc = check_list(kFunction, group, n, ranks, "ranks", newgroup); rc != MPI_SUCCESS) {
    return rc;
  }
  std::vector<int> picked;
  if (int rc = check_ranks(kFunction, *group, n, ranks, picked); rc != MPI_SUCCESS) return rc;
  *newgroup = make_group(pick(*group, picked, false));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Group_excl);

extern "C" int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  constexpr std::string_view kFunction = "MPI_Group_range_incl";
  if (int rc = check_list(kFunction, group, n, ranges, "ranges", newgroup); rc != MPI_SUCCESS) {
    return rc;
  }
  std::vector<int> picked;
  if (int rc = expand_ranges(kFunction, *group, n, ranges, picked); rc != MPI_SUCCESS) return rc;
  *newgroup = make_group(pick(*group, picked, true));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Group_range_incl);

extern "C" int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  constexpr std::string_view kFunction = "MPI_Group_range_excl";
  if (int rc = check_list(kFunction, group, n, ranges, "ranges", newgroup); rc != MPI_SUCCESS) {
    return rc;
  }
  std::vector<int> picked;
  if (int rc = expand_ranges(kFunction, *group, n, ranges, picked); rc != MPI_SUCCESS) return rc;
  *newgroup = make_group(pick(*group, picked, false));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Group_range_excl);

extern "C" int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  if (int rc = check_pair("MPI_Group_union", group1, group2, newgroup); rc != MPI_SUCCESS) {
    return rc;
  }
  std::vector<int> members = group1->members;
  const std::vector<int> more = filter(*group2, *group1, false);
  members.insert(members.end(), more.begin(), more.end());
  *newgroup = make_group(std::move(members));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Group_union);

extern "C" int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  if (int rc = check_pair("MPI_Group_intersection", group1, group2, newgroup); rc != MPI_SUCCESS) {
    return rc;
  }
  *newgroup = make_group(filter(*group1, *group2, true));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Group_intersection);

extern "C" int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  if (int rc = check_pair("MPI_Group_difference", group1, group2, newgroup); rc != MPI_SUCCESS) {
    return rc;
  }
  *newgroup = make_group(filter(*group1, *group2, false));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Group_difference);

extern "C" int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[],
                                          MPI_Group group2, int ranks2[]) {
  constexpr std::string_view kFunction = "MPI_Group_translate_ranks";
  if (int rc = check_group(kFunction, "group1", group1); rc != MPI_SUCCESS) return rc;
  if (int rc = check_group(kFunction, "group2", group2); rc != MPI_SUCCESS) return rc;
  if (n < 0) return fail(kFunction, MPI_ERR_ARG, "n = " + std::to_string(n) + ", expected >= 0");
  if (n > 0 && (ranks1 == nullptr || ranks2 == nullptr)) {
    return fail(kFunction, MPI_ERR_ARG,
                std::string(ranks1 == nullptr ? "ranks1" : "ranks2") +
                    " = NULL with n = " + std::to_string(n) + ", expected an array of n ranks");
  }
  for (int i = 0; i < n; ++i) {
    const int r = ranks1[i];
    if (r != MPI_PROC_NULL && (r < 0 || r >= group1->size())) {
      return fail(kFunction, MPI_ERR_RANK,
                  "ranks1[" + std::to_string(i) + "] = " + std::to_string(r) + ", expected " +
                      ranks_text(group1->size()) + " or MPI_PROC_NULL");
    }
  }
  const GroupIndex index(*group2);
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    const int r = index.rank_of(group1->members[ranks1[i]]);
    ranks2[i] = r < 0 ? MPI_UNDEFINED : r;
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Group_translate_ranks);

extern "C" int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  constexpr std::string_view kFunction = "MPI_Group_compare";
  if (int rc = check_group(kFunction, "group1", group1); rc != MPI_SUCCESS) return rc;
  if (int rc = check_group(kFunction, "group2", group2); rc != MPI_SUCCESS) return rc;
  if (int rc = check_out(kFunction, "result", result); rc != MPI_SUCCESS) return rc;
  if (group1->members == group2->members) {
    *result = MPI_IDENT;
  } else if (group1->size() == group2->size() &&
             static_cast<int>(filter(*group1, *group2, true).size()) == group1->size()) {
    *result = MPI_SIMILAR;
  } else {
    *result = MPI_UNEQUAL;
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Group_compare);

// MPI-3.1 allows freeing MPI_GROUP_EMPTY like any group (the handle is reset); the predefined
// object itself stays.
extern "C" int PMPI_Group_free(MPI_Group* group) {
  if (int rc = check_out("MPI_Group_free", "group", group); rc != MPI_SUCCESS) return rc;
  if (int rc = check_group("MPI_Group_free", "*group", *group); rc != MPI_SUCCESS) return rc;
  MPI_Group freed = *group;
  *group = MPI_GROUP_NULL;
  // acq_rel: the last release must see every other holder's use of the group before deleting.
  if (freed != MPI_GROUP_EMPTY && freed->references.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    delete freed;
  }
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Group_free);

extern "C" int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  if (int rc = weft::mpi::check_initialized("MPI_Comm_group"); rc != MPI_SUCCESS) return rc;
  if (int rc = weft::mpi::check_comm(comm, "MPI_Comm_group"); rc != MPI_SUCCESS) return rc;
  if (group == nullptr) {
    return weft::mpi::raise(comm, "MPI_Comm_group", MPI_ERR_ARG,
                            "group = NULL, expected where to store the group");
  }
  *group = make_group(weft::mpi::members_of(comm));
  return MPI_SUCCESS;
}
WEFT_MPI_ALIAS(MPI_Comm_group);
