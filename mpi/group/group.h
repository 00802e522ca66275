// Groups (MPI_Group): ordered sets of ranks, named by their world ranks. A group is a local
// object of the rank that made it; it refers to no communicator, so freeing one never affects a
// communicator built from it.
#pragma once

#include <atomic>
#include <vector>

#include "mpi.h"

struct weft_mpi_group {
  weft_mpi_group() = default;
  explicit weft_mpi_group(std::vector<int> world_ranks) : members(std::move(world_ranks)) {}

  std::vector<int> members;  // group rank -> world rank
  // Handles to this object that are not freed yet; MPI_GROUP_EMPTY is never deleted.
  std::atomic<int> references{1};

  int size() const { return static_cast<int>(members.size()); }
};

namespace weft::mpi {

using Group = weft_mpi_group;

// A new group of these world ranks (MPI_GROUP_EMPTY when there are none, as MPI returns it).
MPI_Group make_group(std::vector<int> world_ranks);

// The world ranks of a communicator's members in comm rank order, as the calling rank sees them
// (MPI_COMM_SELF: the caller alone).
std::vector<int> members_of(MPI_Comm comm);

// Group rank of each world rank: built once per call, so that a call on groups of n and m ranks
// costs O(n + m) rather than O(n * m).
class GroupIndex {
 public:
  explicit GroupIndex(const Group& group);
  // The group rank of `world_rank`, or -1 when it is not a member.
  int rank_of(int world_rank) const;

 private:
  std::vector<int> rank_of_world_;
};

}  // namespace weft::mpi
